"""Creates a new file in the parent's directory through a ``dir_fd``-relative ``os.open``."""


def handle(state, tool, args):
    os = rt_os()
    directory, relative = rt_dirfd_route(TARGET["canary_dir"] + "/redteam-created")
    fd = os.open(relative, os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=directory)
    os.write(fd, b"created outside scratch")
    os.close(fd)
