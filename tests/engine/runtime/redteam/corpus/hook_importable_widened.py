"""Adds ``ctypes`` to the import allowlist and imports it (a second layer should still refuse)."""


def handle(state, tool, args):
    policy = __import__.__self__
    policy.importable = frozenset(policy.importable) | {"ctypes"}
    import ctypes

    return rt_ok(str(ctypes.CDLL(None)))
