"""Keys over time: co-signing (rotation), revocation, and keys pinned per
plan name for plans without a publisher. Each refusal here fails its test
when the refusal is removed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from flightdeck.flightplan import (
    FlightPlanError,
    FreezeOutcome,
    KeyPair,
    Keyring,
    cosign_version,
    freeze_plan,
    generate_keys,
    verify_plan,
)
from flightdeck.flightplan._canonical import jcs
from flightdeck.flightplan._emit import emit_skill
from flightdeck.flightplan.signing._trust import TrustState
from tests.flightplan._plans import example_body, example_data

NAME = "weekly-metrics-digest"
ACME = "github://acme/digests"


def _freeze(
    tmp_path: Path, keys: KeyPair, version: str, publisher: str | None = ACME
) -> FreezeOutcome:
    data = example_data()
    data["description"] = f"Version {version}."
    source = tmp_path / f"src-{version}.md"
    source.write_text(emit_skill(data, example_body()))
    return freeze_plan(source, signing_key=keys.private_path, publisher=publisher, version=version)


def _code(target: str, **kwargs: object) -> str:
    with pytest.raises(FlightPlanError) as caught:
        verify_plan(target, **kwargs)  # type: ignore[arg-type]
    return caught.value.code


def _pub(pair: KeyPair) -> bytes:
    return pair.public_path.read_bytes()


def test_cosigned_version_survives_untrusting_the_old_key(
    tmp_path: Path, keys: KeyPair, other_keys: KeyPair
) -> None:
    ring = Keyring()
    ring.trust(ACME, _pub(keys))
    frozen = _freeze(tmp_path, keys, "1.0.0")
    folder = frozen.stored.path
    before = {p.name: p.read_bytes() for p in folder.iterdir()}

    outcome = cosign_version(f"{NAME}@1.0.0", signing_key=other_keys.private_path)
    assert outcome.created and outcome.key_id == other_keys.key_id
    cosig = folder / f"SKILL.md.{other_keys.key_id.removeprefix('sha256:')}.sig"
    assert outcome.path == cosig
    # Nothing else of the version changed; co-signing again writes nothing new.
    assert {n: (folder / n).read_bytes() for n in before} == before
    first = cosig.read_bytes()
    again = cosign_version(f"{NAME}@1.0.0", signing_key=other_keys.private_path)
    assert not again.created and cosig.read_bytes() == first
    assert first.endswith(b"}\n") and json.loads(first)["keyId"] == other_keys.key_id
    # The first signer "co-signing" is a no-op pointing at SKILL.md.sig.
    assert cosign_version(f"{NAME}@1.0.0", signing_key=keys.private_path).path.name == (
        "SKILL.md.sig"
    )

    ring.trust(ACME, _pub(other_keys))
    ring.untrust(ACME, keys.key_id)
    verified = verify_plan(f"{NAME}@1.0.0")
    assert verified.signer_key_id == other_keys.key_id
    # Without the co-signature the old key alone no longer counts.
    cosig.unlink()
    assert _code(f"{NAME}@1.0.0") == "verify.publisher_untrusted"


def test_cosigning_needs_a_version_that_verifies_now(
    tmp_path: Path, keys: KeyPair, other_keys: KeyPair
) -> None:
    _freeze(tmp_path, keys, "1.0.0")  # acme's key is not trusted
    with pytest.raises(FlightPlanError) as caught:
        cosign_version(f"{NAME}@1.0.0", signing_key=other_keys.private_path)
    assert caught.value.code == "verify.publisher_untrusted"
    assert not list(_freeze(tmp_path, keys, "1.0.0").stored.path.glob("SKILL.md.*.sig"))


@pytest.mark.parametrize(
    "damage",
    ["signature", "statement", "renamed", "other-version", "junk", "content-hash", "algorithm"],
)
def test_a_damaged_cosignature_is_refused(
    tmp_path: Path, keys: KeyPair, other_keys: KeyPair, damage: str
) -> None:
    Keyring().trust(ACME, _pub(keys))
    one, two = _freeze(tmp_path, keys, "1.0.0"), _freeze(tmp_path, keys, "1.1.0")
    cosig = cosign_version(f"{NAME}@1.0.0", signing_key=other_keys.private_path).path
    data = json.loads(cosig.read_text())
    if damage == "signature":
        data["signature"] = json.loads((one.stored.path / "SKILL.md.sig").read_text())["signature"]
        cosig.write_text(json.dumps(data))
    elif damage == "statement":
        data["statementSignature"] = data["signature"]
        cosig.write_text(json.dumps(data))
    elif damage == "renamed":
        cosig.rename(cosig.with_name("SKILL.md." + "0" * 64 + ".sig"))
    elif damage in ("content-hash", "algorithm"):
        key = "contentHash" if damage == "content-hash" else "algorithm"
        data[key] = "sha256:" + "0" * 64 if damage == "content-hash" else "rsa"
        cosig.write_bytes(jcs(data) + b"\n")
    elif damage == "other-version":
        shutil.copy(cosig, two.stored.path / cosig.name)
        cosig.unlink()
    else:
        cosig.write_text("not json")
    target = f"{NAME}@1.1.0" if damage == "other-version" else f"{NAME}@1.0.0"
    assert _code(target, allow_rollback=True) == "verify.cosignature_invalid"


def test_a_revoked_key_never_counts(tmp_path: Path, keys: KeyPair, other_keys: KeyPair) -> None:
    ring = Keyring()
    ring.trust(ACME, _pub(keys))
    _freeze(tmp_path, keys, "1.0.0")
    assert verify_plan(NAME).signer_key_id == keys.key_id
    record = ring.revoke(keys.key_id, "laptop stolen")
    assert ring.revoke(keys.key_id, "again") == record  # the first record stays
    with pytest.raises(FlightPlanError) as caught:
        verify_plan(NAME)
    assert caught.value.code == "verify.key_revoked"
    assert "laptop stolen" in caught.value.message
    # Still trusted for the publisher, still refused; --key cannot bring it back.
    assert [k.key_id for k in ring.trusted_for(ACME)] == [keys.key_id]
    assert _code(NAME, key=_pub(keys)) == "verify.key_revoked"
    data = json.loads(ring.path.read_text())
    assert data["revoked"] == [
        {"key_id": keys.key_id, "reason": "laptop stolen", "revoked_at": record.revoked_at}
    ]


def test_revoked_key_with_a_trusted_cosigner_verifies(
    tmp_path: Path, keys: KeyPair, other_keys: KeyPair
) -> None:
    ring = Keyring()
    ring.trust(ACME, _pub(keys))
    _freeze(tmp_path, keys, "1.0.0")
    cosign_version(NAME, signing_key=other_keys.private_path)
    ring.revoke(keys.key_id)
    # The co-signer is not trusted yet: not revoked-only, so untrusted.
    assert _code(NAME) == "verify.publisher_untrusted"
    ring.trust(ACME, _pub(other_keys))
    assert verify_plan(NAME).signer_key_id == other_keys.key_id
    ring.revoke(other_keys.key_id)
    assert _code(NAME) == "verify.key_revoked"


def test_revoked_keys_are_not_trusted_again_without_force(tmp_path: Path, keys: KeyPair) -> None:
    ring = Keyring()
    ring.revoke(keys.key_id)
    with pytest.raises(FlightPlanError) as caught:
        ring.trust(ACME, _pub(keys))
    assert caught.value.code == "keyring.key_revoked"
    with pytest.raises(FlightPlanError) as caught:
        ring.trust_plan(NAME, _pub(keys))
    assert caught.value.code == "keyring.key_revoked"
    assert ring.entries() == []
    ring.trust(ACME, _pub(keys), force=True)
    assert ring.revocations() == []  # --force lifts the revocation
    _freeze(tmp_path, keys, "1.0.0")
    assert verify_plan(NAME).signer_key_id == keys.key_id


def test_freeze_and_sign_refuse_a_revoked_key(
    tmp_path: Path, keys: KeyPair, other_keys: KeyPair
) -> None:
    Keyring().trust(ACME, _pub(keys))
    _freeze(tmp_path, keys, "1.0.0")
    Keyring().revoke(other_keys.key_id)
    with pytest.raises(FlightPlanError) as caught:
        cosign_version(NAME, signing_key=other_keys.private_path)
    assert caught.value.code == "sign.key_revoked"
    with pytest.raises(FlightPlanError) as caught:
        _freeze(tmp_path, other_keys, "2.0.0")
    assert caught.value.code == "freeze.key_revoked"


def test_revoke_needs_a_key_id() -> None:
    with pytest.raises(FlightPlanError) as caught:
        Keyring().revoke("sha256:nothex")
    assert caught.value.code == "keyring.invalid_key_id"


def test_plan_without_publisher_needs_a_key_pinned_for_its_name(
    tmp_path: Path, keys: KeyPair, other_keys: KeyPair
) -> None:
    frozen = _freeze(tmp_path, keys, "1.0.0", publisher=None)
    # The signer pinned their own key at freeze.
    assert frozen.key_pinned and [k.key_id for k in Keyring().pinned_for(NAME)] == [keys.key_id]
    ring = Keyring()
    ring.untrust_plan(NAME)
    with pytest.raises(FlightPlanError) as caught:
        verify_plan(NAME)
    assert caught.value.code == "verify.key_unpinned"
    hint = caught.value.hint or ""
    assert "keyring trust --plan weekly-metrics-digest" in hint
    assert str(frozen.stored.path) not in hint and "--key signer.pub.pem" not in hint
    # A key pinned for another name, or trusted for a publisher, does not count.
    ring.trust_plan("another-plan", _pub(keys))
    ring.trust("github://acme", _pub(keys))
    assert _code(NAME) == "verify.key_unpinned"
    # --key names the signer: accepted; another key is a mismatch.
    assert verify_plan(NAME, key=_pub(keys)).signer_key_id == keys.key_id
    assert _code(NAME, key=_pub(other_keys)) == "verify.key_mismatch"
    ring.trust_plan(NAME, _pub(keys))
    assert verify_plan(NAME).signer_key_id == keys.key_id


def test_rotating_a_plan_without_publisher_moves_its_pin(
    tmp_path: Path, keys: KeyPair, other_keys: KeyPair
) -> None:
    _freeze(tmp_path, keys, "1.0.0", publisher=None)
    assert verify_plan(NAME).first_trust
    cosign_version(f"{NAME}@1.0.0", signing_key=other_keys.private_path)
    ring = Keyring()
    ring.trust_plan(NAME, _pub(other_keys))
    ring.untrust_plan(NAME, keys.key_id)
    assert verify_plan(NAME).signer_key_id == other_keys.key_id
    assert TrustState().get(NAME).owner == f"key:{other_keys.key_id}"  # type: ignore[union-attr]
    # A later version by the new key alone is the same owner, not a new publisher.
    _freeze(tmp_path, other_keys, "1.1.0", publisher=None)
    assert verify_plan(NAME).version == "1.1.0"


def test_a_third_key_alone_does_not_move_the_pin(
    tmp_path: Path, keys: KeyPair, other_keys: KeyPair
) -> None:
    _freeze(tmp_path, keys, "1.0.0", publisher=None)
    verify_plan(NAME)
    third = generate_keys(tmp_path / "third")
    Keyring().trust_plan(NAME, _pub(third))
    _freeze(tmp_path, third, "1.1.0", publisher=None)
    assert _code(NAME) == "verify.publisher_changed"


def test_plan_pins_need_a_plan_name(keys: KeyPair) -> None:
    with pytest.raises(FlightPlanError) as caught:
        Keyring().trust_plan("Not A Name", _pub(keys))
    assert caught.value.code == "keyring.invalid_plan"


def test_a_cosignature_checks_out_from_the_documented_format_alone(
    tmp_path: Path, keys: KeyPair, other_keys: KeyPair
) -> None:
    """docs/canonical-bytes.md, "Co-signatures": an independent check with
    nothing but cryptography, hashlib and the documented rules."""
    import base64
    import hashlib

    from cryptography.hazmat.primitives import serialization

    from flightdeck.flightplan import canonical_bytes
    from flightdeck.flightplan._canonical import jcs
    from tests.flightplan._plans import split

    Keyring().trust(ACME, _pub(keys))
    folder = _freeze(tmp_path, keys, "1.0.0").stored.path
    path = cosign_version(NAME, signing_key=other_keys.private_path).path
    raw = path.read_bytes()
    data = json.loads(raw)
    assert raw == jcs(data) + b"\n"
    public = serialization.load_pem_public_key(data["publicKey"].encode())
    pub_raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    hex_id = hashlib.sha256(pub_raw).hexdigest()
    assert path.name == f"SKILL.md.{hex_id}.sig" and data["keyId"] == f"sha256:{hex_id}"
    frontmatter, body = split((folder / "SKILL.md").read_text())
    message = canonical_bytes(frontmatter, body)
    assert data["contentHash"] == "sha256:" + hashlib.sha256(message).hexdigest()
    public.verify(base64.b64decode(data["signature"]), message)  # type: ignore[union-attr, call-arg]
    statement = json.loads((folder / "SKILL.md.sig").read_text())["statement"]
    public.verify(base64.b64decode(data["statementSignature"]), jcs(statement))  # type: ignore[union-attr, call-arg]


def test_explicit_key_considers_only_that_signer(
    tmp_path: Path, keys: KeyPair, other_keys: KeyPair
) -> None:
    Keyring().trust(ACME, _pub(keys))
    _freeze(tmp_path, keys, "1.0.0")
    cosign_version(NAME, signing_key=other_keys.private_path)
    # The co-signer is a signer, but not trusted for acme: naming it must not
    # fall back to the trusted first signer.
    assert _code(NAME, key=_pub(other_keys)) == "verify.publisher_untrusted"
    assert verify_plan(NAME, key=_pub(keys)).signer_key_id == keys.key_id


def test_the_pinned_key_stays_the_owner_while_it_counts(
    tmp_path: Path, keys: KeyPair, other_keys: KeyPair
) -> None:
    _freeze(tmp_path, keys, "1.0.0", publisher=None)
    verify_plan(NAME)
    Keyring().trust_plan(NAME, _pub(other_keys))
    _freeze(tmp_path, other_keys, "1.1.0", publisher=None)
    cosign_version(
        f"{NAME}@1.1.0",
        signing_key=keys.private_path,
        trust=TrustState(tmp_path / "elsewhere.json"),
    )
    assert verify_plan(NAME).signer_key_id == keys.key_id
    assert TrustState().get(NAME).owner == f"key:{keys.key_id}"  # type: ignore[union-attr]


def test_an_older_version_can_be_cosigned(
    tmp_path: Path, keys: KeyPair, other_keys: KeyPair
) -> None:
    Keyring().trust(ACME, _pub(keys))
    _freeze(tmp_path, keys, "1.0.0")
    _freeze(tmp_path, keys, "1.1.0")
    verify_plan(NAME)
    assert cosign_version(f"{NAME}@1.0.0", signing_key=other_keys.private_path).created


def test_a_changed_cosignature_file_is_not_overwritten(
    tmp_path: Path, keys: KeyPair, other_keys: KeyPair
) -> None:
    Keyring().trust(ACME, _pub(keys))
    _freeze(tmp_path, keys, "1.0.0")
    path = cosign_version(NAME, signing_key=other_keys.private_path).path
    path.write_text("changed")
    with pytest.raises(FlightPlanError) as caught:
        cosign_version(NAME, signing_key=other_keys.private_path)
    # verify refuses first: the store was changed.
    assert caught.value.code == "verify.cosignature_invalid"
    from flightdeck.flightplan import SkillStore

    with pytest.raises(FlightPlanError) as caught:
        SkillStore().add_cosignature(path.parent, path.name, b"other")
    assert caught.value.code == "store.version_conflict"
    assert path.read_text() == "changed"


def test_move_owner_moves_only_from_the_named_owner(tmp_path: Path) -> None:
    state = TrustState(tmp_path / "trust.json")
    state.check_and_record(NAME, "key:a", "1.0.0", "sha256:1", explicit_version=False)
    assert not state.move_owner(NAME, "key:b", "key:c")
    assert state.get(NAME).owner == "key:a"  # type: ignore[union-attr]
    assert state.move_owner(NAME, "key:a", "key:c")
    record = state.get(NAME)
    assert record is not None and (record.owner, record.version) == ("key:c", "1.0.0")


def test_refreezing_with_a_new_key_points_to_sign(
    tmp_path: Path, keys: KeyPair, other_keys: KeyPair
) -> None:
    Keyring().trust(ACME, _pub(keys))
    _freeze(tmp_path, keys, "1.0.0")
    with pytest.raises(FlightPlanError) as caught:
        _freeze(tmp_path, other_keys, "1.0.0")
    assert caught.value.code == "store.version_conflict"
    assert "flightdeck sign NAME@VERSION" in (caught.value.hint or "")
