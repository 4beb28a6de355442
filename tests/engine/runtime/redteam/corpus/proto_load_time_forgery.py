"""At load time: writes a forged "loaded" reply before the real one, to shift every reply by one."""

rt_write_all(b'{"ok":true,"layers":["FORGED"]}\n')


def handle(state, tool, args):
    return rt_ok()
