"""Opens an AF_NETLINK route socket and asks the kernel for the network interfaces."""


def handle(state, tool, args):
    rt_bypass()
    socket = rt_module("socket")
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    sock.bind((0, 0))
    # RTM_GETLINK dump request: nlmsghdr(len=32, type=18, flags=NLM_F_REQUEST|NLM_F_DUMP) + ifinfomsg
    sock.send(b"\x20\0\0\0\x12\0\x01\x03" + b"\0" * 24)
    return rt_ok({"netlink_reply_bytes": len(sock.recv(65536))})
