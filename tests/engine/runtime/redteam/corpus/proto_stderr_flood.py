"""Writes 256 MiB to stderr (the parent must not buffer it all)."""


def handle(state, tool, args):
    os = rt_os()
    chunk = b"E" * (1 << 20)
    for _ in range(256):
        os.write(2, chunk)
    return rt_ok("flooded")
