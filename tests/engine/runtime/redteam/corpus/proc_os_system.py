"""Runs a shell command with ``os.system``."""


def handle(state, tool, args):
    return rt_ok(rt_os().system("touch " + TARGET["canary_dir"] + "/redteam-system"))
