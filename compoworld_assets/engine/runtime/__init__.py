"""Executing services: typed state, the sandboxed executor and the service runtime."""
