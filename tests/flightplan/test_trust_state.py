"""The trust state on its own: high-water marks, same label with other
content, and records that survive a re-read (kills mutants of _trust.py);
each test once on trust.json and once on the PostgreSQL store."""

from __future__ import annotations

import pytest

from flightdeck.flightplan import FlightPlanError
from flightdeck.flightplan.signing._trust import TrustState


@pytest.fixture(autouse=True)
def _both_backends(backend: str) -> str:
    return backend


def _code(state: TrustState, version: str | None, digest: str, **kwargs: bool) -> str:
    with pytest.raises(FlightPlanError) as caught:
        state.check_and_record("p", "github://o", version, digest, explicit_version=False, **kwargs)
    return caught.value.code


def test_high_water_mark_moves_up_and_refuses_going_back() -> None:
    state = TrustState()
    first = state.check_and_record("p", "github://o", "1.0.0", "sha256:a", explicit_version=False)
    later = state.check_and_record("p", "github://o", "1.1.0", "sha256:b", explicit_version=False)
    assert (first.first, later.first) == (True, False)
    record = TrustState().get("p")
    assert record is not None and (record.version, record.content_hash) == ("1.1.0", "sha256:b")
    assert _code(state, "1.0.0", "sha256:a") == "verify.rollback"


def test_same_label_with_other_content_is_refused() -> None:
    state = TrustState()
    state.check_and_record("p", "github://o", "1.0.0", "sha256:a", explicit_version=False)
    assert _code(state, "1.0.0", "sha256:other") == "verify.rollback"
    again = state.check_and_record("p", "github://o", "1.0.0", "sha256:a", explicit_version=False)
    assert again.record.version == "1.0.0"


def test_unlabelled_plans_have_no_rollback_but_keep_their_pin() -> None:
    state = TrustState()
    state.check_and_record("p", "github://o", None, "sha256:a", explicit_version=False)
    state.check_and_record("p", "github://o", None, "sha256:b", explicit_version=False)
    state.check_and_record("p", "github://o", "1.0.0", "sha256:c", explicit_version=False)
    assert (TrustState().get("p") or pytest.fail()).version == "1.0.0"
    with pytest.raises(FlightPlanError) as caught:
        state.check_and_record("p", "github://x", None, "sha256:d", explicit_version=False)
    assert caught.value.code == "verify.publisher_changed"


def test_rollback_needs_both_explicit_version_and_flag() -> None:
    state = TrustState()
    state.check_and_record("p", "github://o", "2.0.0", "sha256:b", explicit_version=False)
    assert _code(state, "1.0.0", "sha256:a", allow_rollback=True) == "verify.rollback"
    ok = state.check_and_record(
        "p", "github://o", "1.0.0", "sha256:a", explicit_version=True, allow_rollback=True
    )
    assert ok.record.version == "2.0.0"  # the high-water mark stays


def test_entries_without_an_owner_are_ignored(backend: str) -> None:
    if backend == "postgres":
        return  # the table's owner column is NOT NULL: no such row can be stored
    state = TrustState()
    state.check_and_record("p", "github://o", "1.0.0", "sha256:a", explicit_version=False)
    state.path.write_text('{"plans": {"q": {"version": "1.0.0"}, "p": {"owner": "github://o"}}}')
    assert [r.name for r in TrustState().records()] == ["p"]


def test_the_decision_carries_the_new_high_water_mark() -> None:
    state = TrustState()
    state.check_and_record("p", "github://o", "1.0.0", "sha256:a", explicit_version=False)
    later = state.check_and_record("p", "github://o", "1.1.0", "sha256:b", explicit_version=False)
    assert (later.record.version, later.record.content_hash) == ("1.1.0", "sha256:b")
    same = state.check_and_record("p", "github://o", "1.1.0", "sha256:b", explicit_version=False)
    assert same.record == later.record and not same.first


def test_the_owner_moves_only_from_the_owner_named() -> None:
    """Rotation moves a key pin from the old key to the new one; a pin that is
    not the old key (re-pinned meanwhile) or no pin at all stays as it is."""
    state = TrustState()
    assert not state.move_owner("p", "key:old", "key:new")  # nothing pinned
    assert state.get("p") is None
    state.check_and_record("p", "key:other", "1.0.0", "sha256:a", explicit_version=False)
    assert not state.move_owner("p", "key:old", "key:new")
    assert (TrustState().get("p") or pytest.fail()).owner == "key:other"
    assert state.move_owner("p", "key:other", "key:new")
    record = TrustState().get("p") or pytest.fail()
    assert (record.owner, record.version, record.content_hash) == ("key:new", "1.0.0", "sha256:a")


def test_a_first_trust_with_rivals_pins_nothing_unless_repinned() -> None:
    state = TrustState()
    with pytest.raises(FlightPlanError) as caught:
        state.check_and_record(
            "p", "github://o", "1.0.0", "sha256:a", explicit_version=False,
            rivals=lambda: ["github://x"],
        )  # fmt: skip
    assert caught.value.code == "verify.publisher_conflict"
    assert "github://x" in caught.value.message and state.get("p") is None
    decided = state.check_and_record(
        "p", "github://o", "1.0.0", "sha256:a", explicit_version=False, repin=True,
        rivals=lambda: ["github://x"],
    )  # fmt: skip
    assert decided.first and (state.get("p") or pytest.fail()).owner == "github://o"
    # Once pinned, rivals are no longer asked about: the pin decides.
    later = state.check_and_record(
        "p", "github://o", "1.1.0", "sha256:b", explicit_version=False,
        rivals=lambda: pytest.fail("asked"),
    )  # fmt: skip
    assert later.record.version == "1.1.0"


def test_two_machines_see_one_trust_state(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rollback refused on one machine is refused on another: the pin and
    the high-water mark are the store's, not each data folder's."""
    monkeypatch.setenv("FLIGHTDECK_DATABASE_URL", pg_url)
    first = TrustState()
    first.check_and_record("p", "github://o", "2.0.0", "sha256:b", explicit_version=False)
    monkeypatch.setenv("FLIGHTDECK_HOME", str(first.path.parent.parent / "other-machine"))
    other = TrustState()
    assert other.path != first.path
    assert _code(other, "1.0.0", "sha256:a") == "verify.rollback"
    assert other.snapshot(other.path.parent / "copy.json").get("p") == first.get("p")
