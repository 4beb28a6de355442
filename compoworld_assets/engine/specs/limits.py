"""Size and time bounds every imported spec is held to.

The defaults sit well above what real specs need: on the 2,639 APIs.guru OpenAPI documents
(``benchmarks/import_apis_guru.py``) the deepest document nests 35 levels, the largest has
1.5 M JSON nodes (47 MB), the longest string is 518 k characters, the largest integer has
20 digits, the largest enum 2,477 values, the widest tool 675 parameters, and one spec has
2,958 operations (Microsoft Graph, with 22 k, is the only one cut by :attr:`max_tools`).
Beyond them lie inputs that only crash or stall the stages after import: Python refuses to
convert integers of more than 4,300 digits, nesting past ~1,000 levels overflows the stack,
and a tool with 20,000 parameters generates 20,000 verification cases of 20,000 arguments each.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ImportLimits:
    max_file_bytes: int = 64 * 1024 * 1024
    """A larger file is not read (the largest APIs.guru document is 47 MB)."""
    max_depth: int = 64
    """A document nested deeper is rejected (YAML's self-referencing anchors included)."""
    max_nodes: int = 4_000_000
    """A document with more JSON values (YAML aliases counted at every use) is rejected."""
    max_string_chars: int = 1_000_000
    """Longer strings are cut to this length."""
    max_int_digits: int = 64
    """Integers with more digits are left out of the document."""
    max_tools: int = 4096
    """Tools (operations) of one service beyond this count are left out."""
    max_parameters: int = 1024
    """A tool with more parameters, or with an object schema of more properties anywhere in its schemas, is
    rejected; so is an OpenAPI component schema with more properties (as an entity)."""
    max_schema_nodes: int = 200_000
    """A tool whose parameters and returns schemas hold more nodes together is rejected."""
    max_schema_depth: int = 32
    """Schema nesting below this depth is cut (importers inline ``$ref`` s only a few levels deep)."""
    max_enum: int = 10_000
    """A longer ``enum`` is left out of its schema (the value is then unconstrained)."""
    max_pattern_chars: int = 32_768
    """A longer ``pattern`` (before translation) is left out of its schema (the longest in APIs.guru: 22,190)."""
    max_generated_size: int = 1000
    """``minLength`` / ``minItems`` / ``minProperties`` above this are left out: values are generated."""
    time_limit_s: float | None = 120.0
    """Wall-clock limit for importing one document (cooperative; see :mod:`compoworld_assets.engine.deadline`)."""


DEFAULT_LIMITS = ImportLimits()
