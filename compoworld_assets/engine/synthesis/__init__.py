"""Synthesizers: from a service spec to an executable Python module."""
