"""The agent interface: the tools an agent sees over a mounted world (gateway or direct mode)."""
