"""End-to-end on a few real BFCL entries (needs the optional bfcl_eval package)."""

from __future__ import annotations

import pytest

from compoworld_assets.engine.differential.bfcl import bfcl_available

pytestmark = pytest.mark.skipif(
    not bfcl_available(), reason="bfcl_eval is not importable (pip install --no-deps bfcl-eval==2026.3.23)"
)

SHARES = ("outcome_agreement", "result_match", "state_comparable", "state_match", "sequence_match")


@pytest.fixture(scope="module")
def entries():
    from compoworld_assets.engine.differential.bfcl import load_entries

    return load_entries()


def test_ticket_queue_maps_to_the_ticket_entity(entries):
    from compoworld_assets.engine.differential import run_backend

    report = run_backend("TicketAPI", entries, limit=5)
    assert report.mapping == {"ticket_queue": "Ticket"}
    assert any(s.state_comparable for s in report.sequences)


@pytest.mark.parametrize("backend", ["TicketAPI", "MessageAPI"])
def test_harness_reports_shares_for_a_backend(entries, backend):
    from compoworld_assets.engine.differential import run_backend

    report = run_backend(backend, entries, limit=3)
    summary = report.summary()
    assert summary["entries"] == 3
    assert summary["calls"] > 0
    assert all(0.0 <= summary[key] <= 1.0 for key in SHARES)
    assert summary["crud_tools"] + summary["action_tools"] == {"TicketAPI": 9, "MessageAPI": 10}[backend]
    assert run_backend(backend, entries, limit=3).summary() == summary


def test_ticket_known_disagreement_and_incomparable_state(entries):
    """BFCL accepts a string ticket id our typed service rejects; this entry's tickets
    (booking_id, issue, status) share no field with our Ticket, so its state is not comparable."""
    from compoworld_assets.engine.differential import run_backend

    involved = [e for e in entries if "TicketAPI" in e.involved_classes]
    entry = next(e for e in involved if any("ticket_id='ticket_001'" in call for call in e.calls()))
    report = run_backend("TicketAPI", [entry])
    assert report.mapping == {}
    assert not report.sequences[0].state_comparable and not report.sequences[0].matches
    rejected = [c for c in report.sequences[0].calls if "ticket_id='ticket_001'" in c.call]
    assert rejected and all(c.reference_ok and not c.ours_ok and not c.outcome_agrees for c in rejected)


def test_reference_instances_are_not_shared(entries):
    from compoworld_assets.engine.differential.bfcl import ReferenceBackend

    config = {"ticket_queue": [], "current_user": "alice"}
    first = ReferenceBackend("TicketAPI", config)
    assert first.call("create_ticket", {"title": "T"}).ok
    second = ReferenceBackend("TicketAPI", config)
    assert len(first.state()["ticket_queue"]) == 1
    assert second.state()["ticket_queue"] == []
    assert config["ticket_queue"] == []


def test_reference_exceptions_are_failures():
    from compoworld_assets.engine.differential.bfcl import ReferenceBackend

    result = ReferenceBackend("MathAPI", {}).call("add", {"a": 1})
    assert not result.ok
    assert "TypeError" in result.value["error"]
