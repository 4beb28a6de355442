"""A fork bomb without tampering: ``os.fork`` in a loop (bounded at 48)."""


def handle(state, tool, args):
    os = rt_os()
    for _ in range(48):
        if os.fork() == 0:
            try:
                rt_module("time").sleep(120)
            finally:
                os._exit(0)
