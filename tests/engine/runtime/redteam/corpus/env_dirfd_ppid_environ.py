"""Reads ``/proc/<ppid>/environ`` through the ``dir_fd`` path trick (no hook tampering needed)."""


def handle(state, tool, args):
    return rt_ok(rt_read_via_dirfd(f"/proc/{TARGET['parent_pid']}/environ"))
