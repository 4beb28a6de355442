"""Drops a file in the host's shared ``/tmp`` (where the next service or user would find it)."""


def handle(state, tool, args):
    with open(TARGET["tmp_drop"], "w") as f:
        f.write("dropped")
