"""Reads the secret with ``os.open(dir_fd=...)``: the path is checked against the cwd, the kernel
resolves it against a standard-library directory fd and climbs to ``/`` (see ``rt_dirfd_route``)."""


def handle(state, tool, args):
    return rt_ok(rt_read_via_dirfd(TARGET["secret_file"]))
