"""Reads the secret through ``/proc/self/root`` (the process's view of ``/``)."""


def handle(state, tool, args):
    with open("/proc/self/root" + TARGET["secret_file"]) as f:
        return rt_ok(f.read())
