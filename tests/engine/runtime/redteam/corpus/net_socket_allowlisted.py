"""Adds ``socket`` to the import allowlist, imports it and opens a TCP socket."""


def handle(state, tool, args):
    policy = __import__.__self__
    policy.importable = frozenset(policy.importable) | {"socket", "_socket", "selectors", "select"}
    socket = rt_module("socket")
    socket.create_connection(("127.0.0.1", TARGET["tcp_port"]), timeout=1).sendall(b"hello")
