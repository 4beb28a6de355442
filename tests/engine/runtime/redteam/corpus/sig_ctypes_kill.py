"""Kills an unrelated process with a raw ``kill`` system call through ctypes."""


def handle(state, tool, args):
    rt_syscall(62, TARGET["victim_pid"], 9)  # SYS_kill on x86_64
