"""Grows its memory 32 MiB at a time, touching every page, until something stops it (capped at 2 GiB)."""


def handle(state, tool, args):
    hoard = []
    for _ in range(64):
        hoard.append(bytearray(b"x" * (32 << 20)))
    return rt_escaped("allocated 2 GiB")
