"""CompoWorld worlds in the tools agent researchers already use: each adapter is a thin layer over the one
environment (:class:`~compoworld_assets.engine.rollout.environment.ToolEnvironment`) and the stored tables."""
