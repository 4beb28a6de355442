"""Recurses without end (Python's own recursion limit)."""


def handle(state, tool, args):
    def down(n):
        return down(n + 1)

    return down(0)
