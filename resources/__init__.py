"""Dagster resources: storage, the LLM backend, sandbox limits and spec sources.

Configuration is read when Dagster builds a resource (``EnvVar``), never at import time.
"""

from resources.compute import ComputeResource, SlurmConfig, VLLMServeConfig
from resources.llm import LLMResource
from resources.partitioned_tables import PARTITIONS_IO_MANAGER, partitions_io_manager
from resources.pipes_k8s import KubernetesConfig, KubernetesVolume
from resources.sandbox import SandboxResource
from resources.spec_sources import SpecSourcesResource
from resources.storage import StorageResource, duckdb_io_manager, storage_resource

__all__ = [
    "PARTITIONS_IO_MANAGER", "ComputeResource", "KubernetesConfig", "KubernetesVolume", "LLMResource", "SandboxResource", "SlurmConfig",
    "SpecSourcesResource", "StorageResource", "VLLMServeConfig", "duckdb_io_manager", "partitions_io_manager",
    "storage_resource",
]
