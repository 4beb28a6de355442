"""Running services: each tool routed to the sandboxed module or to the world model.

:class:`ServiceRuntime` hosts one service. Tools implemented in code run in its
:class:`~compoworld_assets.engine.runtime.sandbox.SandboxedExecutor` (which validates its own
arguments); world-model tools get their arguments checked against the tool's parameters
schema first and are then simulated read-only over the current state.

:class:`WorldRuntime` mounts several service runtimes for one episode over a
:class:`WorldState`; :class:`RuntimePool` keeps runtimes (and so their worker processes)
alive across episodes: ``reset`` installs the next episode's state in the same process.
A pool serves one episode at a time; the processes a world needs that the pool does not run
yet start side by side (each start is mostly the child's interpreter start-up).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Self

from compoworld_assets.engine.canonical import canonical_json
from compoworld_assets.engine.envelope import INTERNAL_ERROR, INVALID_ARGUMENTS, UNKNOWN_TOOL, error
from compoworld_assets.engine.identity_cache import WeakIdentityCache
from compoworld_assets.engine.runtime.executor import SandboxLimits
from compoworld_assets.engine.runtime.sandbox import DEFAULT_LIMITS, SandboxedExecutor
from compoworld_assets.engine.runtime.state import ServiceState, WorldState
from compoworld_assets.engine.specs.model import ServiceSpec
from compoworld_assets.engine.synthesis.base import SynthesizedModule
from compoworld_assets.engine.world_model.base import WorldModel
from compoworld_assets.engine.world_model.change import InvalidChange, apply_change
from compoworld_assets.engine.world_model.schema import schema_errors

IMPLEMENTATIONS = ("code", "world_model")
MAX_PARALLEL_STARTS = 8

# A pooled runtime's identity: service id, spec JSON, module source hash, routing JSON.
_Key = tuple[str, str, str, str]


def resolve_implementation(
    spec: ServiceSpec, module: SynthesizedModule, implementation: Mapping[str, str] | None
) -> dict[str, str]:
    """Each tool's route: as given, else ``code`` for tools the module implements, else ``world_model``."""
    given = dict(implementation or {})
    tool_names = [t.name for t in spec.tools]
    unknown = sorted(set(given) - set(tool_names))
    if unknown:
        raise ValueError(f"{spec.id}: implementation names unknown tools {unknown}")
    invalid = sorted(name for name, route in given.items() if route not in IMPLEMENTATIONS)
    if invalid:
        raise ValueError(f"{spec.id}: implementation of {invalid} must be one of {IMPLEMENTATIONS}")
    implemented = set(module.implemented_tools)
    return {name: given.get(name, "code" if name in implemented else "world_model") for name in tool_names}


CHECK_VALUES_ENV = "COMPOWORLD_CHECK_STATE_VALUES"


# A spec's content hash, once per spec object: every runtime started and every world mounted needs it, and
# dumping a large spec (hundreds of tools) to hash it cost more than starting its process. Held as long as the
# spec lives: a bound smaller than the library (a rollout pads each world with random services of hundreds)
# had most mounts hash a spec again. A module's source hash likewise.
_spec_hash: WeakIdentityCache[ServiceSpec, str] = WeakIdentityCache(ServiceSpec.content_hash)
_source_hash: WeakIdentityCache[SynthesizedModule, str] = WeakIdentityCache(lambda module: module.source_hash)


def spec_hash(spec: ServiceSpec) -> str:
    """``spec``'s content hash, as runtimes and pools key on it (once per spec object)."""
    return _spec_hash(spec)


def known_spec_hash(spec: ServiceSpec, value: str) -> None:
    """Tell runtimes and pools ``spec``'s content hash, known from an equal spec (one unpacked again)."""
    _spec_hash.put(spec, value)


class StateChangedInPlace(AssertionError):
    """A state given to or taken from a runtime was changed in place (see :class:`ServiceRuntime`)."""


