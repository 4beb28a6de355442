"""The pooled world factory: leases go to the pool that already runs the task's services."""

from __future__ import annotations

import pytest
from toy_world import toy_modules, toy_specs, toy_task

from compoworld_assets.engine.library.seeding import seed_world
from compoworld_assets.engine.rollout.worlds import PooledWorldFactory
from compoworld_assets.engine.runtime.state import WorldState
from compoworld_assets.engine.service_build import BuiltService


def toy_built():
    modules = toy_modules()
    return {sid: BuiltService(spec=spec, module=modules[sid],
                              implementation={t: "code" for t in modules[sid].implemented_tools})
            for sid, spec in toy_specs().items()}


@pytest.fixture
def factory():
    with PooledWorldFactory(toy_built(), mount_size=1) as pooled:
        yield pooled


def single_service_task(service_id: str):
    return toy_task(f"only-{service_id}").model_copy(update={"services": [service_id], "distractor_services": []})


def test_a_lease_reuses_the_pool_that_runs_the_task_services(factory):
    crm_task, mail_task = single_service_task("crm"), single_service_task("mail")
    crm_world, mail_world = factory(crm_task), factory(mail_task)
    assert crm_world.service_ids == ["crm"] and mail_world.service_ids == ["mail"]
    mail_pid = mail_world.service("mail").executor.pid
    crm_pid = crm_world.service("crm").executor.pid
    mail_world.close()
    crm_world.close()
    again = factory(mail_task)
    assert again.service("mail").executor.pid == mail_pid
    other = factory(crm_task)
    assert other.service("crm").executor.pid == crm_pid
    assert other.world_state().services["crm"] == crm_task.initial_state.services["crm"]
    again.close()
    other.close()


def test_a_world_changed_by_one_episode_starts_clean_in_the_next(factory):
    task = single_service_task("crm")
    world = factory(task)
    contact = min(task.initial_state.services["crm"].tables["Contact"])
    assert world.call("crm", "delete_contact", {"contact_id": contact})["success"]
    world.close()
    again = factory(task)
    assert again.world_state() == task.initial_state.model_copy(
        update={"services": {"crm": task.initial_state.services["crm"]}})
    assert again.call("crm", "get_contact", {"contact_id": contact})["success"]
    again.close()


def test_a_distractor_the_task_does_not_seed_starts_at_its_seed_state():
    task = toy_task()
    needed_only = WorldState(services={sid: task.initial_state.services[sid] for sid in task.services})
    seed = seed_world([toy_specs()["mail"]], 99).services["mail"]
    with PooledWorldFactory(toy_built(), seed_states={"mail": seed}, mount_size=3) as pooled:
        world = pooled(task.model_copy(update={"initial_state": needed_only}))
        assert task.distractor_services == ["mail"] and world.service_ids == ["crm", "helpdesk", "mail"]
        assert world.world_state().services == {**needed_only.services, "mail": seed}
        world.close()
