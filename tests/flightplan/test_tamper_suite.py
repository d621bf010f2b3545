"""A tamper suite over one stored version: each damage has its own code and
never a traceback."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from flightdeck.flightplan import FlightPlanError, FreezeOutcome, KeyPair, Keyring, verify_plan
from tests.flightplan.test_trust_chain import ACME, _freeze

Damage = Callable[[Path, Path], None]  # (version dir, the other version's dir)


def _envelope(folder: Path, change: Callable[[dict[str, object]], None]) -> None:
    sig = folder / "SKILL.md.sig"
    data = json.loads(sig.read_text())
    change(data)
    sig.write_text(json.dumps(data))


def _statement(key: str, value: object) -> Damage:
    return lambda f, o: _envelope(f, lambda d: d["statement"].__setitem__(key, value))  # type: ignore[attr-defined]


def _write(name: str, text: str) -> Damage:
    return lambda f, o: (f / name).write_text(text)


def _copy(name: str) -> Damage:
    return lambda f, o: shutil.copy(o / name, f / name)


def _truncate(name: str, keep: int) -> Damage:
    return lambda f, o: (f / name).write_bytes((f / name).read_bytes()[:keep])


def _remove(name: str) -> Damage:
    return lambda f, o: (f / name).unlink()


def _symlink(name: str) -> Damage:
    def damage(f: Path, o: Path) -> None:
        (f / name).unlink()
        os.symlink(o / name, f / name)

    return damage


def _edit(name: str, old: str, new: str) -> Damage:
    def damage(f: Path, o: Path) -> None:
        text = (f / name).read_text()
        assert old in text
        (f / name).write_text(text.replace(old, new, 1))

    return damage


CASES: list[tuple[str, Damage, str]] = [
    ("lock-missing", _remove("lock.json"), "verify.lock_missing"),
    ("lock-symlink-other", _symlink("lock.json"), "verify.lock_missing"),
    ("lock-from-other-version", _copy("lock.json"), "verify.lock_tampered"),
    ("lock-truncated", _truncate("lock.json", 20), "verify.lock_tampered"),
    ("lock-empty", _write("lock.json", ""), "verify.lock_tampered"),
    ("lock-not-json", _write("lock.json", "{nope"), "verify.lock_tampered"),
    ("lock-a-list", _write("lock.json", "[]\n"), "verify.lock_tampered"),
    ("sig-missing", _remove("SKILL.md.sig"), "verify.signature_missing"),
    ("sig-empty", _write("SKILL.md.sig", ""), "verify.signature_malformed"),
    ("sig-truncated", _truncate("SKILL.md.sig", 30), "verify.signature_malformed"),
    ("sig-a-list", _write("SKILL.md.sig", "[]"), "verify.signature_malformed"),
    (
        "sig-other-algorithm",
        lambda f, o: _envelope(f, lambda d: d.__setitem__("algorithm", "rsa")),
        "verify.signature_malformed",
    ),
    ("sig-from-other-version", _copy("SKILL.md.sig"), "verify.signature_invalid"),
    ("sig-symlink-other", _symlink("SKILL.md.sig"), "verify.signature_invalid"),
    (
        "sig-signature-garbage",
        lambda f, o: _envelope(f, lambda d: d.__setitem__("signature", "!!")),
        "verify.signature_invalid",
    ),
    (
        "sig-content-hash-edited",
        lambda f, o: _envelope(f, lambda d: d.__setitem__("contentHash", "sha256:00")),
        "verify.signature_invalid",
    ),
    (
        "statement-removed",
        lambda f, o: _envelope(f, lambda d: d.pop("statement")),
        "verify.statement_missing",
    ),
    ("statement-wrong-type", _statement("type", "other/v9"), "verify.statement_missing"),
    ("statement-version-edited", _statement("version", "9.0.0"), "verify.signature_invalid"),
    ("statement-name-edited", _statement("name", "other-plan"), "verify.signature_invalid"),
    (
        "statement-publisher-edited",
        _statement("publisher", "github://mallory"),
        "verify.signature_invalid",
    ),
    (
        "statement-time-edited",
        _statement("signedAt", "1999-01-01T00:00:00Z"),
        "verify.signature_invalid",
    ),
    (
        "statement-signature-removed",
        lambda f, o: _envelope(f, lambda d: d.pop("statementSignature")),
        "verify.signature_invalid",
    ),
    (
        "statement-from-other-version",
        lambda f, o: _envelope(
            f,
            lambda d: d.update(
                {
                    k: json.loads((o / "SKILL.md.sig").read_text())[k]
                    for k in ("statement", "statementSignature")
                }
            ),
        ),
        "verify.statement_mismatch",
    ),
    ("pub-missing", _remove("signer.pub.pem"), "verify.public_key_missing"),
    ("pub-garbage", _write("signer.pub.pem", "not a key"), "verify.public_key_invalid"),
    ("pub-truncated", _truncate("signer.pub.pem", 40), "verify.public_key_invalid"),
    (
        "skill-body-edited",
        _edit("SKILL.md", "tracking issue that", "tracking issue thaT"),
        "verify.body_tampered",
    ),
    ("skill-from-other-version", _copy("SKILL.md"), "verify.signature_invalid"),
    ("skill-truncated", _truncate("SKILL.md", 50), "verify.unreadable"),
    ("skill-empty", _write("SKILL.md", ""), "verify.unreadable"),
    ("skill-not-yaml", _write("SKILL.md", "---\n: : :\n---\n"), "verify.unreadable"),
    (
        "skill-version-relabelled",
        _edit("SKILL.md", "version: 1.0.0", "version: 9.0.0"),
        "verify.lock_tampered",
    ),
    ("meta-relabelled", _edit("meta.json", '"1.0.0"', '"9.0.0"'), ""),
    ("meta-removed", _remove("meta.json"), ""),
    ("meta-garbage", _write("meta.json", "{"), ""),
]


@pytest.fixture
def pair(tmp_path: Path, keys: KeyPair) -> tuple[FreezeOutcome, FreezeOutcome]:
    Keyring().trust(ACME, keys.public_path.read_bytes())
    return _freeze(tmp_path, keys, "1.0.0"), _freeze(tmp_path, keys, "1.1.0")


@pytest.mark.parametrize(("damage", "code"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_damage_is_refused_with_its_code(
    pair: tuple[FreezeOutcome, FreezeOutcome], damage: Damage, code: str
) -> None:
    folder, other = pair[0].stored.path, pair[1].stored.path
    damage(folder, other)
    if not code:  # the unsigned index: nothing changes
        assert verify_plan(str(folder)).version == "1.0.0"
        return
    with pytest.raises(FlightPlanError) as caught:
        verify_plan(str(folder))
    assert caught.value.code == code
