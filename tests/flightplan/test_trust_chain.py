"""The trust chain: what verify decides on is signed; rollback and
republishing are refused; explicit keys; locks that lose no entry."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from flightdeck.config import data_dir
from flightdeck.flightplan import (
    CodeResolver,
    FlightPlanError,
    FreezeOutcome,
    KeyPair,
    Keyring,
    SkillStore,
    freeze_plan,
    generate_keys,
    verify_plan,
)
from flightdeck.flightplan._emit import emit_skill
from tests.flightplan._plans import example_body, example_data

NAME = "weekly-metrics-digest"
ACME = "github://acme/digests"


def _freeze(
    tmp_path: Path,
    keys: KeyPair,
    version: str,
    *,
    publisher: str | None = ACME,
    note: str = "",
    code: CodeResolver | None = None,
) -> FreezeOutcome:
    data = example_data()
    data["description"] = f"Version {version}{note}."
    source = tmp_path / f"src-{version}{note}.md"
    source.write_text(emit_skill(data, example_body()))
    return freeze_plan(
        source, signing_key=keys.private_path, publisher=publisher, version=version, code=code
    )


@pytest.fixture
def two_versions(tmp_path: Path, keys: KeyPair) -> tuple[FreezeOutcome, FreezeOutcome]:
    Keyring().trust(ACME, keys.public_path.read_bytes())
    return _freeze(tmp_path, keys, "1.0.0"), _freeze(tmp_path, keys, "1.1.0")


def _code(target: str, **kwargs: object) -> str:
    with pytest.raises(FlightPlanError) as caught:
        verify_plan(target, **kwargs)  # type: ignore[arg-type]
    return caught.value.code


def test_missing_lock_json_is_tampering(two_versions: tuple[FreezeOutcome, ...]) -> None:
    (two_versions[1].stored.path / "lock.json").unlink()
    assert _code(f"{NAME}@1.1.0") == "verify.lock_missing"


def test_lock_json_reformatted_is_tampering(two_versions: tuple[FreezeOutcome, ...]) -> None:
    lock = two_versions[1].stored.path / "lock.json"
    lock.write_text(json.dumps(json.loads(lock.read_text()), indent=2))
    assert _code(f"{NAME}@1.1.0") == "verify.lock_tampered"


def test_meta_relabel_changes_nothing(two_versions: tuple[FreezeOutcome, ...]) -> None:
    old = two_versions[0].stored.path / "meta.json"
    old.write_text(old.read_text().replace('"1.0.0"', '"9.0.0"'))
    assert verify_plan(NAME).version == "1.1.0"
    assert _code(f"{NAME}@9.0.0") == "store.not_found"


def test_statement_removed_is_refused(two_versions: tuple[FreezeOutcome, ...]) -> None:
    sig = two_versions[1].stored.path / "SKILL.md.sig"
    envelope = json.loads(sig.read_text())
    del envelope["statement"]
    sig.write_text(json.dumps(envelope))
    assert _code(str(two_versions[1].stored.path)) == "verify.statement_missing"


def test_statement_edited_is_refused(two_versions: tuple[FreezeOutcome, ...]) -> None:
    sig = two_versions[1].stored.path / "SKILL.md.sig"
    envelope = json.loads(sig.read_text())
    envelope["statement"]["signedAt"] = "2000-01-01T00:00:00Z"
    sig.write_text(json.dumps(envelope))
    assert _code(f"{NAME}@1.1.0") == "verify.signature_invalid"


def test_signature_from_another_version_is_signature_invalid(
    two_versions: tuple[FreezeOutcome, ...],
) -> None:
    old, new = (v.stored.path for v in two_versions)
    shutil.copy(old / "SKILL.md.sig", new / "SKILL.md.sig")
    assert _code(str(new)) == "verify.signature_invalid"


def test_signed_time_is_reported(two_versions: tuple[FreezeOutcome, ...]) -> None:
    verified = verify_plan(f"{NAME}@1.1.0")
    envelope = json.loads((two_versions[1].stored.path / "SKILL.md.sig").read_text())
    assert verified.signed_at == envelope["statement"]["signedAt"]


def test_removing_the_newest_version_is_a_rollback(
    two_versions: tuple[FreezeOutcome, ...],
) -> None:
    assert verify_plan(NAME).version == "1.1.0"
    shutil.rmtree(two_versions[1].stored.path)
    assert _code(NAME) == "verify.rollback"
    assert _code(f"{NAME}@1.0.0") == "verify.rollback"
    # Only an explicit version with the explicit flag gets through.
    assert _code(NAME, allow_rollback=True) == "verify.rollback"
    assert verify_plan(f"{NAME}@1.0.0", allow_rollback=True).version == "1.0.0"


def _plant(tmp_path: Path, keys: KeyPair, version: str, publisher: str | None) -> Path:
    """A version frozen elsewhere and copied into the store, as an attacker
    who can write the store (but not use freeze on it) would."""
    elsewhere = SkillStore(tmp_path / f"elsewhere-{version}")
    data = example_data()
    data["description"] = f"Version {version} by someone else."
    source = tmp_path / f"planted-{version}.md"
    source.write_text(emit_skill(data, example_body()))
    outcome = freeze_plan(
        source, signing_key=keys.private_path, publisher=publisher, version=version,
        store=elsewhere,
    )  # fmt: skip
    target = SkillStore().root / NAME / "versions" / outcome.stored.path.name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(outcome.stored.path, target)
    return target


def test_republishing_under_another_publisher_is_refused(
    tmp_path: Path, two_versions: tuple[FreezeOutcome, ...], other_keys: KeyPair
) -> None:
    assert verify_plan(NAME).first_trust
    Keyring().trust("github://mallory", other_keys.public_path.read_bytes())
    _plant(tmp_path, other_keys, "2.0.0", "github://mallory")
    assert _code(NAME) == "verify.publisher_changed"
    repinned = verify_plan(NAME, repin=True)
    assert (repinned.publisher, repinned.first_trust) == ("github://mallory", True)
    assert verify_plan(NAME).version == "2.0.0"


def test_unpublished_plan_is_pinned_to_its_key(
    tmp_path: Path, keys: KeyPair, other_keys: KeyPair
) -> None:
    _freeze(tmp_path, keys, "1.0.0", publisher=None)
    assert verify_plan(NAME).first_trust
    _freeze(tmp_path, other_keys, "1.1.0", publisher=None)
    assert _code(NAME) == "verify.publisher_changed"


def test_explicit_key_must_be_the_signer(
    two_versions: tuple[FreezeOutcome, ...], keys: KeyPair, other_keys: KeyPair
) -> None:
    assert verify_plan(NAME, key=keys.public_path.read_bytes()).version == "1.1.0"
    assert _code(NAME, key=other_keys.public_path.read_bytes()) == "verify.key_mismatch"
    assert _code(NAME, key=b"not a key") == "verify.key_invalid"


def test_untrusted_hint_never_names_the_key_beside_the_plan(tmp_path: Path, keys: KeyPair) -> None:
    _freeze(tmp_path, keys, "1.0.0")
    with pytest.raises(FlightPlanError) as caught:
        verify_plan(NAME)
    assert caught.value.code == "verify.publisher_untrusted"
    assert "--key signer.pub.pem" not in (caught.value.hint or "")


def test_damaged_trust_state_is_not_treated_as_empty(
    two_versions: tuple[FreezeOutcome, ...],
) -> None:
    verify_plan(NAME)
    (data_dir() / "trust.json").write_text("[]")
    assert _code(NAME) == "trust.unreadable"


def test_concurrent_keyring_trust_loses_no_entry(tmp_path: Path) -> None:
    pems = [generate_keys(tmp_path / "k", f"k{i}").public_path.read_bytes() for i in range(12)]
    ring = Keyring()
    threads = [
        threading.Thread(target=ring.trust, args=(f"github://owner{i}", pem))
        for i, pem in enumerate(pems)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(Keyring().entries()) == 12


def test_cli_verify_key_and_first_trust(
    two_versions: tuple[FreezeOutcome, ...], keys: KeyPair, other_keys: KeyPair
) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "flightdeck", "verify", *args],
            capture_output=True,
            text=True,
            check=False,
        )

    first = run(NAME, "--key", str(keys.public_path))
    assert first.returncode == 0, first.stderr
    assert "first trust" in first.stdout
    refused = run(NAME, "--key", str(other_keys.public_path), "--format", "json")
    assert refused.returncode == 1
    assert "verify.key_mismatch" in refused.stdout + refused.stderr
    assert "Traceback" not in refused.stderr
