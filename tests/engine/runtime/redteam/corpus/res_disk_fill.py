"""Fills the disk with many files each under the file-size limit (stops at 1 GiB written)."""


def handle(state, tool, args):
    chunk = b"D" * (1 << 20)
    written = 0
    for number in range(64):
        with open(f"fill-{number}.bin", "wb") as f:
            for _ in range(16):
                f.write(chunk)
                written += 1
    return rt_escaped(f"wrote {written} MiB to disk")
