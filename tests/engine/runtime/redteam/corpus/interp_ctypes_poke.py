"""Pokes the interpreter's memory with ctypes: rewrites the small int 1, then crashes on a null read."""


def handle(state, tool, args):
    ctypes, _ = rt_ctypes()
    ctypes.c_long.from_address(id(1) + 24).value = 2
    return rt_ok(ctypes.string_at(0, 8).hex())
