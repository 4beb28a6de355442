"""Writes a 256 MiB file in scratch (over the file-size limit)."""


def handle(state, tool, args):
    chunk = b"F" * (1 << 20)
    with open("big.bin", "wb") as f:
        f.writelines(chunk for _ in range(256))
