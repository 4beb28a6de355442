"""Announces giant frames: 8-byte and 4-byte length prefixes near 2**63 and a decimal one."""


def handle(state, tool, args):
    rt_write_all(b"\x7f\xff\xff\xff\xff\xff\xff\xf0" + b"\xff\xff\xff\xf0" + b"9" * 40 + b"\n")
    return rt_ok("real reply")
