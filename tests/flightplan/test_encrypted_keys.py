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
