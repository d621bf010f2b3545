"""A tamper suite over one stored version, verified by its path: each damage
has its own code and never a traceback (a Python error fails the test, as
only FlightPlanError is caught). Store-level attacks verified by name, with
a trust state that has seen the newest version, are in test_tamper_store.py."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from flightdeck.flightplan import (
    FlightPlanError,
    FreezeOutcome,
    KeyPair,
    Keyring,
    verify_plan,
)
from flightdeck.flightplan._canonical import jcs
from tests.flightplan._code import FakeCode
from tests.flightplan._resign import resign
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


def _symlink_to(name: str, target: Callable[[Path, Path], Path]) -> Damage:
    def damage(f: Path, o: Path) -> None:
        (f / name).unlink()
        os.symlink(target(f, o), f / name)

    return damage


def _append(name: str, text: str) -> Damage:
    return lambda f, o: (f / name).write_text((f / name).read_text() + text)


def _directory(name: str) -> Damage:
    def damage(f: Path, o: Path) -> None:
        (f / name).unlink()
        (f / name).mkdir()

    return damage


def _bytes(name: str, raw: bytes) -> Damage:
    return lambda f, o: (f / name).write_bytes(raw)


def _lock_field(key: str, value: object) -> Damage:
    # Well-formed JCS with one field changed: only the comparison with the
    # lock inside SKILL.md (and the signed lock digest) can catch it.
    def damage(f: Path, o: Path) -> None:
        lock = json.loads((f / "lock.json").read_text())
        lock[key] = value
        (f / "lock.json").write_bytes(jcs(lock) + b"\n")

    return damage


def _resigned(edit: Callable[[dict[str, Any]], None], keys: str = "same") -> Damage:
    def damage(f: Path, o: Path) -> None:
        resign(f, KEYS[keys], edit)

    return damage


def _dup_step(data: dict[str, Any]) -> None:
    data["aileron"]["steps"][1]["id"] = data["aileron"]["steps"][0]["id"]


def _cycle(data: dict[str, Any]) -> None:
    data["aileron"]["steps"][0]["args"]["metric_set"] = "steps.file_issue.issue"


DEEP = "[" * 100_000 + "]" * 100_000  # json.loads raises RecursionError, not ValueError
KEYS: dict[str, KeyPair] = {}  # filled by the fixture: "same" signs the pair, "other" not


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
    (
        "pins-added-to-unpinned",
        _write("code-pins.json", '{"codePins":[]}\n'),
        "verify.code_pins_unsigned",
    ),
    ("meta-relabelled", _edit("meta.json", '"1.0.0"', '"9.0.0"'), ""),
    ("meta-removed", _remove("meta.json"), ""),
    ("meta-garbage", _write("meta.json", "{"), ""),
    ("meta-a-directory", _directory("meta.json"), ""),
    ("meta-nested-too-deep", _write("meta.json", DEEP), ""),
    # lock.json
    ("lock-a-directory", _directory("lock.json"), "verify.lock_missing"),
    (
        "lock-dangling-symlink",
        _symlink_to("lock.json", lambda f, o: f / "gone"),
        "verify.lock_missing",
    ),
    ("lock-not-utf8", _bytes("lock.json", b"\xff\xfe{}"), "verify.lock_tampered"),
    ("lock-nested-too-deep", _write("lock.json", DEEP), "verify.lock_tampered"),
    ("lock-integer-beyond-jcs", _write("lock.json", '{"a": 1e400}\n'), "verify.lock_tampered"),
    ("lock-lone-surrogate", _write("lock.json", '{"a": "\\ud800"}\n'), "verify.lock_tampered"),
    ("lock-version-edited", _lock_field("version", "9.0.0"), "verify.lock_tampered"),
    ("lock-publisher-edited", _lock_field("publisher", "github://mallory"), "verify.lock_tampered"),
    ("lock-trailing-newline-dropped", _truncate("lock.json", -1), "verify.lock_tampered"),
    # SKILL.md.sig
    ("sig-a-directory", _directory("SKILL.md.sig"), "verify.signature_missing"),
    (
        "sig-dangling-symlink",
        _symlink_to("SKILL.md.sig", lambda f, o: f / "gone"),
        "verify.signature_missing",
    ),
    ("sig-not-utf8", _bytes("SKILL.md.sig", b"\xff{}"), "verify.signature_malformed"),
    ("sig-nested-too-deep", _write("SKILL.md.sig", DEEP), "verify.signature_malformed"),
    (
        "sig-algorithm-removed",
        lambda f, o: _envelope(f, lambda d: d.pop("algorithm")),
        "verify.signature_malformed",
    ),
    (
        "sig-key-id-not-a-string",
        lambda f, o: _envelope(f, lambda d: d.__setitem__("keyId", 7)),
        "verify.public_key_mismatch",
    ),
    (
        "sig-signature-removed",
        lambda f, o: _envelope(f, lambda d: d.pop("signature")),
        "verify.signature_invalid",
    ),
    (
        "sig-signature-not-a-string",
        lambda f, o: _envelope(f, lambda d: d.__setitem__("signature", 7)),
        "verify.signature_invalid",
    ),
    (
        "sig-content-signature-from-other-version",
        lambda f, o: _envelope(
            f,
            lambda d: d.__setitem__(
                "signature", json.loads((o / "SKILL.md.sig").read_text())["signature"]
            ),
        ),
        "verify.signature_invalid",
    ),
    (
        "sig-parts-edited",  # advisory digests decide nothing
        lambda f, o: _envelope(f, lambda d: d.__setitem__("parts", [])),
        "",
    ),
    # the signed statement
    (
        "statement-a-list",
        lambda f, o: _envelope(f, lambda d: d.__setitem__("statement", [])),
        "verify.statement_missing",
    ),
    (
        "statement-type-removed",
        lambda f, o: _envelope(f, lambda d: d["statement"].pop("type")),
        "verify.statement_missing",
    ),
    (
        "statement-content-hash-edited",
        _statement("contentHash", "sha256:00"),
        "verify.signature_invalid",
    ),
    (
        "statement-lock-digest-edited",
        _statement("lockDigest", "sha256:00"),
        "verify.signature_invalid",
    ),
    ("statement-lone-surrogate", _statement("name", "\ud800"), "verify.signature_invalid"),
    ("statement-integer-beyond-jcs", _statement("extra", 10**30), "verify.signature_invalid"),
    (
        "statement-time-removed",
        lambda f, o: _envelope(f, lambda d: d["statement"].pop("signedAt")),
        "verify.signature_invalid",
    ),
    (
        "statement-signature-from-other-version",
        lambda f, o: _envelope(
            f,
            lambda d: d.__setitem__(
                "statementSignature",
                json.loads((o / "SKILL.md.sig").read_text())["statementSignature"],
            ),
        ),
        "verify.signature_invalid",
    ),
    (
        "statement-signature-not-a-string",
        lambda f, o: _envelope(f, lambda d: d.__setitem__("statementSignature", 7)),
        "verify.signature_invalid",
    ),
    # signer.pub.pem
    ("pub-a-directory", _directory("signer.pub.pem"), "verify.public_key_missing"),
    (
        "pub-dangling-symlink",
        _symlink_to("signer.pub.pem", lambda f, o: f / "gone"),
        "verify.public_key_missing",
    ),
    ("pub-not-utf8", _bytes("signer.pub.pem", b"\xff\xfe"), "verify.public_key_invalid"),
    (
        "pub-not-ed25519",
        lambda f, o: (f / "signer.pub.pem").write_bytes(EC_PEM),
        "verify.public_key_invalid",
    ),
    (
        "pub-another-ed25519-key",
        lambda f, o: shutil.copy(KEYS["other"].public_path, f / "signer.pub.pem"),
        "verify.public_key_mismatch",
    ),
    # SKILL.md
    ("skill-a-directory", _directory("SKILL.md"), "verify.unreadable"),
    ("skill-removed", _remove("SKILL.md"), "verify.unreadable"),
    (
        "skill-dangling-symlink",
        _symlink_to("SKILL.md", lambda f, o: f / "gone"),
        "verify.unreadable",
    ),
    (
        "skill-symlink-loop",
        _symlink_to("SKILL.md", lambda f, o: f / "SKILL.md"),
        "verify.unreadable",
    ),
    ("skill-symlink-other-version", _symlink("SKILL.md"), "verify.signature_invalid"),
    ("skill-not-utf8", _bytes("SKILL.md", b"\xff\xfe---\n"), "verify.unreadable"),
    ("skill-frontmatter-a-list", _write("SKILL.md", "---\n- a\n---\nbody\n"), "verify.unreadable"),
    (
        "skill-aileron-a-scalar",
        _write("SKILL.md", "---\nname: x\naileron: 3\n---\n"),
        "verify.not_frozen",
    ),
    (
        "skill-content-hash-removed",
        _edit("SKILL.md", "contentHash:", "contentHashX:"),
        "verify.not_frozen",
    ),
    (
        "skill-nested-too-deep",
        _edit("SKILL.md", "\nname:", "\ndeep: " + "[" * 5000 + "]" * 5000 + "\nname:"),
        "verify.unreadable",
    ),
    (
        "skill-integer-beyond-jcs",
        _edit("SKILL.md", "\nname:", "\nbig: 99999999999999999999999\nname:"),
        "verify.frontmatter_tampered",
    ),
    (
        "skill-description-edited",
        _edit("SKILL.md", "Version 1.0.0", "Version 1.0.1"),
        "verify.frontmatter_tampered",
    ),
    (
        "skill-lock-publisher-edited",
        _edit("SKILL.md", "github://acme/digests", "github://acme/digest"),
        "verify.lock_tampered",
    ),
    ("skill-body-appended", _append("SKILL.md", "\nrm -rf /\n"), "verify.body_tampered"),
    (
        "skill-line-endings-crlf",
        _edit("SKILL.md", "\n\n", "\r\n\r\n"),
        "",
    ),  # normalised, as specified
    # re-signed by an attacker
    ("resigned-invalid-plan-duplicate-step", _resigned(_dup_step), "verify.invalid_plan"),
    ("resigned-invalid-plan-cycle", _resigned(_cycle), "verify.invalid_plan"),
    ("resigned-by-untrusted-key", _resigned(lambda d: None, "other"), "verify.publisher_untrusted"),
    (
        "resigned-publisher-swapped",
        _resigned(
            lambda d: d["aileron"]["lock"].__setitem__("publisher", "github://mallory"), "other"
        ),
        "verify.publisher_untrusted",
    ),
]
EC_PEM = (
    ec.generate_private_key(ec.SECP256R1())
    .public_key()
    .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
)


@pytest.fixture
def pair(tmp_path: Path, keys: KeyPair, other_keys: KeyPair) -> tuple[FreezeOutcome, FreezeOutcome]:
    KEYS.update(same=keys, other=other_keys)
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


def _pins_edit(change: Callable[[dict[str, Any]], None]) -> Damage:
    # Well-formed JCS + LF with one change: only the signed digest catches it.
    def damage(f: Path, o: Path) -> None:
        pins = json.loads((f / "code-pins.json").read_text())
        change(pins)
        (f / "code-pins.json").write_bytes(jcs(pins) + b"\n")

    return damage


def _both_pins(f: Path, o: Path) -> None:
    pins = json.loads((f / "code-pins.json").read_text())["codePins"]
    resign(f, KEYS["same"], lambda d: d["aileron"]["lock"].__setitem__("codePins", pins))


def _binding_dropped(f: Path, o: Path) -> None:
    resign(f, KEYS["same"], lambda d: d.pop("metadata"))


# Damage to a version frozen with code pins (code-pins.json, bound by its
# digest in the frontmatter's metadata); the other version pins other code.
PIN_CASES: list[tuple[str, Damage, str]] = [
    ("pins-missing", _remove("code-pins.json"), "verify.code_pins_missing"),
    ("pins-a-directory", _directory("code-pins.json"), "verify.code_pins_missing"),
    (
        "pins-dangling-symlink",
        _symlink_to("code-pins.json", lambda f, o: f / "gone"),
        "verify.code_pins_missing",
    ),
    ("pins-symlink-other-version", _symlink("code-pins.json"), "verify.code_pins_missing"),
    ("pins-from-other-version", _copy("code-pins.json"), "verify.code_pins_tampered"),
    (
        "pins-digest-edited",
        _pins_edit(lambda p: p["codePins"][0].__setitem__("digest", "sha256:" + "0" * 64)),
        "verify.code_pins_tampered",
    ),
    ("pins-driver-removed", _pins_edit(lambda p: p["codePins"].pop()), "verify.code_pins_tampered"),
    ("pins-emptied", _write("code-pins.json", ""), "verify.code_pins_tampered"),
    ("pins-trailing-newline-dropped", _truncate("code-pins.json", -1), "verify.code_pins_tampered"),
    ("pins-not-utf8", _bytes("code-pins.json", b"\xff{}"), "verify.code_pins_tampered"),
    (
        "pins-binding-edited",
        _edit("SKILL.md", "flightdeck-code-pins: sha256:", "flightdeck-code-pins: sha256:0"),
        "verify.frontmatter_tampered",
    ),
    (
        "pins-binding-removed",
        _edit("SKILL.md", "flightdeck-code-pins:", "flightdeck-code-pinz:"),
        "verify.frontmatter_tampered",
    ),
    ("resigned-pins-binding-dropped", _binding_dropped, "verify.code_pins_unsigned"),
    ("resigned-pins-in-lock-and-file", _both_pins, "verify.code_pins_tampered"),
]


@pytest.fixture
def pinned_pair(
    tmp_path: Path, keys: KeyPair, other_keys: KeyPair
) -> tuple[FreezeOutcome, FreezeOutcome]:
    KEYS.update(same=keys, other=other_keys)
    Keyring().trust(ACME, keys.public_path.read_bytes())
    return tuple(  # type: ignore[return-value]
        _freeze(tmp_path, keys, version, code=FakeCode(version)) for version in ("1.0.0", "1.1.0")
    )


@pytest.mark.parametrize(
    ("damage", "code"), [c[1:] for c in PIN_CASES], ids=[c[0] for c in PIN_CASES]
)
def test_each_damage_to_the_code_pins_is_refused_with_its_code(
    pinned_pair: tuple[FreezeOutcome, FreezeOutcome], damage: Damage, code: str
) -> None:
    folder, other = pinned_pair[0].stored.path, pinned_pair[1].stored.path
    assert len(verify_plan(str(folder)).lock.code_pins) == 2  # undamaged, it verifies
    damage(folder, other)
    with pytest.raises(FlightPlanError) as caught:
        verify_plan(str(folder))
    assert caught.value.code == code
    assert caught.value.where is not None


def test_the_suite_has_at_least_sixty_distinct_classes() -> None:
    from tests.flightplan.test_tamper_store import STORE_CASES

    names = [c[0] for c in CASES] + [c[0] for c in STORE_CASES] + [c[0] for c in PIN_CASES]
    assert len(set(names)) == len(names) >= 60
