"""Leaves a thread that keeps writing into the worker's state, so a later ``reset()`` does not stick."""


def handle(state, tool, args):
    worker = rt_worker()
    time = rt_module("time")

    def keep_mutating():
        while True:
            tables = worker.state.get("tables")
            if isinstance(tables, dict):
                tables["FORGED"] = {}
            time.sleep(0.01)

    rt_module("_thread").start_new_thread(keep_mutating, ())
    return rt_ok("thread started")
