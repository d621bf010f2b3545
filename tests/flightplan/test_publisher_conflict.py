"""One publisher per name (issue 28 item 5): the store holds a name under
one publisher, and a first trust is refused while the store holds the name
under another, instead of pinning whichever version is verified first."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from flightdeck.config import data_dir
from flightdeck.flightplan import (
    FlightPlanError,
    FreezeOutcome,
    KeyPair,
    Keyring,
    SkillStore,
    TrustState,
    freeze_plan,
    verify_plan,
)
from flightdeck.flightplan._emit import emit_skill
from tests.flightplan._plans import example_body, example_data

NAME = "weekly-metrics-digest"
ACME = "github://acme/digests"
MALLORY = "github://mallory"


def _freeze(
    tmp_path: Path,
    keys: KeyPair,
    version: str,
    publisher: str | None,
    store: SkillStore | None = None,
) -> FreezeOutcome:
    data = example_data()
    data["description"] = f"Version {version} by {publisher}."
    source = tmp_path / f"src-{version}-{abs(hash(publisher))}.md"
    source.write_text(emit_skill(data, example_body()))
    return freeze_plan(
        source, signing_key=keys.private_path, publisher=publisher, version=version, store=store
    )


def _plant(tmp_path: Path, keys: KeyPair, version: str, publisher: str | None) -> Path:
    """Frozen in another store and copied into the user's: what someone who
    can write the store (not run freeze on it) leaves there."""
    outcome = _freeze(tmp_path, keys, version, publisher, SkillStore(tmp_path / f"x-{version}"))
    target = SkillStore().root / NAME / "versions" / outcome.stored.path.name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(outcome.stored.path, target)
    return target


def _refused(target: str, **kwargs: object) -> FlightPlanError:
    with pytest.raises(FlightPlanError) as caught:
        verify_plan(target, **kwargs)  # type: ignore[arg-type]
    return caught.value


@pytest.fixture
def attacked(tmp_path: Path, keys: KeyPair, other_keys: KeyPair) -> None:
    """The genuine 1.0.0 by acme, and 1.1.0 republished by mallory, whose key
    the keyring trusts for mallory (not for acme)."""
    Keyring().trust(ACME, keys.public_path.read_bytes())
    Keyring().trust(MALLORY, other_keys.public_path.read_bytes())
    _freeze(tmp_path, keys, "1.0.0", ACME)
    _plant(tmp_path, other_keys, "1.1.0", MALLORY)


@pytest.mark.usefixtures("attacked")
def test_a_first_trust_is_refused_while_the_store_holds_another_publisher() -> None:
    for target in (NAME, f"{NAME}@1.1.0", f"{NAME}@1.0.0"):
        error = _refused(target)
        assert error.code == "verify.publisher_conflict", target
        assert MALLORY in error.message and ACME in error.message
        assert "--repin" in (error.hint or "")
    assert TrustState().get(NAME) is None  # nothing was pinned


@pytest.mark.usefixtures("attacked")
def test_the_user_decides_with_repin_and_the_impostor_stays_refused(
    tmp_path: Path, keys: KeyPair
) -> None:
    verified = verify_plan(f"{NAME}@1.0.0", repin=True)
    assert (verified.publisher, verified.first_trust) == (ACME, True)
    assert _refused(NAME).code == "verify.publisher_changed"  # mallory's 1.1.0 is the newest
    _plant(tmp_path, keys, "1.2.0", ACME)  # the genuine newer version
    assert verify_plan(NAME).version == "1.2.0"


def test_a_name_already_trusted_is_decided_by_its_pin(
    tmp_path: Path, keys: KeyPair, other_keys: KeyPair
) -> None:
    Keyring().trust(ACME, keys.public_path.read_bytes())
    Keyring().trust(MALLORY, other_keys.public_path.read_bytes())
    _freeze(tmp_path, keys, "1.0.0", ACME)
    assert verify_plan(NAME).first_trust
    _plant(tmp_path, other_keys, "1.1.0", MALLORY)
    assert verify_plan(f"{NAME}@1.0.0").version == "1.0.0"  # no conflict once pinned
    assert _refused(NAME).code == "verify.publisher_changed"


def test_a_plan_without_a_publisher_conflicts_with_one_under_a_publisher(
    tmp_path: Path, keys: KeyPair, other_keys: KeyPair
) -> None:
    Keyring().trust(ACME, keys.public_path.read_bytes())
    _freeze(tmp_path, keys, "1.0.0", ACME)
    _plant(tmp_path, other_keys, "1.1.0", None)
    error = _refused(f"{NAME}@1.1.0", key=other_keys.public_path.read_bytes())
    assert error.code == "verify.publisher_conflict"
    assert "(no publisher)" not in error.message and ACME in error.message
    error = _refused(f"{NAME}@1.0.0")
    assert error.code == "verify.publisher_conflict" and "(no publisher)" in error.message


def test_versions_by_several_keys_without_a_publisher_are_no_conflict(
    tmp_path: Path, keys: KeyPair, other_keys: KeyPair
) -> None:
    """Without a publisher the owner is a key, and keys rotate: the keyring's
    pins for the name decide which keys count (docs/flightplan.md)."""
    _freeze(tmp_path, keys, "1.0.0", None)
    _freeze(tmp_path, other_keys, "1.1.0", None)
    assert verify_plan(f"{NAME}@1.0.0").first_trust


def test_a_damaged_entry_is_not_a_rival(tmp_path: Path, keys: KeyPair, other_keys: KeyPair) -> None:
    Keyring().trust(ACME, keys.public_path.read_bytes())
    _freeze(tmp_path, keys, "1.0.0", ACME)
    planted = _plant(tmp_path, other_keys, "1.1.0", MALLORY)
    (planted / "SKILL.md.sig").write_text("{")  # its statement, and publisher, unknown
    assert verify_plan(f"{NAME}@1.0.0").first_trust


def test_the_store_refuses_a_second_publisher_for_a_name(
    tmp_path: Path, keys: KeyPair, other_keys: KeyPair
) -> None:
    _freeze(tmp_path, keys, "1.0.0", ACME)
    for publisher, named in ((MALLORY, "--publisher github://acme/digests"), (None, None)):
        with pytest.raises(FlightPlanError) as caught:
            _freeze(tmp_path, other_keys, "2.0.0", publisher)
        assert caught.value.code == "store.publisher_conflict"
        assert ACME in caught.value.message
        assert named is None or named in (caught.value.hint or "")
    assert [e.version for e in SkillStore().list()] == ["1.0.0"]
    # The same publisher (another key of it) still stores new versions.
    assert _freeze(tmp_path, other_keys, "1.1.0", ACME).created


def test_the_store_refuses_a_publisher_for_a_name_stored_without_one(
    tmp_path: Path, keys: KeyPair
) -> None:
    _freeze(tmp_path, keys, "1.0.0", None)
    with pytest.raises(FlightPlanError) as caught:
        _freeze(tmp_path, keys, "1.1.0", ACME)
    assert caught.value.code == "store.publisher_conflict"
    assert "without --publisher" in (caught.value.hint or "")


@pytest.mark.usefixtures("attacked")
def test_cli_verify_and_launch_refuse_the_first_trust_with_a_code() -> None:
    for command in (("verify", NAME), ("launch", NAME)):
        done = subprocess.run(
            [sys.executable, "-m", "flightdeck", *command, "--format", "json"],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert done.returncode == 1, done.stderr
        assert "Traceback" not in done.stderr
        body = json.loads(done.stdout)
        error = body.get("error", body)
        assert error["code"] == "verify.publisher_conflict", body
    assert not (data_dir() / "trust.json").exists() or TrustState().get(NAME) is None


def test_a_forged_statement_can_only_make_verify_refuse(tmp_path: Path, keys: KeyPair) -> None:
    """The rivals are read from the statements unverified: one naming another
    publisher, with no valid signature behind it, blocks the first trust (a
    denial of service) and is itself refused; it is never accepted."""
    Keyring().trust(ACME, keys.public_path.read_bytes())
    genuine = _freeze(tmp_path, keys, "1.0.0", ACME).stored.path
    forged = genuine.with_name("f" * 16)
    shutil.copytree(genuine, forged)
    envelope = json.loads((forged / "SKILL.md.sig").read_text())
    envelope["statement"] = {**envelope["statement"], "publisher": MALLORY, "version": "9.0.0"}
    (forged / "SKILL.md.sig").write_text(json.dumps(envelope))
    assert _refused(f"{NAME}@1.0.0").code == "verify.publisher_conflict"
    assert _refused(f"{NAME}@9.0.0", repin=True).code == "verify.signature_invalid"
    assert TrustState().get(NAME) is None
