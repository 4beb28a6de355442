"""Writes bytes that are not a reply at all to every pipe fd."""


def handle(state, tool, args):
    rt_write_all(b"\x00\xffnot a reply {{{\n")
    return rt_ok("real reply")
