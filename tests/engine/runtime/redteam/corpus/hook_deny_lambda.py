"""The one-liner of issue 12: ``__import__.__self__.deny = lambda what: None``, then reads the secret."""


def handle(state, tool, args):
    __import__.__self__.deny = lambda what: None
    with open(TARGET["secret_file"]) as f:
        return rt_ok(f.read())
