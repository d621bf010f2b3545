"""A damaged store, trust state or keyring seen through the CLI as a user
runs it: `flightdeck verify` and `skills list` end with a located code and
exit 1 (or list the damage), never a Python traceback. A few cases, one per
file kind: the tamper suites cover every class through the library."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from flightdeck.config import data_dir
from flightdeck.flightplan import FreezeOutcome, KeyPair, Keyring
from tests.flightplan.test_trust_chain import ACME, NAME, _freeze

FD = str(Path(sys.executable).with_name("flightdeck"))
DEEP = "[" * 100_000 + "]" * 100_000


def _fd(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [FD, *args], capture_output=True, text=True, env=dict(os.environ), timeout=120, check=False
    )


@pytest.fixture
def newest(tmp_path: Path, keys: KeyPair) -> Path:
    Keyring().trust(ACME, keys.public_path.read_bytes())
    _freeze(tmp_path, keys, "1.0.0")
    outcome: FreezeOutcome = _freeze(tmp_path, keys, "1.1.0")
    return outcome.stored.path


CASES: list[tuple[str, Callable[[Path], object], str]] = [
    (
        "skill-unparseable",
        lambda f: (f / "SKILL.md").write_text("---\n: : :\n---\n"),
        "verify.unreadable",
    ),
    (
        "lock-truncated",
        lambda f: (f / "lock.json").write_text('{"contentHash'),
        "verify.lock_tampered",
    ),
    (
        "trust-state-nested-too-deep",
        lambda f: (data_dir() / "trust.json").write_text(DEEP),
        "trust.unreadable",
    ),
    (
        "keyring-not-json",
        lambda f: (data_dir() / "keyring.json").write_text("{"),
        "keyring.unreadable",
    ),
]


@pytest.mark.parametrize(("damage", "code"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_cli_verify_names_the_damage(
    newest: Path, damage: Callable[[Path], object], code: str
) -> None:
    damage(newest)
    done = _fd("verify", NAME, "--format", "json")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert json.loads(done.stdout)["error"]["code"] == code


def test_cli_skills_list_shows_a_damaged_entry(newest: Path) -> None:
    (newest / "SKILL.md.sig").write_text("{")
    listed = _fd("skills", "list", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    damaged = {e["id"]: e["damaged"] for e in json.loads(listed.stdout)}
    assert damaged[newest.name] is True and list(damaged.values()).count(False) == 1
    assert "DAMAGED" in _fd("skills", "list").stdout
