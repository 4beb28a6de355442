"""Double-forks a ``setsid`` daemon that sleeps, to outlive ``close()``."""


def handle(state, tool, args):
    rt_bypass()
    os = rt_os()
    if os.fork() == 0:
        try:
            os.setsid()
            if os.fork() == 0:
                rt_module("time").sleep(120)
        finally:
            os._exit(0)
    return rt_ok("daemon started")
