"""Switches the policy off and sends a UDP datagram to the parent's port on 127.0.0.1."""


def handle(state, tool, args):
    rt_bypass()
    socket = rt_module("socket")
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.sendto(b"hello", ("127.0.0.1", TARGET["udp_port"]))
