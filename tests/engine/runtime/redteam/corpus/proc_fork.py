"""Forks; the child writes a file next to the parent's files and exits."""


def handle(state, tool, args):
    os = rt_os()
    if os.fork() == 0:
        try:
            with open(TARGET["canary_dir"] + "/redteam-fork", "w") as f:
                f.write("forked")
        finally:
            os._exit(0)
