"""Refusals and arguments of verify that the tamper suites do not reach:
each test here was written against a mutant of _verify.py that survived the
mutation pass (scripts/mutate.py; scores in docs/flightplan.md, "Testing the trust chain")."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from flightdeck.config import data_dir
from flightdeck.flightplan import (
    FlightPlanError,
    FreezeOutcome,
    KeyPair,
    Keyring,
    SkillStore,
    verify_plan,
)
from flightdeck.flightplan.signing._trust import TrustState
from tests.flightplan.test_trust_chain import ACME, NAME, _freeze


@pytest.fixture
def newest(tmp_path: Path, keys: KeyPair) -> FreezeOutcome:
    Keyring().trust(ACME, keys.public_path.read_bytes())
    _freeze(tmp_path, keys, "1.0.0")
    return _freeze(tmp_path, keys, "1.1.0")


def _code(target: str, **kwargs: object) -> FlightPlanError:
    with pytest.raises(FlightPlanError) as caught:
        verify_plan(target, **kwargs)  # type: ignore[arg-type]
    return caught.value


def test_a_symbolic_link_to_a_version_directory_verifies(
    tmp_path: Path, newest: FreezeOutcome
) -> None:
    link = tmp_path / "linked"
    os.symlink(newest.stored.path, link)
    assert verify_plan(str(link)).version == "1.1.0"


def test_a_dangling_symbolic_link_is_named(tmp_path: Path) -> None:
    link = tmp_path / "dangling"
    os.symlink(tmp_path / "gone", link)
    error = _code(str(link))
    assert error.code == "verify.not_found" and "broken symbolic link" in error.message


@pytest.mark.parametrize(
    ("target", "code"),
    [
        ("", "verify.no_target"),
        ("  ", "verify.no_target"),
        ("missing.md", "verify.not_found"),  # a file name, not a store name
        ("no/such/dir", "verify.not_found"),
        (f"{NAME}@", "store.invalid_version"),
    ],
)
def test_targets_that_name_nothing(target: str, code: str) -> None:
    assert _code(target).code == code


def test_a_content_hash_prefix_names_a_version(newest: FreezeOutcome) -> None:
    prefix = newest.stored.content_hash.removeprefix("sha256:")[:12]
    assert verify_plan(f"{NAME}@{prefix}").version == "1.1.0"
    assert verify_plan(f"{NAME}@sha256:{prefix}").version == "1.1.0"


def test_the_trust_state_records_the_plan_under_its_own_name(newest: FreezeOutcome) -> None:
    verified = verify_plan(NAME)
    assert verified.name == NAME
    record = TrustState().get(NAME)
    assert record is not None and record.version == "1.1.0"
    assert TrustState().get("") is None


def test_the_store_argument_is_the_store_read(tmp_path: Path, newest: FreezeOutcome) -> None:
    moved = tmp_path / "elsewhere"
    shutil.move(data_dir() / "skills", moved)
    assert verify_plan(NAME, store=SkillStore(moved)).version == "1.1.0"
    assert _code(NAME).code == "store.not_found"


def test_the_keyring_argument_is_the_keyring_asked(tmp_path: Path, newest: FreezeOutcome) -> None:
    empty = Keyring(tmp_path / "empty-keyring.json")
    assert _code(NAME, keyring=empty).code == "verify.publisher_untrusted"
    assert verify_plan(NAME).version == "1.1.0"  # the default keyring trusts ACME


def test_the_trust_argument_is_the_state_written(tmp_path: Path, newest: FreezeOutcome) -> None:
    state = TrustState(tmp_path / "trust.json")
    assert verify_plan(NAME, trust=state).first_trust
    assert state.get(NAME) is not None and TrustState().get(NAME) is None
