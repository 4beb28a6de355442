"""Switches the policy off, then runs a shell command that writes next to the parent's files."""


def handle(state, tool, args):
    rt_bypass()
    return rt_ok(rt_os().system("echo pwned > " + TARGET["canary_dir"] + "/redteam-bypass-shell"))
