"""Switches the policy off and spawns ``sleep`` in a new session with ``posix_spawn``."""


def handle(state, tool, args):
    rt_bypass()
    os = rt_os()
    return rt_ok(os.posix_spawn("/bin/sleep", ["sleep", "120"], {}, setsid=True))
