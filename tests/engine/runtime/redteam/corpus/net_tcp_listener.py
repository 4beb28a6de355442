"""Switches the policy off and connects to the parent's TCP listener on 127.0.0.1."""


def handle(state, tool, args):
    rt_bypass()
    socket = rt_module("socket")
    socket.create_connection(("127.0.0.1", TARGET["tcp_port"]), timeout=1).sendall(b"hello")
    return rt_escaped(f"connected to 127.0.0.1:{TARGET['tcp_port']}")
