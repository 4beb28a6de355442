"""Graph-backed assets whose long job runs outside the ``duckdb`` pool.

DuckDB allows one writer, so every step that opens the file is in pool ``duckdb`` (one slot). A pool
is held for a whole step, so an asset that reads tables, runs for an hour (training, serving a model)
and writes a table is split into ops: a short op in the pool reads what the job needs, the long op
holds no slot, and a short op in the pool writes the result. The ops hand their values over through
:data:`HANDOFF_IO_MANAGER` (pickles under the Dagster instance's storage folder, so a multiprocess
run and a retry see them), never through DuckDB.
"""

import dagster as dg

HANDOFF_IO_MANAGER = "handoff_io_manager"
HANDOFF_RESOURCES = {HANDOFF_IO_MANAGER: dg.FilesystemIOManager().get_resource_definition()}


def handoff_out(description: str) -> dg.Out:
    return dg.Out(io_manager_key=HANDOFF_IO_MANAGER, description=description)


def config_to(*ops: str, config_class: type[dg.Config]) -> dg.ConfigMapping:
    """The graph asset takes ``config_class`` as its own config (``ops: {<asset>: {config: ...}}``, as a
    single-op asset does) and hands it to ``ops``."""
    return dg.ConfigMapping(config_fn=lambda values: {op: {"config": dict(values)} for op in ops},
                            config_schema=config_class.to_config_schema())
