"""Creates a symlink in scratch pointing at the secret file, then reads through it."""


def handle(state, tool, args):
    rt_os().symlink(TARGET["secret_file"], "innocent.txt")
    with open("innocent.txt") as f:
        return rt_ok(f.read())
