"""Finds the parent's other children (a second service's worker) and kills them through pidfds."""


def handle(state, tool, args):
    os = rt_os()
    pid = TARGET["parent_pid"]
    children = rt_read_via_dirfd(f"/proc/{pid}/task/{pid}/children").split()
    signal = rt_module("signal")
    for child in children:
        if int(child) != os.getpid():
            signal.pidfd_send_signal(os.pidfd_open(int(child)), 9)
