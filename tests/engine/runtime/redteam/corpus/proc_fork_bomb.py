"""A (bounded) fork bomb: 48 sleeping children, each in its own session."""


def handle(state, tool, args):
    rt_bypass()
    os = rt_os()
    for _ in range(48):
        if os.fork() == 0:
            try:
                os.setsid()
                rt_module("time").sleep(120)
            finally:
                os._exit(0)
    return rt_ok("forked 48")
