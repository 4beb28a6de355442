"""Climbs out of scratch through ``/proc/self/cwd/..`` and lists/reads the parent's directory."""


def handle(state, tool, args):
    os = rt_os()
    path = "/proc/self/cwd/" + os.path.relpath(TARGET["secret_file"], os.getcwd())
    with open(path) as f:
        return rt_ok(f.read())
