"""Differential testing of synthesized services against human-written reference backends (BFCL).

Pure engine code: ``bfcl_eval`` is imported only when a run loads BFCL data or backends.
"""

from compoworld_assets.engine.differential.bfcl import BACKENDS, BfclEntry, ReferenceBackend, bfcl_available
from compoworld_assets.engine.differential.calls import CallParseError, ParsedCall, bind_arguments, parse_call
from compoworld_assets.engine.differential.compare import call_agreement, plain, result_matches, values_equal
from compoworld_assets.engine.differential.harness import (
    BackendReport,
    CallComparison,
    SequenceComparison,
    ToolTyping,
    run_backend,
    run_differential,
)
from compoworld_assets.engine.differential.state_adapter import adapt_state, comparable_tables, plan_mapping

__all__ = [
    "BACKENDS",
    "BackendReport",
    "BfclEntry",
    "CallComparison",
    "CallParseError",
    "ParsedCall",
    "ReferenceBackend",
    "SequenceComparison",
    "ToolTyping",
    "adapt_state",
    "bfcl_available",
    "bind_arguments",
    "call_agreement",
    "comparable_tables",
    "parse_call",
    "plain",
    "plan_mapping",
    "result_matches",
    "run_backend",
    "run_differential",
    "values_equal",
]
