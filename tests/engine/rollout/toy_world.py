"""A small in-process world over three built-in services, and a hand-written two-step task.

Shared by the agent and rollout tests (their conftests import it). :class:`InProcessWorld`
runs the offline-synthesized modules in this process (exec + ``handle``), the same contract as
the sandboxed runtime minus the isolation, so unit tests stay fast.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from compoworld_assets.engine import envelope
from compoworld_assets.engine.library import builtin_spec
from compoworld_assets.engine.library.seeding import seed_world
from compoworld_assets.engine.runtime.state import ServiceState, WorldState
from compoworld_assets.engine.specs.model import ServiceSpec
from compoworld_assets.engine.synthesis.base import SynthesizedModule
from compoworld_assets.engine.synthesis.offline import OfflineSynthesizer
from compoworld_assets.engine.tasks.model import ArgBinding, Plan, PlanStep, Task
from compoworld_assets.engine.tasks.plan_exec import execute_plan
from compoworld_assets.engine.tasks.rubrics import GoldRun, build_rubric

SERVICE_IDS = ("crm", "helpdesk", "mail")
SEED = 7


@cache
def toy_specs() -> dict[str, ServiceSpec]:
    return {sid: builtin_spec(sid) for sid in SERVICE_IDS}


@cache
def toy_modules() -> dict[str, SynthesizedModule]:
    return {sid: OfflineSynthesizer().synthesize(spec) for sid, spec in toy_specs().items()}


class InProcessService:
    def __init__(self, spec: ServiceSpec, module: SynthesizedModule) -> None:
        self.spec = spec
        self.spec_hash = spec.content_hash()
        self.module = module
        self.module_hash = module.source_hash
        namespace: dict[str, Any] = {}
        exec(compile(module.source, f"<{spec.id}>", "exec"), namespace)  # noqa: S102 - trusted test module
        self._handle = namespace["handle"]
        self.state: dict[str, Any] = ServiceState.empty(spec).model_dump(mode="json")

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        try:
            return copy.deepcopy(self._handle(self.state, tool, copy.deepcopy(args)))
        except Exception as exc:  # noqa: BLE001 - every tool failure becomes an envelope
            return envelope.error(envelope.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")


class InProcessWorld:
    """The mounted-world contract (service_ids, service, call, world_state, reset, close)."""

    def __init__(self, service_ids: tuple[str, ...] = SERVICE_IDS) -> None:
        self._services = {sid: InProcessService(toy_specs()[sid], toy_modules()[sid]) for sid in service_ids}
        self.closed = False

    @property
    def service_ids(self) -> list[str]:
        return sorted(self._services)

    def service(self, service_id: str) -> InProcessService:
        return self._services[service_id]

    def call(self, service_id: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        if service_id not in self._services:
            return envelope.error(envelope.UNKNOWN_TOOL, f"no service {service_id!r}")
        return self._services[service_id].call(tool, args)

    def world_state(self) -> WorldState:
        return WorldState(services={sid: ServiceState.model_validate(copy.deepcopy(s.state))
                                    for sid, s in sorted(self._services.items())})

    def reset(self, world: WorldState) -> None:
        for sid, service in self._services.items():
            state = world.services.get(sid) or ServiceState.empty(service.spec)
            service.state = state.model_dump(mode="json")

    def close(self) -> None:
        self.closed = True


def toy_world_factory(task: Task) -> InProcessWorld:
    world = InProcessWorld()
    world.reset(task.initial_state)
    return world


@cache
def _initial_state() -> WorldState:
    return seed_world(toy_specs().values(), SEED, rows_per_entity=4)


def toy_task(task_id: str = "toy-1") -> Task:
    """Find a CRM contact by name, open a helpdesk ticket for their email, report the ticket id.

    The rubric is built by the task factory's rubric builder from the gold run.
    """
    initial = _initial_state()
    contact = min(initial.services["crm"].tables["Contact"].values(), key=lambda r: r["id"])
    steps = [
        PlanStep(index=0, service_id="crm", tool="search_contacts",
                 args={"query": ArgBinding(kind="user_known", value=contact["full_name"])}),
        PlanStep(index=1, service_id="helpdesk", tool="open_ticket", args={
            "customer_email": ArgBinding(kind="step_output", step=0, path="items[0].email", type="email"),
            "subject": ArgBinding(kind="constant", value="Cannot log in"),
            "description": ArgBinding(kind="constant", value="The customer cannot log in."),
            "priority": ArgBinding(kind="constant", value="high"),
            "channel": ArgBinding(kind="constant", value="email"),
            "created_at": ArgBinding(kind="constant", value="2026-06-01T09:00:00Z"),
        }),
    ]
    task = Task(task_id=task_id, seed=SEED, domain="support", services=["crm", "helpdesk"],
                distractor_services=["mail"], initial_state=initial,
                instruction=f"Open a high-priority helpdesk ticket (by email channel) for our contact "
                            f"{contact['full_name']}: subject 'Cannot log in'.",
                house_rules=["Never email customers without being asked."], report_fields=["ticket_id"],
                report_sources={"ticket_id": ArgBinding(kind="step_output", step=1, path="id")},
                plan=Plan(steps=steps), rubric=[], capabilities=["lookup", "create"])
    calls, final_state, answer = execute_plan(task, toy_world_factory(task))
    return task.model_copy(update={"rubric": build_rubric(task, toy_specs(), GoldRun(calls, final_state, answer))})
