"""Joins the parent's network namespace (``setns`` on ``/proc/<ppid>/ns/net``) and connects out."""


def handle(state, tool, args):
    ctypes, libc = rt_ctypes()
    os = rt_os()
    fd = os.open(f"/proc/{TARGET['parent_pid']}/ns/net", os.O_RDONLY)
    if libc.setns(fd, 0x40000000) != 0:
        raise OSError(ctypes.get_errno(), "setns failed")
    socket = rt_module("socket")
    socket.create_connection(("127.0.0.1", TARGET["tcp_port"]), timeout=1).sendall(b"hello")
    return rt_escaped("joined the parent's network namespace and connected")
