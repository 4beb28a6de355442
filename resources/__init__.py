"""Dagster resources: storage, the LLM backend, sandbox limits and spec sources.

Configuration is read when Dagster builds a resource (``EnvVar``), never at import time.
"""

from resources.llm import LLMResource
from resources.sandbox import SandboxResource
from resources.spec_sources import SpecSourcesResource
from resources.storage import StorageResource, duckdb_io_manager

__all__ = ["LLMResource", "SandboxResource", "SpecSourcesResource", "StorageResource", "duckdb_io_manager"]
