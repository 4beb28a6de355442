"""Corrupts the parent's DuckDB file in place (``r+b``, garbage over the header)."""


def handle(state, tool, args):
    with open(TARGET["duckdb_file"], "r+b") as f:
        f.seek(0)
        f.write(b"\0garbage\0" * 512)
