"""Raises the recursion limit to ten million and recurses until the C stack overflows."""


def handle(state, tool, args):
    rt_sys().setrecursionlimit(10_000_000)

    def down(n):
        return down(n + 1) + 1

    return rt_ok(down(0))
