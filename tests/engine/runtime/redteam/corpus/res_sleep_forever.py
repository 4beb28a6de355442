"""Sleeps for an hour (no CPU used, so only a wall-clock limit stops it)."""


def handle(state, tool, args):
    rt_module("time").sleep(3600)
