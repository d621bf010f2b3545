"""The store's own refusals: a stored version is immutable (another key's
signature, an edited statement, a damaged signature file), co-signatures
are never replaced, names are checked, and the index it serves is the
signed statement's (kills mutants of _store.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flightdeck.flightplan import (
    FlightPlanError,
    FreezeOutcome,
    KeyPair,
    SkillStore,
    freeze_plan,
    verify_plan,
)
from flightdeck.flightplan._emit import emit_skill
from tests.flightplan._plans import example_body, example_data

NAME = "weekly-metrics-digest"


def _freeze(tmp_path: Path, keys: KeyPair, version: str = "1.0.0") -> FreezeOutcome:
    source = tmp_path / "src.md"
    source.write_text(emit_skill(example_data(), example_body()))
    return freeze_plan(source, signing_key=keys.private_path, version=version)


def _conflict(tmp_path: Path, keys: KeyPair) -> FlightPlanError:
    with pytest.raises(FlightPlanError) as caught:
        _freeze(tmp_path, keys)
    return caught.value


def test_the_same_content_signed_by_another_key_is_a_conflict(
    tmp_path: Path, keys: KeyPair, other_keys: KeyPair
) -> None:
    _freeze(tmp_path, keys)
    error = _conflict(tmp_path, other_keys)
    assert error.code == "store.version_conflict" and "SKILL.md.sig" in error.message
    assert "flightdeck sign" in (error.hint or "")


def test_the_same_content_signed_again_by_the_same_key_is_the_stored_version(
    tmp_path: Path, keys: KeyPair
) -> None:
    first = _freeze(tmp_path, keys)
    again = _freeze(tmp_path, keys)
    assert (again.created, again.stored.path) == (False, first.stored.path)


@pytest.mark.parametrize(
    "damage",
    [
        lambda env: [env],  # not an object
        lambda env: {**env, "statement": ["not", "an", "object"]},
        lambda env: {**env, "statement": {**env["statement"], "version": "9.9.9"}},
        lambda env: {**env, "keyId": "sha256:" + "0" * 64},
    ],
)
def test_a_stored_signature_that_is_not_this_signing_is_a_conflict(
    tmp_path: Path, keys: KeyPair, damage: object
) -> None:
    stored = _freeze(tmp_path, keys).stored.path / "SKILL.md.sig"
    envelope = json.loads(stored.read_text())
    stored.write_text(json.dumps(damage(envelope)))  # type: ignore[operator]
    error = _conflict(tmp_path, keys)
    assert error.code == "store.version_conflict" and "SKILL.md.sig" in error.message


def test_a_cosignature_file_is_written_once_and_never_replaced(
    tmp_path: Path, keys: KeyPair
) -> None:
    folder = _freeze(tmp_path, keys).stored.path
    store, name = SkillStore(), "SKILL.md." + "ab" * 32 + ".sig"
    assert store.add_cosignature(folder, name, b"first")
    assert not store.add_cosignature(folder, name, b"first")  # identical: nothing to do
    with pytest.raises(FlightPlanError) as caught:
        store.add_cosignature(folder, name, b"second")
    assert caught.value.code == "store.version_conflict"
    assert (folder / name).read_bytes() == b"first"


def test_a_name_that_is_no_skill_name_is_refused() -> None:
    with pytest.raises(FlightPlanError) as caught:
        SkillStore().find("Not_A_Name")
    assert caught.value.code == "store.invalid_name"
    assert SkillStore().versions_of("Not_A_Name") == []


def test_the_index_is_the_signed_statement(
    tmp_path: Path, keys: KeyPair, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcome = _freeze(tmp_path, keys)
    [entry] = SkillStore().list()
    statement = json.loads((outcome.stored.path / "SKILL.md.sig").read_text())["statement"]
    assert entry.content_hash == outcome.frozen.content_hash == statement["contentHash"]
    assert entry.frozen_at == statement["signedAt"]
    # meta.json, written for people, copies the statement's signing time.
    meta = json.loads((outcome.stored.path / "meta.json").read_text())
    assert meta["frozen_at"] == statement["signedAt"]
    assert verify_plan(f"{NAME}@{entry.content_hash[7:19]}").version == "1.0.0"
    # Stored elsewhere at another time, it still says when it was signed.
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "86400")
    copy, created = SkillStore(tmp_path / "other").put(outcome.frozen)
    assert created and copy.frozen_at == statement["signedAt"]
    assert json.loads((copy.path / "meta.json").read_text())["frozen_at"] == statement["signedAt"]
