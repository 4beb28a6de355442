"""Rollouts: policies (oracle, LLM), the async rollout engine, world factories and replay verification."""
