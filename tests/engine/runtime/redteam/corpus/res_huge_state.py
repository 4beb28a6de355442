"""Stores 48 MiB in the state, which the parent mirrors after every changing call."""


def handle(state, tool, args):
    state["tables"]["junk"] = {"blob": {"id": "blob", "data": "S" * (48 << 20)}}
    return rt_ok("stored")
