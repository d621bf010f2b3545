"""Encrypted private keys: PKCS#8 with a passphrase from the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from flightdeck.flightplan import FlightPlanError, generate_keys, load_private_key


def test_encrypted_key_needs_the_passphrase(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pair = generate_keys(tmp_path, "enc", b"correct horse")
    assert b"ENCRYPTED PRIVATE KEY" in pair.private_path.read_bytes()
    monkeypatch.delenv("FLIGHTDECK_KEY_PASSPHRASE", raising=False)
    with pytest.raises(FlightPlanError) as caught:
        load_private_key(pair.private_path)
    assert caught.value.code == "freeze.passphrase_needed"
    monkeypatch.setenv("FLIGHTDECK_KEY_PASSPHRASE", "wrong")
    with pytest.raises(FlightPlanError) as caught:
        load_private_key(pair.private_path)
    assert caught.value.code == "freeze.passphrase_wrong"
    monkeypatch.setenv("FLIGHTDECK_KEY_PASSPHRASE", "correct horse")
    assert load_private_key(pair.private_path).public_key() is not None


def test_cli_generate_encrypt_reads_the_passphrase_from_the_environment(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "FLIGHTDECK_KEY_PASSPHRASE": "s3cret"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "flightdeck",
            "keys",
            "generate",
            "--out",
            str(tmp_path),
            "--encrypt",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert b"ENCRYPTED PRIVATE KEY" in (tmp_path / "flightdeck.key").read_bytes()
