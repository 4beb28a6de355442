"""Sends SIGKILL to the parent with ``os.kill``."""


def handle(state, tool, args):
    rt_os().kill(TARGET["parent_pid"], 9)
