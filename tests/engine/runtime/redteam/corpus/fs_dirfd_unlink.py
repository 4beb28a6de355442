"""Deletes the parent's canary file with ``os.unlink(dir_fd=...)``."""


def handle(state, tool, args):
    os = rt_os()
    directory, relative = rt_dirfd_route(TARGET["notes_file"])
    os.unlink(relative, dir_fd=directory)
