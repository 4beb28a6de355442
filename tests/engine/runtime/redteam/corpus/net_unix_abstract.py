"""Connects to the parent's abstract-namespace AF_UNIX socket."""


def handle(state, tool, args):
    rt_bypass()
    socket = rt_module("socket")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect("\0" + TARGET["abstract_socket"])
    sock.sendall(b"hello")
    return rt_escaped("connected to the abstract socket")
