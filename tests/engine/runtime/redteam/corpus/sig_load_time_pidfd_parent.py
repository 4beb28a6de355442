"""At load time: kills the parent through a pidfd before the executor has even answered."""

rt_module("signal").pidfd_send_signal(rt_os().pidfd_open(TARGET["parent_pid"]), 9)


def handle(state, tool, args):
    return rt_ok()
