"""Fixtures: a signing key pair, a store, written plans."""

from __future__ import annotations

from pathlib import Path

import pytest

from flightdeck.flightplan import KeyPair, generate_keys
from tests.flightplan._plans import example_text


@pytest.fixture
def keys(tmp_path: Path) -> KeyPair:
    return generate_keys(tmp_path / "keys")


@pytest.fixture
def other_keys(tmp_path: Path) -> KeyPair:
    return generate_keys(tmp_path / "other-keys")


@pytest.fixture
def example_file(tmp_path: Path) -> Path:
    path = tmp_path / "plan" / "SKILL.md"
    path.parent.mkdir()
    path.write_text(example_text(), encoding="utf-8")
    return path
