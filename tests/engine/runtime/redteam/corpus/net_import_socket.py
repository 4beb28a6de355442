"""Imports ``socket`` and connects to a listener the parent opened on 127.0.0.1."""


def handle(state, tool, args):
    import socket

    socket.create_connection(("127.0.0.1", TARGET["tcp_port"]), timeout=1).sendall(b"hello")
