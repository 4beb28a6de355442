"""Starts 2,000 sleeping threads."""


def handle(state, tool, args):
    thread, time = rt_module("_thread"), rt_module("time")
    for _ in range(2000):
        thread.start_new_thread(time.sleep, (120,))
    return rt_ok("2000 threads")
