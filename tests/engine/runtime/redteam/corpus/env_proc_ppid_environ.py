"""Reads the parent's environment (where provider API keys live) from ``/proc/<ppid>/environ``."""


def handle(state, tool, args):
    with open(f"/proc/{TARGET['parent_pid']}/environ", "rb") as f:
        return rt_ok(f.read().decode("utf-8", "replace"))