class ServiceRuntime:
    """One service: ``reset(state)``, ``call(tool, args)`` (always an envelope), ``state()``, ``close()``.

    States are values: ``state()`` hands back the very object the runtime was reset with while no call has
    changed it, and ``reset`` to that object again sends nothing, so a world of large services is not
    encoded, copied and parsed again for every step that leaves most of them alone. Whoever wants to change
    a state takes a ``snapshot()`` first (as :func:`~compoworld_assets.engine.world_model.change.apply_change`
    and task instantiation do). With ``COMPOWORLD_CHECK_STATE_VALUES=1`` (the test suite sets it) every reuse
    checks that the state still holds what it held when given, and raises :class:`StateChangedInPlace`.
    """

    def __init__(
        self,
        spec: ServiceSpec,
        module: SynthesizedModule,
        implementation: Mapping[str, str] | None = None,
        world_model: WorldModel | None = None,
        limits: SandboxLimits = DEFAULT_LIMITS,
        lazy: bool = False,
    ) -> None:
        """``lazy``: the sandbox process starts at the first code tool's call (``SandboxedExecutor``)."""
        self.spec = spec
        self.spec_hash = _spec_hash(spec)
        self.module = module
        self.module_hash = _source_hash(module)
        self.implementation = resolve_implementation(spec, module, implementation)
        routes = set(self.implementation.values())
        if "world_model" in routes and world_model is None:
            raise ValueError(f"{spec.id}: tools routed to the world model but no world model given")
        self.world_model = world_model
        self._tools = {t.name: t for t in spec.tools}
        self._executor = (
            SandboxedExecutor(module.source, limits, service_id=spec.id, trusted=module.trusted, lazy=lazy)
            if "code" in routes else None
        )
        self._check_values = os.environ.get(CHECK_VALUES_ENV) == "1"
        self._held_json = b""
        self._install(ServiceState.empty(spec))

    @property
    def executor(self) -> SandboxedExecutor | None:
        return self._executor

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def reset(self, state: ServiceState) -> None:
        if state.service_id != self.spec.id:
            raise ValueError(f"state of service {state.service_id!r} given to runtime of {self.spec.id!r}")
        # The executor still holds the very state it was reset with (not one a call left behind): restoring
        # it is all a reset to it needs.
        if state is self._state and not self._changed() and not (self._executor and self._executor.changed):
            self._checked(state)
            if self._executor is not None:
                self._executor.restore()  # a fresh process for untrusted code that ran, as a reset gives
            return
        self._install(state)

    def state(self) -> ServiceState:
        """The current state, held as a value: the object given to the last reset while no call changed it,
        else the one read back after the last change (read once)."""
        if self._changed():
            assert self._executor is not None
            self._hold(self._executor.state())
        return self._checked(self._state)

    def _changed(self) -> bool:
        """Whether the executor's state moved on since the held value."""
        return self._executor is not None and self._executor.version != self._version

    def _hold(self, state: ServiceState) -> None:
        self._state = state
        self._version = 0 if self._executor is None else self._executor.version
        if self._check_values:
            self._held_json = state.model_dump_json().encode()

    def _checked(self, state: ServiceState) -> ServiceState:
        if self._check_values and state.model_dump_json().encode() != self._held_json:
            raise StateChangedInPlace(f"{self.spec.id}: a state given to or taken from its runtime was changed "
                                      "in place; take a snapshot() before changing a state")
        return state

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        spec_tool = self._tools.get(tool)
        if spec_tool is None:
            return error(UNKNOWN_TOOL, f"service {self.spec.id!r} has no tool {tool!r}")
        if not isinstance(args, dict):
            return error(INVALID_ARGUMENTS, f"arguments must be a JSON object, got {type(args).__name__}")
        if self.implementation[tool] == "code":
            assert self._executor is not None
            return self._executor.call(tool, args)
        problems = schema_errors(spec_tool.parameters, args)
        if problems:
            return error(INVALID_ARGUMENTS, "; ".join(problems))
        assert self.world_model is not None
        before = self.state()
        try:
            simulation = self.world_model.simulate(self.spec, spec_tool, args, before)
            if simulation.change.empty or not simulation.result["success"]:
                return simulation.result
            after = apply_change(self.spec, spec_tool, before, simulation.change)
        except InvalidChange as problem:
            return error(INTERNAL_ERROR, f"world model proposed an invalid state change for {tool!r}: {problem}")
        except Exception as exc:  # noqa: BLE001 - a world model bug must not crash the episode
            return error(INTERNAL_ERROR, f"world model failed on {tool!r}: {type(exc).__name__}: {exc}")
        self._install(after)
        return simulation.result

    @property
    def running(self) -> bool:
        """Whether the service's process runs now (never when all its tools are simulated)."""
        return self._executor is not None and self._executor.running

    def resident_bytes(self) -> int:
        """Resident memory of the service's process (0 without one: all its tools are simulated)."""
        return 0 if self._executor is None else self._executor.resident_bytes()

    def _install(self, state: ServiceState) -> None:
        if self._executor is not None:
            self._executor.reset(state)
        self._hold(state)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.close()


