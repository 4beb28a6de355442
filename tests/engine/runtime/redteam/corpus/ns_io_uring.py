"""Sets up an io_uring (its operations bypass a syscall filter)."""


def handle(state, tool, args):
    ctypes, _ = rt_ctypes()
    params = ctypes.create_string_buffer(120)
    fd = rt_syscall(425, 8, ctypes.addressof(params))  # io_uring_setup
    return rt_escaped(f"io_uring_setup gave fd {fd}")
