"""Shared fixtures. Every test runs with FLIGHTDECK_HOME in a temporary dir,
so no test reads or writes the real user config or data directories."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

# Skip reasons that mean "a system package is missing". Where .ci/run has
# installed every package it sets FLIGHTDECK_REQUIRE_SYSTEM_PACKAGES=1, and
# such a skip then fails the session: a CI run that silently skipped its
# sandbox or registry tests must not look like one that ran them.
_SYSTEM_SKIP = re.compile(
    r"apt-get install|bubblewrap|ripgrep|docker-registry|graphviz|busybox|chromium|postgresql",
    re.IGNORECASE,
)


def system_package_skips(reports: list[pytest.TestReport]) -> list[str]:
    """The node ids of skipped tests whose reason names a system package."""
    found = []
    for report in reports:
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr
        if _SYSTEM_SKIP.search(str(reason)):
            found.append(f"{report.nodeid}: {reason}")
    return found


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.environ.get("FLIGHTDECK_REQUIRE_SYSTEM_PACKAGES") != "1":
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = list(reporter.stats.get("skipped", [])) if reporter is not None else []
    missing = system_package_skips(skipped)
    if missing:
        lines = "\n  ".join(missing)
        print(f"\nFAILED: tests skipped for a system package .ci/run installed:\n  {lines}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


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
        "FLIGHTDECK_DATABASE_URL",
    ):
        monkeypatch.delenv(var, raising=False)
    yield home


@pytest.fixture
def fd_home(_isolated_home: Path) -> Path:
    """The temporary FLIGHTDECK_HOME of this test."""
    return _isolated_home


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """A PostgreSQL cluster for this session (tests/_postgres.py): the URL
    of its admin database. Skips, naming the package, without a server."""
    from tests._postgres import SKIP_REASON, server_bin, started_cluster

    bindir = server_bin()
    if bindir is None:
        pytest.skip(SKIP_REASON)
    with started_cluster(bindir) as url:
        yield url


@pytest.fixture
def pg_url(pg_server: str) -> Iterator[str]:
    """A fresh, empty database of the session's server."""
    from flightdeck.config._database import close_pools
    from tests._postgres import fresh_database

    yield fresh_database(pg_server)
    close_pools()


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each store test once per backend: SQLite files under FLIGHTDECK_HOME,
    then a fresh PostgreSQL database named by FLIGHTDECK_DATABASE_URL."""
    if request.param == "postgres":
        monkeypatch.setenv("FLIGHTDECK_DATABASE_URL", request.getfixturevalue("pg_url"))
    return str(request.param)
