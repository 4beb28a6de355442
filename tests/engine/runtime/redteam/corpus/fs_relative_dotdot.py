"""Reads the secret file through a relative ``../..`` path computed from the scratch directory."""


def handle(state, tool, args):
    os = rt_os()
    with open(os.path.relpath(TARGET["secret_file"], os.getcwd())) as f:
        return rt_ok(f.read())
