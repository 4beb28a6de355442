"""Returns two million tiny objects (cheap to build, expensive to decode and validate)."""


def handle(state, tool, args):
    return rt_ok([{}] * 2_000_000)
