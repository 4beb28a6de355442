"""Tasks, and the built library task workers draw on, held compressed until they are needed whole.

A task's seeded world is most of it: with a GitHub-sized service in the world, ~0.6 MB of JSON and
~1.7 MB as Python objects, against a few KB for its plan, instruction and rubric. A round of tasks
held as objects took most of the memory of a paper-scale run, although only replaying or storing a
task needs its world. A :class:`PackedTask` keeps the small part as a :class:`~.model.Task` whose
world is empty (``head``, for splits, counts and previews) and the whole task as zlib-compressed JSON
(~11× smaller than the objects), which :meth:`~PackedTask.unpack` turns back into the same task.

A task worker needs a handful of services per task but was handed the whole built library: at the whole
corpus's scale each worker held ~2.4 GB of specs and modules. A :class:`PackedLibrary` holds every service
compressed and unpacks those a task asks for, keeping only the most recently used ones as objects.
"""

from __future__ import annotations

import json
import pickle
import threading
import zlib
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from compoworld_assets.engine.canonical import content_hash
from compoworld_assets.engine.runtime.service_runtime import known_spec_hash, spec_hash
from compoworld_assets.engine.runtime.state import WorldState
from compoworld_assets.engine.service_build import BuiltService
from compoworld_assets.engine.specs.model import ServiceSpec
from compoworld_assets.engine.spill import SpillFile
from compoworld_assets.engine.tasks.model import Task

# zlib's fastest level: ~5× smaller than the JSON; the slower levels shrink it ~25% more at 4× the time.
_LEVEL = 1


def head_of(task: Task) -> Task:
    """``task`` without its world (``initial_state`` empty): its plan, instruction, rubric and counts."""
    return task.model_copy(update={"initial_state": WorldState()})


@dataclass(frozen=True)
class PackedTask:
    head: Task
    """The task without its world (``initial_state`` empty): everything but replaying or storing it."""
    data: bytes | SpilledBytes
    """The whole task's JSON, zlib-compressed (in memory, or where a :class:`TaskSpill` put it)."""
    task_hash: str | None = field(default=None, compare=False)
    """:func:`task_content_hash` of the task, once a :class:`TaskSpill` worked it out; None before."""

    @classmethod
    def pack(cls, task: Task) -> PackedTask:
        return cls(head_of(task), zlib.compress(task.model_dump_json().encode(), _LEVEL))

    @property
    def task_id(self) -> str:
        return self.head.task_id

    @property
    def compressed(self) -> bytes:
        return self.data if isinstance(self.data, bytes) else self.data.read()

    def json(self) -> str:
        """The task's JSON, as ``Task.model_dump_json`` wrote it."""
        return zlib.decompress(self.compressed).decode()

    def unpack(self) -> Task:
        return Task.model_validate_json(zlib.decompress(self.compressed))

    def updated(self, **fields: object) -> PackedTask:
        """This task with top-level ``fields`` changed (unpacked and packed again)."""
        return PackedTask.pack(self.unpack().model_copy(update=fields))


@dataclass(frozen=True)
class SpilledBytes:
    """Bytes a :class:`TaskSpill` holds on disk."""

    spill: SpillFile
    offset: int
    length: int

    def read(self) -> bytes:
        return self.spill.read(self.offset, self.length)

    def __reduce__(self) -> tuple[type[bytes], tuple[bytes]]:
        """Pickled as the bytes themselves: the spill file stays with its process."""
        return bytes, (self.read(),)


class TaskSpill(SpillFile):
    """Packed tasks' compressed JSON moved to disk as they are made, each task keeping only its head in memory:
    a paper-scale round's packed tasks are ~850 MB even compressed, held by the run while its workers work."""

    def __init__(self) -> None:
        super().__init__(prefix="cw-tasks-")

    def add(self, task: PackedTask) -> PackedTask:
        """``task`` with its compressed JSON on disk and its content hash worked out: a round's tasks are added
        as their workers make them, while the run's own process is otherwise idle; hashed when the round's
        rows are written instead, they were ~20 s of a paper-scale round's time with one core idle."""
        return PackedTask(task.head, SpilledBytes(self, *self.append(task.compressed)),
                          task.task_hash or task_content_hash(task.json()))


