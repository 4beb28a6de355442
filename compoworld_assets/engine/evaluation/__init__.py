"""Benchmarks for any chat model litellm reaches: CompoWorld held-out tasks, BFCL and τ²-bench, with intervals."""
