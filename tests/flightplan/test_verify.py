"""Verify: every tampering caught with its own code; keyring and publishers."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from flightdeck.flightplan import (
    FlightPlanError,
    FreezeOutcome,
    KeyPair,
    Keyring,
    canonical_bytes,
    freeze_plan,
    load_private_key,
    verify_plan,
)
from flightdeck.flightplan._emit import emit_skill
from flightdeck.flightplan.signing._signing import sign
from tests.flightplan._plans import example_body, example_data

NAME = "weekly-metrics-digest"


@pytest.fixture
def frozen(example_file: Path, keys: KeyPair) -> FreezeOutcome:
    outcome = freeze_plan(
        example_file,
        signing_key=keys.private_path,
        publisher="github://acme/digests",
        version="1.0.0",
    )
    Keyring().trust("github://acme/digests", keys.public_path.read_bytes())
    return outcome


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text("utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_untouched_plan_verifies(frozen: FreezeOutcome, keys: KeyPair) -> None:
    verified = verify_plan(f"{NAME}@1.0.0")
    assert verified.content_hash == frozen.frozen.content_hash
    assert verified.signer_key_id == keys.key_id
    assert verified.publisher == "github://acme/digests"
    assert verified.plan.step("summarize") is not None
    assert verified.lock.resolved_capability_set[0].version == "2.22.4"


def _body(folder: Path, keys: KeyPair, other: KeyPair) -> None:
    _edit(folder / "SKILL.md", "tracking issue that", "tracking issue thaT")


def _frontmatter(folder: Path, keys: KeyPair, other: KeyPair) -> None:
    _edit(folder / "SKILL.md", "- api.example.com", "- api.evil.example")


def _lock_in_skill(folder: Path, keys: KeyPair, other: KeyPair) -> None:
    _edit(folder / "SKILL.md", "aws-cli@2.22.4", "aws-cli@2.13.38")


def _lock_file(folder: Path, keys: KeyPair, other: KeyPair) -> None:
    _edit(folder / "lock.json", "aws-cli@2.22.4", "aws-cli@2.13.38")


def _swap_key(folder: Path, keys: KeyPair, other: KeyPair) -> None:
    shutil.copy(other.public_path, folder / "signer.pub.pem")


def _other_signature(folder: Path, keys: KeyPair, other: KeyPair) -> None:
    from flightdeck.documents import parse_document

    document = parse_document((folder / "SKILL.md").read_text()).document
    assert document is not None
    envelope = json.loads((folder / "SKILL.md.sig").read_text())
    message = canonical_bytes(document.data, document.body)
    envelope["signature"] = sign(load_private_key(other.private_path), message)
    (folder / "SKILL.md.sig").write_text(json.dumps(envelope))


def _no_signature(folder: Path, keys: KeyPair, other: KeyPair) -> None:
    (folder / "SKILL.md.sig").unlink()


TAMPERS: list[tuple[str, Callable[[Path, KeyPair, KeyPair], None], str]] = [
    ("body-byte", _body, "verify.body_tampered"),
    ("frontmatter-field", _frontmatter, "verify.frontmatter_tampered"),
    ("lock-in-skill", _lock_in_skill, "verify.lock_tampered"),
    ("lock-file", _lock_file, "verify.lock_tampered"),
    ("public-key-swapped", _swap_key, "verify.public_key_mismatch"),
    ("signature-from-another-key", _other_signature, "verify.signature_invalid"),
    ("signature-missing", _no_signature, "verify.signature_missing"),
]


@pytest.mark.parametrize(
    ("tamper", "code"), [(t, c) for _, t, c in TAMPERS], ids=[n for n, _, _ in TAMPERS]
)
def test_tampering_is_caught_with_its_code(
    frozen: FreezeOutcome,
    keys: KeyPair,
    other_keys: KeyPair,
    tamper: Callable[[Path, KeyPair, KeyPair], None],
    code: str,
) -> None:
    tamper(frozen.stored.path, keys, other_keys)
    with pytest.raises(FlightPlanError) as caught:
        verify_plan(NAME)
    assert caught.value.code == code


def test_edited_content_hash_is_a_lock_tampering(frozen: FreezeOutcome) -> None:
    skill = frozen.stored.path / "SKILL.md"
    digest = frozen.frozen.content_hash
    _edit(skill, digest, "sha256:" + ("0" if digest[7] != "0" else "1") + digest[8:])
    with pytest.raises(FlightPlanError) as caught:
        verify_plan(NAME)
    assert caught.value.code == "verify.lock_tampered"


def test_seed003_untrusted_publisher_is_refused(frozen: FreezeOutcome) -> None:
    Keyring().untrust("github://acme/digests")
    with pytest.raises(FlightPlanError) as caught:
        verify_plan(NAME)
    assert caught.value.code == "verify.publisher_untrusted"


def test_resigned_by_an_attacker_key_is_an_untrusted_publisher(
    frozen: FreezeOutcome, tmp_path: Path, other_keys: KeyPair
) -> None:
    """Content, signature and key all replaced consistently: only the keyring
    can tell, and it does."""
    from flightdeck.flightplan import SkillStore

    copy = tmp_path / "attacker"
    attacker = freeze_plan(
        frozen.stored.skill_path,
        signing_key=other_keys.private_path,
        publisher="github://acme/digests",
        version="1.0.0",
        store=SkillStore(copy),
    )
    with pytest.raises(FlightPlanError) as caught:
        verify_plan(attacker.stored.path)
    assert caught.value.code == "verify.publisher_untrusted"


def test_owner_trust_covers_its_repositories_but_repo_trust_does_not_widen(
    example_file: Path, keys: KeyPair
) -> None:
    freeze_plan(example_file, signing_key=keys.private_path, publisher="github://acme/other")
    Keyring().trust("github://acme/digests", keys.public_path.read_bytes())
    with pytest.raises(FlightPlanError) as caught:
        verify_plan(NAME)
    assert caught.value.code == "verify.publisher_untrusted"
    Keyring().trust("github://acme", keys.public_path.read_bytes())
    assert verify_plan(NAME).publisher == "github://acme/other"


def test_no_publisher_means_no_publisher_gate(example_file: Path, keys: KeyPair) -> None:
    freeze_plan(example_file, signing_key=keys.private_path)
    assert verify_plan(NAME).publisher is None


def test_verify_by_path_of_a_copied_version_directory(
    frozen: FreezeOutcome, tmp_path: Path
) -> None:
    copy = tmp_path / "shipped"
    shutil.copytree(frozen.stored.path, copy)
    assert verify_plan(copy).content_hash == frozen.frozen.content_hash
    assert verify_plan(copy / "SKILL.md").content_hash == frozen.frozen.content_hash


def test_unfrozen_skill_is_not_verifiable(example_file: Path) -> None:
    with pytest.raises(FlightPlanError) as caught:
        verify_plan(example_file)
    assert caught.value.code == "verify.not_frozen"


def test_unknown_name_is_not_found() -> None:
    with pytest.raises(FlightPlanError) as caught:
        verify_plan("no-such-plan@1.0.0")
    assert caught.value.code == "store.not_found"


def test_keyring_trust_list_untrust(keys: KeyPair, other_keys: KeyPair) -> None:
    ring = Keyring()
    ring.trust("github://acme", keys.public_path.read_bytes())
    ring.trust("github://acme", keys.public_path.read_bytes())  # idempotent
    ring.trust("github://acme", other_keys.public_path.read_bytes())
    assert [e.key_id for e in ring.entries()] == sorted([keys.key_id, other_keys.key_id])
    assert ring.untrust("github://acme", other_keys.key_id) == 1
    assert [e.key_id for e in ring.entries()] == [keys.key_id]
    with pytest.raises(FlightPlanError) as caught:
        ring.untrust("github://nobody")
    assert caught.value.code == "keyring.not_trusted"


@pytest.mark.parametrize(
    ("publisher", "pem", "code"),
    [
        ("https://github.com/acme", b"", "keyring.invalid_publisher"),
        ("github://acme", b"not a key", "keyring.invalid_key"),
    ],
)
def test_keyring_rejects_bad_input(publisher: str, pem: bytes, code: str) -> None:
    with pytest.raises(FlightPlanError) as caught:
        Keyring().trust(publisher, pem)
    assert caught.value.code == code


def test_edited_store_index_cannot_serve_another_version(
    frozen: FreezeOutcome, tmp_path: Path, keys: KeyPair
) -> None:
    """meta.json is an unsigned index nobody reads: relabelling changes nothing."""
    data = example_data()
    data["description"] = "Version two."
    source = tmp_path / "v2.md"
    source.write_text(emit_skill(data, example_body()))
    freeze_plan(
        source, signing_key=keys.private_path, publisher="github://acme/digests", version="2.0.0"
    )
    meta = frozen.stored.path / "meta.json"
    meta.write_text(meta.read_text().replace('"1.0.0"', '"3.0.0"'))
    with pytest.raises(FlightPlanError) as caught:
        verify_plan(f"{NAME}@3.0.0")
    assert caught.value.code == "store.not_found"
    assert verify_plan(NAME).version == "2.0.0"
    assert verify_plan(f"{NAME}@2.0.0").version == "2.0.0"