class WorldRuntime:
    """Several service runtimes mounted for one episode, addressed by service id."""

    def __init__(self, services: Mapping[str, ServiceRuntime]) -> None:
        self._services = dict(services)

    @property
    def service_ids(self) -> list[str]:
        return sorted(self._services)

    def service(self, service_id: str) -> ServiceRuntime:
        return self._services[service_id]

    def reset(self, world: WorldState) -> None:
        """Install ``world``; mounted services it does not mention start empty."""
        unmounted = sorted(set(world.services) - set(self._services))
        if unmounted:
            raise ValueError(f"world state has services that are not mounted: {unmounted}")
        for service_id in self.service_ids:
            runtime = self._services[service_id]
            runtime.reset(world.services.get(service_id) or ServiceState.empty(runtime.spec))

    def call(self, service_id: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        runtime = self._services.get(service_id)
        if runtime is None:
            return error(UNKNOWN_TOOL, f"no service {service_id!r} is mounted")
        return runtime.call(tool, args)

    def world_state(self) -> WorldState:
        return WorldState(services={sid: self._services[sid].state() for sid in self.service_ids})


def combination_key(services: Iterable[str]) -> str:
    """A set of services as one string (sorted ids joined by ``+``): a task's service combination."""
    return "+".join(sorted(set(services)))


@dataclass(frozen=True)
class ServiceMount:
    spec: ServiceSpec
    module: SynthesizedModule
    implementation: Mapping[str, str] | None = None


def _pool_key(mount: ServiceMount) -> tuple[_Key, dict[str, str]]:
    routes = resolve_implementation(mount.spec, mount.module, mount.implementation)
    return (mount.spec.id, _spec_hash(mount.spec), _source_hash(mount.module), canonical_json(routes)), routes


# A mount's pool key and routes, once per mount object: a rollout mounts 15 services per episode, and working out
# their routes and keys again took 7% of a paper-scale verification (a world factory keeps one mount per service).
_mount_key: WeakIdentityCache[ServiceMount, tuple[_Key, dict[str, str]]] = WeakIdentityCache(_pool_key)


class RuntimePool:
    """Service runtimes kept alive across episodes, keyed by spec, module source and routing.

    At most ``limits.max_live_services`` runtimes with a running process stay alive (a world that
    mounts more gets them all): before starting the ones a world lacks, the pool closes the least
    recently mounted runtimes the world does not use, so its processes (and memory) do not grow with
    the library. Runtimes on standby (no process yet, :meth:`world`'s ``standby``) are held beside
    them, at most as many again: they hold a state, not a process. Then, under
    ``limits.max_live_memory_mb``, it closes more running ones, least recently mounted first, while
    their processes' resident memory together, with the processes about to start counted at the running
    ones' mean size, is above the cap.
    """

    def __init__(self, world_model: WorldModel | None = None, limits: SandboxLimits = DEFAULT_LIMITS) -> None:
        self.world_model = world_model
        self.limits = limits
        # Keyed by the spec's content hash (worked out once per spec object); in mount order, least recently
        # mounted first.
        self._runtimes: OrderedDict[_Key, ServiceRuntime] = OrderedDict()
        self.evicted = 0

    def __len__(self) -> int:
        return len(self._runtimes)

    @property
    def service_ids(self) -> set[str]:
        """The services this pool holds a runtime (and so usually a live process) for."""
        return {key[0] for key in self._runtimes}

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def world(self, mounts: Iterable[ServiceMount], state: WorldState | None = None,
              standby: Iterable[str] = ()) -> WorldRuntime:
        """A world of the given services (reusing pooled runtimes), reset to ``state`` or empty.

        The services named in ``standby`` (those an episode may well never call: a task's distractors) that the
        pool does not run yet get a lazy runtime, whose process starts at their first call.
        """
        keyed: dict[str, tuple[_Key, dict[str, str], ServiceMount]] = {}
        for mount in mounts:
            if mount.spec.id in keyed:
                raise ValueError(f"service {mount.spec.id!r} is mounted twice")
            keyed[mount.spec.id] = (*_mount_key(mount), mount)
        wanted = [key for key, _, _ in keyed.values()]
        standby = set(standby)
        missing = [key for key in wanted if key not in self._runtimes]
        self._evict(keep=set(wanted), room=sum(1 for key in missing if key[0] not in standby),
                    standby_room=sum(1 for key in missing if key[0] in standby))
        self._start_missing(list(keyed.values()), standby)
        for key in wanted:
            self._runtimes.move_to_end(key)
        world = WorldRuntime({sid: self._runtimes[key] for sid, (key, _, _) in keyed.items()})
        world.reset(state or WorldState())
        return world

    def _evict(self, keep: set[_Key], room: int, standby_room: int = 0) -> None:
        """Close least recently mounted runtimes outside ``keep`` until ``room`` more running ones and
        ``standby_room`` more on standby fit under the caps (the memory cap is checked only when processes are
        about to start: reading it costs a look at each)."""
        for running, needed in ((True, room), (False, standby_room)):
            held = [key for key, runtime in self._runtimes.items() if runtime.running == running]
            excess = len(held) + needed - self.limits.max_live_services
            for key in [key for key in held if key not in keep][:max(excess, 0)]:
                self._close(key)
        if self.limits.max_live_memory_mb is None or not room:
            return
        sizes = {key: runtime.resident_bytes() for key, runtime in self._runtimes.items() if runtime.running}
        total = sum(sizes.values())
        # The processes about to start count too, at the running ones' mean size: the cap holds after they start.
        starting = room * total // len(sizes) if sizes else 0
        for key in [key for key in sizes if key not in keep]:
            if total + starting <= self.limits.max_live_memory_mb * 2**20:
                break
            total -= sizes[key]
            self._close(key)

    def _close(self, key: _Key) -> None:
        self._runtimes.pop(key).close()
        self.evicted += 1

    def _new_runtime(self, mount: ServiceMount, routes: dict[str, str], lazy: bool = False) -> ServiceRuntime:
        return ServiceRuntime(mount.spec, mount.module, routes, self.world_model, self.limits, lazy=lazy)

    def _start_missing(self, keyed: list[tuple[_Key, dict[str, str], ServiceMount]], standby: set[str]) -> None:
        """Create the runtimes the pool lacks, in parallel; the first failure (in mount order) is raised.
        Those of ``standby`` services are lazy (no process yet), made here in turn."""
        missing = [(key, routes, mount) for key, routes, mount in keyed if key not in self._runtimes]
        for key, routes, mount in [m for m in missing if m[2].spec.id in standby]:
            self._runtimes[key] = self._new_runtime(mount, routes, lazy=True)
        missing = [m for m in missing if m[2].spec.id not in standby]
        if len(missing) <= 1:
            for key, routes, mount in missing:
                self._runtimes[key] = self._new_runtime(mount, routes)
            return
        with ThreadPoolExecutor(max_workers=min(len(missing), MAX_PARALLEL_STARTS),
                                thread_name_prefix="cw-start") as threads:
            futures = [(key, threads.submit(self._new_runtime, mount, routes)) for key, routes, mount in missing]
        failure: BaseException | None = None
        for key, future in futures:
            error = future.exception()
            if error is None:
                self._runtimes[key] = future.result()
            elif failure is None:
                failure = error
        if failure is not None:
            raise failure

    def close(self) -> None:
        for runtime in self._runtimes.values():
            runtime.close()
        self._runtimes.clear()
