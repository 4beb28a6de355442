"""Moves the parent's DuckDB file into scratch with ``os.rename(src_dir_fd=...)``."""


def handle(state, tool, args):
    os = rt_os()
    directory, relative = rt_dirfd_route(TARGET["duckdb_file"])
    os.rename(relative, "stolen.duckdb", src_dir_fd=directory)
