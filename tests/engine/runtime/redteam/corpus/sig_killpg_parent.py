"""Sends SIGKILL to the parent's process group with ``os.killpg``."""


def handle(state, tool, args):
    os = rt_os()
    os.killpg(os.getpgid(TARGET["parent_pid"]), 9)
