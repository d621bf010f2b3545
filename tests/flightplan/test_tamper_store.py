"""Store-level tampering, verified by name with a trust state that has
already seen the newest version: rollbacks, republishing, swaps between
plans and versions, a damaged index, trust state and keyring. Each class
has its own code and never a traceback."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from flightdeck.config import data_dir
from flightdeck.flightplan import (
    FlightPlanError,
    FreezeOutcome,
    KeyPair,
    Keyring,
    freeze_plan,
    verify_plan,
)
from flightdeck.flightplan._emit import emit_skill
from tests.flightplan._plans import example_body, example_data
from tests.flightplan._resign import resign
from tests.flightplan.test_trust_chain import ACME, NAME, _freeze

MALLORY = "github://mallory"
DEEP = "[" * 100_000 + "]" * 100_000


@dataclass
class Store:
    old: Path  # 1.0.0
    new: Path  # 1.1.0, already verified once
    other_plan: Path  # another plan's version, same publisher and key
    keys: KeyPair
    attacker: KeyPair  # trusted by the keyring, but only for github://mallory

    @property
    def home(self) -> Path:
        return data_dir()


Damage = Callable[[Store], None]


def _resign_moved(store: Store, keys: KeyPair, edit: Callable[[dict[str, Any]], None]) -> None:
    """Re-sign the newest version and move it to the directory its new
    content hash names, as a careful attacker would."""
    resign(store.new, keys, edit)
    digest = json.loads((store.new / "SKILL.md.sig").read_text())["contentHash"]
    store.new.rename(store.new.parent / digest.removeprefix("sha256:")[:16])


def _lock(**fields: object) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        for key, value in fields.items():
            if value is None:
                data["aileron"]["lock"].pop(key, None)
            else:
                data["aileron"]["lock"][key] = value

    return edit


def _body(data: dict[str, Any]) -> None:
    data["description"] = "Version 1.1.0, quietly rewritten."


def _swap_dirs(s: Store) -> None:
    parking = s.old.parent / "parking"
    s.old.rename(parking)
    s.new.rename(s.old)
    parking.rename(s.new)


def _copy_under_other_name(s: Store) -> None:
    target = s.home / "skills" / "copied-plan" / "versions" / s.new.name
    shutil.copytree(s.new, target)


def _replace_dir(s: Store, make: Callable[[Path], None]) -> None:
    shutil.rmtree(s.new)
    make(s.new)


STORE_CASES: list[tuple[str, Damage, str, dict[str, Any], str]] = [
    # (class, damage, target, verify keyword arguments, expected code; "" = accepted)
    ("newest-version-removed", lambda s: shutil.rmtree(s.new), NAME, {}, "verify.rollback"),
    (
        "newest-version-hidden",
        lambda s: s.new.rename(s.new.parent / ".hidden"),
        NAME,
        {},
        "verify.rollback",
    ),
    ("older-version-asked-for", lambda s: None, f"{NAME}@1.0.0", {}, "verify.rollback"),
    (
        "older-version-without-asking-explicitly",
        lambda s: shutil.rmtree(s.new),
        NAME,
        {"allow_rollback": True},
        "verify.rollback",
    ),
    (  # the operator named the version and confirmed: allowed, by design
        "older-version-asked-for-and-allowed",
        lambda s: None,
        f"{NAME}@1.0.0",
        {"allow_rollback": True},
        "",
    ),
    (
        "newest-index-unreadable",
        lambda s: (s.new / "SKILL.md.sig").write_text("{"),
        NAME,
        {},
        "verify.signature_malformed",
    ),
    (
        "newest-index-nested-too-deep",
        lambda s: (s.new / "SKILL.md.sig").write_text(DEEP),
        NAME,
        {},
        "verify.signature_malformed",
    ),
    (
        "newest-signature-removed",
        lambda s: (s.new / "SKILL.md.sig").unlink(),
        NAME,
        {},
        "verify.signature_missing",
    ),
    (
        "newest-directory-a-file",
        lambda s: _replace_dir(s, lambda p: p.write_text("x")),
        NAME,
        {},
        "verify.unreadable",
    ),
    (
        "newest-directory-dangling-symlink",
        lambda s: _replace_dir(s, lambda p: os.symlink(p.parent / "gone", p)),
        NAME,
        {},
        "verify.unreadable",
    ),
    (
        "newest-directory-symlink-to-older",
        lambda s: _replace_dir(s, lambda p: os.symlink(s.old, p)),
        NAME,
        {},
        "verify.store_mismatch",
    ),
    ("version-directories-swapped", _swap_dirs, NAME, {}, "verify.store_mismatch"),
    (
        "older-meta-relabelled",
        lambda s: (s.old / "meta.json").write_text(
            (s.old / "meta.json").read_text().replace('"1.0.0"', '"9.0.0"')
        ),
        f"{NAME}@9.0.0",
        {},
        "store.not_found",
    ),
    (  # meta.json is an unsigned index, never read for a decision
        "older-meta-relabelled-newest-still-served",
        lambda s: (s.old / "meta.json").write_text(
            (s.old / "meta.json").read_text().replace('"1.0.0"', '"9.0.0"')
        ),
        NAME,
        {},
        "",
    ),
    (
        "version-copied-under-other-name",
        _copy_under_other_name,
        "copied-plan",
        {},
        "verify.store_mismatch",
    ),
    (
        "signature-from-another-plan",
        lambda s: shutil.copy(s.other_plan / "SKILL.md.sig", s.new / "SKILL.md.sig"),
        NAME,
        {},
        "verify.signature_invalid",
    ),
    (
        "whole-version-of-another-plan",
        lambda s: [shutil.copy(p, s.new / p.name) for p in s.other_plan.iterdir()],
        NAME,
        {},
        "verify.store_mismatch",
    ),
    (
        "republished-by-another-trusted-publisher",
        lambda s: _resign_moved(s, s.attacker, _lock(publisher=MALLORY, version="2.0.0")),
        NAME,
        {},
        "verify.publisher_changed",
    ),
    (
        "republished-without-publisher-by-another-key",
        lambda s: _resign_moved(s, s.attacker, _lock(publisher=None, version="2.0.0")),
        NAME,
        {},
        # A plan without a publisher needs a key pinned for its name: the
        # attacker's is not (with a pin it would be verify.publisher_changed).
        "verify.key_unpinned",
    ),
    (
        "same-label-rewritten-by-the-publisher-key",
        lambda s: _resign_moved(s, s.keys, _body),
        NAME,
        {},
        "verify.rollback",
    ),
    (
        "publisher-kept-but-attacker-key",
        lambda s: _resign_moved(s, s.attacker, _lock(version="2.0.0")),
        NAME,
        {},
        "verify.publisher_untrusted",
    ),
    (
        "explicit-key-is-not-the-signer",
        lambda s: None,
        NAME,
        {"key": "attacker"},  # replaced by the attacker's public key below
        "verify.key_mismatch",
    ),
    ("explicit-key-not-a-key", lambda s: None, NAME, {"key": b"not a key"}, "verify.key_invalid"),
    (
        "trust-state-not-json",
        lambda s: (s.home / "trust.json").write_text("{"),
        NAME,
        {},
        "trust.unreadable",
    ),
    (
        "trust-state-nested-too-deep",
        lambda s: (s.home / "trust.json").write_text(DEEP),
        NAME,
        {},
        "trust.unreadable",
    ),
    (
        "trust-state-plans-a-list",
        lambda s: (s.home / "trust.json").write_text('{"plans": []}'),
        NAME,
        {},
        "trust.unreadable",
    ),
    (
        "trust-state-a-directory",
        lambda s: ((s.home / "trust.json").unlink(), (s.home / "trust.json").mkdir()),
        NAME,
        {},
        "trust.unreadable",
    ),
    (
        "keyring-not-json",
        lambda s: (s.home / "keyring.json").write_text("{"),
        NAME,
        {},
        "keyring.unreadable",
    ),
    (
        "keyring-nested-too-deep",
        lambda s: (s.home / "keyring.json").write_text(DEEP),
        NAME,
        {},
        "keyring.unreadable",
    ),
    (
        "keyring-keys-a-mapping",
        lambda s: (s.home / "keyring.json").write_text('{"keys": {}}'),
        NAME,
        {},
        "keyring.unreadable",
    ),
    (
        "keyring-a-directory",
        lambda s: ((s.home / "keyring.json").unlink(), (s.home / "keyring.json").mkdir()),
        NAME,
        {},
        "keyring.unreadable",
    ),
    (
        "keyring-entries-malformed",
        lambda s: (s.home / "keyring.json").write_text('{"keys": [{"publisher": 1}, 3, null]}'),
        NAME,
        {},
        "verify.publisher_untrusted",
    ),
]


@pytest.fixture
def store(tmp_path: Path, keys: KeyPair, other_keys: KeyPair) -> Store:
    Keyring().trust(ACME, keys.public_path.read_bytes())
    Keyring().trust(MALLORY, other_keys.public_path.read_bytes())
    old, new = _freeze(tmp_path, keys, "1.0.0"), _freeze(tmp_path, keys, "1.1.0")
    assert verify_plan(NAME).version == "1.1.0"  # the trust state saw the newest
    return Store(old.stored.path, new.stored.path, _other_plan(tmp_path, keys), keys, other_keys)


def _other_plan(tmp_path: Path, keys: KeyPair) -> Path:
    data = example_data()
    data["name"] = "other-digest"
    source = tmp_path / "other.md"
    source.write_text(emit_skill(data, example_body()))
    outcome: FreezeOutcome = freeze_plan(
        source, signing_key=keys.private_path, publisher=ACME, version="1.1.0"
    )
    return outcome.stored.path


@pytest.mark.parametrize(
    ("damage", "target", "kwargs", "code"),
    [c[1:] for c in STORE_CASES],
    ids=[c[0] for c in STORE_CASES],
)
def test_each_store_attack_is_refused_with_its_code(
    store: Store, damage: Damage, target: str, kwargs: dict[str, Any], code: str
) -> None:
    damage(store)
    if kwargs.get("key") == "attacker":
        kwargs = {**kwargs, "key": store.attacker.public_path.read_bytes()}
    if not code:  # accepted on purpose: see the comments in STORE_CASES
        verify_plan(target, **kwargs)
        return
    with pytest.raises(FlightPlanError) as caught:
        verify_plan(target, **kwargs)
    assert caught.value.code == code, caught.value.message
