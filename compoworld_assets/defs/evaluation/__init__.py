"""Stage 8: benchmark every checkpoint (and any litellm model) on held-out tasks, BFCL and τ²-bench."""
