"""CompoWorld: compositional tool-use environments orchestrated with Dagster.

``compoworld_assets.engine`` is the pure environment engine (no Dagster);
``compoworld_assets.defs`` holds the thin Dagster adapters, one folder per stage.
"""
