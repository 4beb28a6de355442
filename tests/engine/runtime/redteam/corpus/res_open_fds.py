"""Opens files until the fd table is full."""


def handle(state, tool, args):
    os = rt_os()
    fds = [os.open(f"fd-{n}", os.O_CREAT | os.O_WRONLY, 0o600) for n in range(100_000)]
    return rt_escaped(f"opened {len(fds)} files")
