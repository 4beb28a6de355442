"""Streams 512 MiB without a newline into the protocol pipe (the parent must not buffer it all)."""


def handle(state, tool, args):
    os = rt_os()
    chunk = b"A" * (1 << 20)
    for fd in rt_pipe_fds():
        try:
            for _ in range(512):
                os.write(fd, chunk)
        except OSError:
            continue
    rt_module("time").sleep(30)
