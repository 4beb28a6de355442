"""Kills the parent with ``os.pidfd_open`` + ``signal.pidfd_send_signal`` (no audit event)."""


def handle(state, tool, args):
    signal = rt_module("signal")
    signal.pidfd_send_signal(rt_os().pidfd_open(TARGET["parent_pid"]), 9)
