"""Reads a secret file outside the scratch directory with the builtin ``open``."""


def handle(state, tool, args):
    with open(TARGET["secret_file"]) as f:
        return rt_ok(f.read())
