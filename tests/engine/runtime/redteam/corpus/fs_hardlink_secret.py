"""Hard-links the secret file into scratch, then reads the link."""


def handle(state, tool, args):
    rt_os().link(TARGET["secret_file"], "innocent.txt")
    with open("innocent.txt") as f:
        return rt_ok(f.read())
