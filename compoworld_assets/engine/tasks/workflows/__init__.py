"""Workflow tasks: work a professional would be handed, as patterns over parts any spec can play.

``casting`` reads the parts from specs (case kinds, channels, rulebooks, follow-ups, witnesses), ``patterns``
holds the patterns and their words as data, ``drafting`` picks a round's drafts, ``build`` shapes a draft's
world and runs its steps, ``instantiate`` completes the rubric and the level (docs/architecture.md, *Workflows*).
"""
