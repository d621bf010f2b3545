"""Shared fixtures. Every test runs with FLIGHTDECK_HOME in a temporary dir,
so no test reads or writes the real user config or data directories."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("fdhome")
    monkeypatch.setenv("FLIGHTDECK_HOME", str(home))
    for var in (
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "FLIGHTDECK_SIGNING_KEY",
        "FLIGHTDECK_LIBRARY_PATH",
    ):
        monkeypatch.delenv(var, raising=False)
    yield home


@pytest.fixture
def fd_home(_isolated_home: Path) -> Path:
    """The temporary FLIGHTDECK_HOME of this test."""
    return _isolated_home
