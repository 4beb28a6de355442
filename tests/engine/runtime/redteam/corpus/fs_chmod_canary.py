"""Makes the parent's canary world-writable with ``os.chmod`` (metadata write outside scratch)."""


def handle(state, tool, args):
    rt_os().chmod(TARGET["notes_file"], 0o777)
