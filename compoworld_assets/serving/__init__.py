"""Serving checkpoints behind an OpenAI-compatible API (heavy imports happen only when a model loads)."""
