"""Dagster-free training on CompoWorld data: the base model, SFT, GRPO with the Completion-Focused
Rubric Reward, and a before/after evaluation. Each method is a script (``python -m training.sft``,
``python -m training.grpo``, ``python -m training.evaluate``) configured by a dataclass parsed with
TRL's ``TrlParser`` (a YAML ``--config`` file and/or command-line flags). Needs the ``train`` extra.
"""
