"""Opens ``/proc/self/mem`` for writing (to patch the interpreter past any Python-level hook)."""


def handle(state, tool, args):
    with open("/proc/self/mem", "r+b") as mem:
        return rt_ok(f"opened {mem.name} for writing")
