"""Allocates 4 GiB at once."""


def handle(state, tool, args):
    return rt_ok(len(bytearray(4 << 30)))