def task_content_hash(text: str | bytes) -> str:
    """A task's content hash (``sampled_tasks.task_hash``) from its JSON: the hash of its canonical form,
    whatever the text's key order and spacing."""
    return content_hash(json.loads(text))


class PackedLibrary(Mapping[str, BuiltService]):
    """Built services by id, each held as a compressed pickle and unpacked when asked for; the ``keep`` most
    recently used stay unpacked (a task's world mounts a few services, and plans come in no particular order).
    A spec unpacked again is a new object, so its content hash is remembered per service and handed to the
    runtimes (:func:`~compoworld_assets.engine.runtime.service_runtime.known_spec_hash`), which would otherwise
    dump the whole spec again to key their pool.

    ``nouns`` are the record nouns several of its services share (:func:`.goal.ambiguous_nouns` of the whole
    library), worked out by whoever packs it: every task's wording asks for them, and working them out here
    would unpack every service. Pickles as the packed services only.
    """

    def __init__(self, packed: Mapping[str, bytes], nouns: frozenset[str], keep: int = 64,
                 spec_hashes: Mapping[str, str] | None = None) -> None:
        self._packed = dict(packed)
        self.nouns = nouns
        self._keep = keep
        self._unpacked: OrderedDict[str, BuiltService] = OrderedDict()
        self._spec_hashes: dict[str, str] = dict(spec_hashes or {})
        self._lock = threading.Lock()
        self.specs = LibrarySpecs(self)

    @classmethod
    def pack(cls, built: Mapping[str, BuiltService], nouns: frozenset[str], keep: int = 64) -> PackedLibrary:
        """``built`` packed, with its specs' hashes (known already when the specs were read from their table:
        ``tables.specs_from_rows``), so that no process unpacking them dumps a spec again to hash it."""
        return cls({sid: zlib.compress(pickle.dumps(service, pickle.HIGHEST_PROTOCOL), _LEVEL)
                    for sid, service in built.items()}, nouns, keep,
                   {sid: spec_hash(service.spec) for sid, service in built.items()})

    def __reduce__(self) -> tuple[type[PackedLibrary], tuple[dict[str, bytes], frozenset[str], int, dict[str, str]]]:
        return PackedLibrary, (self._packed, self.nouns, self._keep, self._spec_hashes)

    def __getitem__(self, service_id: str) -> BuiltService:
        with self._lock:
            service = self._unpacked.get(service_id)
            if service is not None:
                self._unpacked.move_to_end(service_id)
                return service
        service = pickle.loads(zlib.decompress(self._packed[service_id]))
        # An unpacked spec is a new object: its hash is worked out once per service, not on every unpack.
        known = self._spec_hashes.get(service_id)
        if known is None:
            self._spec_hashes[service_id] = spec_hash(service.spec)
        else:
            known_spec_hash(service.spec, known)
        with self._lock:
            self._unpacked[service_id] = service
            while len(self._unpacked) > self._keep:
                self._unpacked.popitem(last=False)
        return service

    def __iter__(self) -> Iterator[str]:
        return iter(self._packed)

    def __len__(self) -> int:
        return len(self._packed)

    def __contains__(self, service_id: object) -> bool:
        return service_id in self._packed


class LibrarySpecs(Mapping[str, ServiceSpec]):
    """The specs of a :class:`PackedLibrary` by id, unpacked as its services are; carries its ``nouns``."""

    def __init__(self, library: PackedLibrary) -> None:
        self._library = library
        self.nouns = library.nouns

    def __getitem__(self, service_id: str) -> ServiceSpec:
        return self._library[service_id].spec

    def __iter__(self) -> Iterator[str]:
        return iter(self._library)

    def __len__(self) -> int:
        return len(self._library)

    def __contains__(self, service_id: object) -> bool:
        return service_id in self._library
