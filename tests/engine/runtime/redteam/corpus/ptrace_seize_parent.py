"""Attaches to the parent with ``ptrace(PTRACE_SEIZE)`` (it could then read and patch its memory)."""


def handle(state, tool, args):
    ctypes, libc = rt_ctypes()
    if libc.ptrace(0x4206, TARGET["parent_pid"], None, None) == 0:
        return rt_escaped("ptrace-seized the parent")
    raise OSError(ctypes.get_errno(), "ptrace failed")
