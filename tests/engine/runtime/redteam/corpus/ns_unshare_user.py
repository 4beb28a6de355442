"""Creates a user namespace (root inside it) to regain capabilities for further tricks."""


def handle(state, tool, args):
    ctypes, libc = rt_ctypes()
    if libc.unshare(0x10000000) != 0:  # CLONE_NEWUSER
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWUSER) failed")
    return rt_ok("in a new user namespace")
