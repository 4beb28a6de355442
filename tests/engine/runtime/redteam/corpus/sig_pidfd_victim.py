"""Kills an unrelated process of the same user (a victim the test started) through a pidfd."""


def handle(state, tool, args):
    signal = rt_module("signal")
    signal.pidfd_send_signal(rt_os().pidfd_open(TARGET["victim_pid"]), 9)
