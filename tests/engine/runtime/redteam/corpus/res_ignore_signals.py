"""Ignores SIGXCPU, SIGTERM and SIGINT, blocks them, then spins."""


def handle(state, tool, args):
    signal = rt_module("signal")
    for sig in (signal.SIGXCPU, signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGXCPU, signal.SIGTERM])
    while True:
        pass
