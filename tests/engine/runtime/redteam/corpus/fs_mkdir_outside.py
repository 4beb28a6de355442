"""Creates a directory next to the parent's files."""


def handle(state, tool, args):
    rt_os().mkdir(TARGET["canary_dir"] + "/redteam-mkdir")
