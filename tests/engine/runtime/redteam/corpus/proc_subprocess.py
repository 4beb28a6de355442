"""Runs a shell command with ``subprocess``."""


def handle(state, tool, args):
    import subprocess

    return rt_ok(subprocess.run(["touch", TARGET["canary_dir"] + "/redteam-subprocess"], check=False).returncode)
