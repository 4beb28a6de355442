"""Writes a reply nested 200,000 levels deep (a recursive decoder in the parent overflows)."""


def handle(state, tool, args):
    rt_write_all(b'{"ok":true,"result":' + b"[" * 200_000 + b"]" * 200_000 + b"}\n")
    return rt_ok("real reply")
