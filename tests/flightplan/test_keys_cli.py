"""Rotation, revocation and plan-name pins as users run them (processes)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from flightdeck.flightplan import key_id, load_public_key
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
    _ok("keys", "generate", "--out", tmp_path, "--name", "old")
    _ok("keys", "generate", "--out", tmp_path, "--name", "new")
    old, new = tmp_path / "old", tmp_path / "new"
    _ok("keyring", "trust", "github://acme", "--key", f"{old}.pub")
    _ok(
        "freeze",
        example_path(),
        "--signing-key",
        f"{old}.key",
        "--publisher",
        "github://acme",
        "--version",
        "1.0.0",
    )
    # Re-freezing the same content with the new key is a conflict; sign is the way.
    assert (
        _code(
            "freeze",
            example_path(),
            "--signing-key",
            f"{new}.key",
            "--publisher",
            "github://acme",
            "--version",
            "1.0.0",
        )
        == "store.version_conflict"
    )
    signed = json.loads(
        _ok("sign", f"{NAME}@1.0.0", "--signing-key", f"{new}.key", "--format", "json")
    )
    assert signed["created"] is True and Path(signed["path"]).is_file()
    assert "no change" in _ok("sign", f"{NAME}@1.0.0", "--signing-key", f"{new}.key")

    _ok("keyring", "trust", "github://acme", "--key", f"{new}.pub")
    old_key_id = key_id(load_public_key(Path(f"{old}.pub").read_bytes()))
    assert old_key_id in _ok("keyring", "revoke", old_key_id, "--reason", "rotated")
    out = _ok("verify", f"{NAME}@1.0.0")
    assert "verified" in out
    text = _ok("keyring", "list")
    assert "REVOKED" in text and "rotated" in text
    # The revoked key cannot come back without --force.
    done = run("keyring", "trust", "github://acme", "--key", f"{old}.pub")
    assert done.returncode == 1 and "keyring.key_revoked" in done.stderr
    _ok("keyring", "trust", "github://acme", "--key", f"{old}.pub", "--force")
    assert "REVOKED" not in _ok("keyring", "list")


def test_only_revoked_signatures_is_key_revoked(tmp_path: Path) -> None:
    _ok("keys", "generate", "--out", tmp_path)
    _ok("keyring", "trust", "github://acme", "--key", tmp_path / "flightdeck.pub")
    _ok(
        "freeze",
        example_path(),
        "--signing-key",
        tmp_path / "flightdeck.key",
        "--publisher",
        "github://acme",
    )
    _ok("keyring", "revoke", tmp_path / "flightdeck.pub")  # a public key file works too
    assert _code("verify", NAME) == "verify.key_revoked"
    assert _code("sign", NAME, "--signing-key", tmp_path / "flightdeck.key") == "sign.key_revoked"
    done = run("keyring", "revoke", "not-a-key-id")
    assert done.returncode == 1 and "keyring.invalid_key_id" in done.stderr


def test_plan_without_publisher_is_pinned_per_name(tmp_path: Path) -> None:
    _ok("keys", "generate", "--out", tmp_path)
    pub = tmp_path / "flightdeck.pub"
    out = _ok("freeze", example_path(), "--signing-key", tmp_path / "flightdeck.key")
    assert "pinned signing key" in out
    _ok("keyring", "untrust", "--plan", NAME)
    assert _code("verify", NAME) == "verify.key_unpinned"
    _ok("verify", NAME, "--key", pub)
    _ok("keyring", "trust", "--plan", NAME, "--key", pub)
    listed = json.loads(_ok("keyring", "list", "--format", "json"))
    assert [(e.get("plan"), e.get("publisher")) for e in listed] == [(NAME, None)]
    _ok("verify", NAME)
    # Exactly one of PUBLISHER and --plan.
    assert run("keyring", "trust", "--key", pub).returncode == 2
    assert run("keyring", "trust", "github://acme", "--plan", NAME, "--key", pub).returncode == 2
    done = run("keyring", "trust", "--plan", "Not A Name", "--key", pub)
    assert done.returncode == 1 and "keyring.invalid_plan" in done.stderr
