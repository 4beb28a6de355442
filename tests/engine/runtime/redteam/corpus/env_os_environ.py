"""Returns its whole environment (``os.environ``): no secret of the parent may be in it."""


def handle(state, tool, args):
    return rt_ok(dict(rt_os().environ))
