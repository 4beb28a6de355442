"""The environment engine: specs, synthesis, runtime, verification and world model.

Pure Python. Nothing under this package may import Dagster (tests/engine/test_purity.py).
"""
