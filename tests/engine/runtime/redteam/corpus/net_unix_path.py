"""Connects to an AF_UNIX socket the parent listens on in its own directory (not network-namespaced)."""


def handle(state, tool, args):
    rt_bypass()
    socket = rt_module("socket")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(TARGET["unix_socket"])
    sock.sendall(b"hello")
    return rt_escaped("connected to " + TARGET["unix_socket"])
