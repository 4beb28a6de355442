"""``ServiceState.same_content``, the cheap comparison verification uses instead of content hashes, and the world
hash built from each service's (worked out once per state object)."""

from hypothesis import given
from hypothesis import strategies as st

from compoworld_assets.engine.canonical import canonical_json, content_hash
from compoworld_assets.engine.runtime.state import ServiceState, WorldState

values = st.one_of(st.none(), st.text(max_size=5), st.integers(-5, 5))
records = st.dictionaries(st.sampled_from(["name", "status", "total"]), values, max_size=3)
tables = st.dictionaries(st.sampled_from(["Customer", "Ticket"]),
                         st.dictionaries(st.sampled_from(["a", "b", "c"]), records, max_size=3), max_size=2)
counters = st.dictionaries(st.sampled_from(["Customer", "Ticket"]), st.integers(0, 3), max_size=2)


@given(tables, counters, tables, counters)
def test_same_content_agrees_with_the_content_hash(tables_a, counters_a, tables_b, counters_b):
    a = ServiceState(service_id="crm", tables=tables_a, counters=counters_a)
    b = ServiceState(service_id="crm", tables=tables_b, counters=counters_b)
    assert a.same_content(b) == (a.content_hash() == b.content_hash())
    assert a.same_content(ServiceState.model_validate_json(a.model_dump_json()))


def test_another_service_never_has_the_same_content():
    assert not ServiceState(service_id="crm").same_content(ServiceState(service_id="billing"))


@given(tables, counters, tables, counters)
def test_the_world_hash_follows_the_content_of_every_service(tables_a, counters_a, tables_b, counters_b):
    crm = ServiceState(service_id="crm", tables=tables_a, counters=counters_a)
    billing = ServiceState(service_id="billing", tables=tables_b, counters=counters_b)
    world = WorldState(services={"crm": crm, "billing": billing})
    again = WorldState.model_validate_json(world.model_dump_json())  # equal content, new objects, other order
    again = WorldState(services=dict(reversed(list(again.services.items()))))
    assert world.content_hash() == again.content_hash()
    changed = crm.snapshot()
    changed.tables.setdefault("Ticket", {})["z"] = {"status": "longer than any drawn"}
    moved = WorldState(services={"crm": changed, "billing": billing})
    assert moved.content_hash() != world.content_hash()
    assert WorldState(services={"crm": crm}).content_hash() != world.content_hash()


# What a record may hold, JSON or not: every float (NaN and infinities too), integers past 64 bits, any text, tuples,
# datetimes. Dicts are keyed by strings: records are JSON objects (they cross the sandbox as JSON).
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8), st.datetimes())
anything = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.tuples(inner, inner),
    st.dictionaries(st.text(max_size=4), inner, max_size=3)), max_leaves=12)


@given(st.dictionaries(st.text(max_size=4), st.dictionaries(st.text(max_size=4), st.dictionaries(
    st.text(max_size=4), anything, max_size=3), max_size=3), max_size=2), counters)
def test_a_state_hashes_as_its_json_dump_whatever_its_records_hold(tables_, counters_):
    state = ServiceState.model_construct(service_id="crm", tables=tables_, counters=counters_)
    assert state.content_hash() == content_hash(state.model_dump(mode="json", warnings=False))
    assert state.canonical_json() == canonical_json(state.model_dump(mode="json", warnings=False))
