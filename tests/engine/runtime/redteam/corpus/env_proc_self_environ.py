"""Reads ``/proc/self/environ`` (the environment block the process was started with)."""


def handle(state, tool, args):
    with open("/proc/self/environ", "rb") as f:
        return rt_ok(f.read().decode("utf-8", "replace"))
