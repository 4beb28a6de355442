"""Starts ``/bin/sh`` with ``os.posix_spawn``."""


def handle(state, tool, args):
    os = rt_os()
    command = "touch " + TARGET["canary_dir"] + "/redteam-spawn"
    return rt_ok(os.posix_spawn("/bin/sh", ["sh", "-c", command], {}))
