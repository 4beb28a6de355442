"""Spins forever."""


def handle(state, tool, args):
    while True:
        pass
