"""The order worlds are mounted in: a permutation, chosen so that a pool of live services starts few processes."""

from collections import OrderedDict

from hypothesis import given, settings
from hypothesis import strategies as st

from compoworld_assets.engine.runtime.mount_order import reuse_order


def test_a_world_the_pool_holds_comes_before_one_needing_new_services():
    worlds = [{"a", "b"}, {"c", "d"}, {"b", "a"}, {"c", "e"}, {"d", "c"}]
    assert reuse_order(worlds, live=2) == [0, 2, 1, 4, 3]


def test_worlds_sharing_nothing_with_the_pool_come_in_the_order_given():
    assert reuse_order([{"x"}, {"y"}, set(), {"z"}], live=4) == [0, 1, 2, 3]
    assert reuse_order([], live=4) == []


def test_a_small_pool_starts_fewer_processes_than_in_the_order_of_names():
    """Three services each in a world with each of three partners: sorted by their names, a pool of three
    services changes partners at every world and starts 12 processes; in this order, 9."""
    worlds = [{hub, partner} for hub in ("h1", "h2", "h3") for partner in ("x1", "x2", "x3")]
    by_names = sorted(range(len(worlds)), key=lambda i: sorted(worlds[i]))
    assert (_starts(worlds, reuse_order(worlds, live=3), 3), _starts(worlds, by_names, 3)) == (9, 12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sets(st.sampled_from("abcdefghij"), max_size=4), max_size=30), st.integers(1, 6))
def test_each_next_world_needs_the_fewest_new_services_of_those_sharing_one_with_the_pool(worlds, live):
    order = reuse_order(worlds, live)
    assert sorted(order) == list(range(len(worlds)))
    running: OrderedDict[str, None] = OrderedDict()
    waiting = set(range(len(worlds)))
    for chosen in order:
        sharing = [i for i in waiting if worlds[i] & set(running)]
        if sharing:  # the fewest new services, ties to the world given first
            assert chosen == min(sharing, key=lambda i: (len(worlds[i] - set(running)), i))
        else:
            assert chosen == min(waiting)
        waiting.discard(chosen)
        for service in sorted(worlds[chosen]):
            running[service] = None
            running.move_to_end(service)
        while len(running) > max(live, len(worlds[chosen])):
            running.popitem(last=False)


def _starts(worlds, order, live) -> int:
    running: OrderedDict[str, None] = OrderedDict()
    starts = 0
    for index in order:
        for service in sorted(worlds[index]):
            starts += service not in running
            running[service] = None
            running.move_to_end(service)
        while len(running) > live:
            running.popitem(last=False)
    return starts
