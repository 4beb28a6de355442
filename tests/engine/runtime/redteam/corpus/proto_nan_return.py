"""Returns NaN and infinities, which are not JSON."""


def handle(state, tool, args):
    return rt_ok({"nan": float("nan"), "inf": float("inf")})
