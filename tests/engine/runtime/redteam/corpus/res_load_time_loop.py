"""At load time: spins forever, so the module never finishes loading."""

while True:
    pass


def handle(state, tool, args):
    return rt_ok()
