"""How a run over ``services`` partitions picks the one data version Dagster records for all of them."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compoworld_assets.defs.services.versions import VERSION_LENGTH, Materialized, run_data_version

partitions = st.lists(st.sampled_from(["crm", "mail", "hr", "docs", "rooms"]), min_size=1, max_size=5, unique=True)
contents = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)


@given(partitions, st.data())
def test_an_unchanged_run_keeps_the_version_its_partitions_share(keys, data):
    content = {key: data.draw(contents) for key in keys}
    shared = data.draw(st.text(alphabet="0123456789abcdef", min_size=16, max_size=16))
    previous = {key: Materialized(content=content[key], version=shared) for key in keys}
    assert run_data_version(content, previous) == shared


@given(partitions, st.data())
def test_a_version_is_a_function_of_the_contents_when_anything_changed(keys, data):
    content = {key: data.draw(contents) for key in keys}
    changed = data.draw(st.sampled_from(keys))
    previous = {key: Materialized(content=content[key] if key != changed else "not a hash", version="old")
                for key in keys}
    version = run_data_version(content, previous)
    assert version != "old" and len(version) == VERSION_LENGTH
    assert version == run_data_version(content, {}), "the same contents, the same version, whatever came before"
    if len(keys) == 1:
        assert version == content[keys[0]][:VERSION_LENGTH], "one partition: its own content's hash"


def test_partitions_rebuilt_alone_then_together_get_a_new_shared_version():
    """Alone, each keeps its version; together, no one version fits both, so a new one is recorded."""
    content = {"crm": "a" * 64, "mail": "b" * 64}
    previous = {"crm": Materialized(content="a" * 64, version="v1"), "mail": Materialized(content="b" * 64, version="v2")}
    assert run_data_version({"crm": content["crm"]}, previous) == "v1"
    assert run_data_version(content, previous) not in ("v1", "v2")


def test_a_materialization_without_a_content_hash_counts_as_changed():
    assert run_data_version({"crm": "a" * 64}, {"crm": Materialized(content=None, version="v1")}) == "a" * 16


def test_a_run_without_partitions_is_refused():
    with pytest.raises(ValueError):
        run_data_version({}, {})
