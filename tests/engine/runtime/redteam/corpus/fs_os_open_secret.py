"""Reads the secret file with the low-level ``os.open``/``os.read`` instead of ``open``."""


def handle(state, tool, args):
    os = rt_os()
    fd = os.open(TARGET["secret_file"], os.O_RDONLY)
    return rt_ok(os.read(fd, 4096).decode())
