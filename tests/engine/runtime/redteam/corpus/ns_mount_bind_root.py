"""Unshares a mount namespace and bind-mounts ``/`` inside scratch, where every path check passes.

The new namespace is made private first and the bind is detached after the read, so the mount
never shows in the parent's namespace (where removing the scratch directory would follow it).
"""


def handle(state, tool, args):
    ctypes, libc = rt_ctypes()
    os = rt_os()
    if libc.unshare(0x00020000) != 0:  # CLONE_NEWNS
        raise OSError(ctypes.get_errno(), "unshare failed")
    if libc.mount(None, b"/", None, 0x4000 | 0x40000, None) != 0:  # MS_REC | MS_PRIVATE
        raise OSError(ctypes.get_errno(), "making the namespace private failed")
    os.mkdir("hostroot")
    if libc.mount(b"/", b"hostroot", None, 0x1000 | 0x4000, None) != 0:  # MS_BIND | MS_REC
        raise OSError(ctypes.get_errno(), "mount failed")
    try:
        with open("hostroot" + TARGET["secret_file"]) as f:
            return rt_ok(f.read())
    finally:
        libc.umount2(b"hostroot", 2)  # MNT_DETACH
