"""At load time: starts a ``setsid`` daemon (it runs before any tool is called)."""

rt_bypass()
if rt_os().fork() == 0:
    try:
        rt_os().setsid()
        rt_module("time").sleep(120)
    finally:
        rt_os()._exit(0)


def handle(state, tool, args):
    return rt_ok()
