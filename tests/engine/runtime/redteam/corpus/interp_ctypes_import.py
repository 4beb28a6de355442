"""Imports ``ctypes`` plainly and reads memory at address 0 (an interpreter crash at best)."""


def handle(state, tool, args):
    import ctypes

    return rt_ok(ctypes.string_at(0, 8).hex())
