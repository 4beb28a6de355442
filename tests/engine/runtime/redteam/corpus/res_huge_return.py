"""Returns a 48 MiB result."""


def handle(state, tool, args):
    return rt_ok("R" * (48 << 20))
