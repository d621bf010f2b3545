"""Rotation, revocation and plan-name pins as users run them (processes).
Set-up goes through the library; each command under test runs as a process."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from flightdeck.flightplan import Keyring, freeze_plan, generate_keys
from tests.flightplan._plans import example_path

BIN = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "flightdeck"
NAME = "weekly-metrics-digest"


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN), *map(str, args)],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )


def _ok(*args: str | Path) -> str:
    done = run(*args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _code(*args: str | Path) -> str:
    done = run(*args, "--format", "json")
    assert done.returncode == 1, done.stdout + done.stderr
    return str(json.loads(done.stdout)["error"]["code"])


def test_rotate_by_cosigning_then_revoke_the_old_key(tmp_path: Path) -> None:
    old, new = generate_keys(tmp_path, "old"), generate_keys(tmp_path, "new")
    Keyring().trust("github://acme", old.public_path.read_bytes())
    freeze_plan(
        example_path(), signing_key=old.private_path, publisher="github://acme", version="1.0.0"
    )
    signed = json.loads(
        _ok("sign", f"{NAME}@1.0.0", "--signing-key", new.private_path, "--format", "json")
    )
    assert signed["created"] is True and Path(signed["path"]).is_file()
    assert "no change" in _ok("sign", f"{NAME}@1.0.0", "--signing-key", new.private_path)

    Keyring().trust("github://acme", new.public_path.read_bytes())
    # A public key file names the key as well as its id.
    assert old.key_id in _ok("keyring", "revoke", old.public_path, "--reason", "rotated")
    assert "verified" in _ok("verify", f"{NAME}@1.0.0")
    text = _ok("keyring", "list")
    assert "REVOKED" in text and "rotated" in text
    # The revoked key cannot come back without --force.
    done = run("keyring", "trust", "github://acme", "--key", old.public_path)
    assert done.returncode == 1 and "keyring.key_revoked" in done.stderr
    _ok("keyring", "trust", "github://acme", "--key", old.public_path, "--force")
    assert Keyring().revocations() == []


def test_plan_without_publisher_is_pinned_per_name(tmp_path: Path) -> None:
    pair = generate_keys(tmp_path)
    out = _ok("freeze", example_path(), "--signing-key", pair.private_path, "--no-code-pins")
    assert f"pinned signing key {pair.key_id}" in out
    _ok("keyring", "untrust", "--plan", NAME)
    assert _code("verify", NAME) == "verify.key_unpinned"
    _ok("verify", NAME, "--key", pair.public_path)
    _ok("keyring", "trust", "--plan", NAME, "--key", pair.public_path)
    listed = json.loads(_ok("keyring", "list", "--format", "json"))
    assert [(e.get("plan"), e.get("publisher"), e["revoked"]) for e in listed] == [
        (NAME, None, None)
    ]
    # Exactly one of PUBLISHER and --plan.
    done = run("keyring", "trust", "github://acme", "--plan", NAME, "--key", pair.public_path)
    assert done.returncode == 2 and "either PUBLISHER or --plan" in done.stderr
