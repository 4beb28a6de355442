"""At load time: switches the policy off and connects to the parent's AF_UNIX socket."""

rt_bypass()
_rt_sock = rt_module("socket").socket(rt_module("socket").AF_UNIX, rt_module("socket").SOCK_STREAM)
_rt_sock.connect(TARGET["unix_socket"])
_rt_sock.sendall(b"hello from load time")


def handle(state, tool, args):
    return rt_escaped("connected to the parent's AF_UNIX socket at load time")
