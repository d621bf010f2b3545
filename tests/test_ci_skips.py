"""Where .ci/run installed every system package, a test that skips for want
of one fails the run (issue 17: a CI run that silently skipped its sandbox or
registry tests must not look like one that ran them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = """
import pytest

@pytest.mark.skipif(True, reason="needs bubblewrap: apt-get install bubblewrap")
def test_needs_a_package():
    pass

@pytest.mark.skipif(True, reason="this host has no /etc/shadow")
def test_needs_something_else():
    pass
"""


def _run(tmp_path: Path, strict: bool, body: str = PROBE) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text("from tests.conftest import pytest_sessionfinish\n")
    (tmp_path / "test_probe.py").write_text(body)
    env = {k: v for k, v in os.environ.items() if k != "FLIGHTDECK_REQUIRE_SYSTEM_PACKAGES"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    if strict:
        env["FLIGHTDECK_REQUIRE_SYSTEM_PACKAGES"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_package_skip_fails_the_strict_run(tmp_path: Path) -> None:
    proc = _run(tmp_path, strict=True)
    assert proc.returncode == 1, proc.stdout
    assert "test_needs_a_package" in proc.stdout
    assert "test_needs_something_else:" not in proc.stdout  # other skips stay skips


def test_skips_are_only_skips_outside_ci(tmp_path: Path) -> None:
    assert _run(tmp_path, strict=False).returncode == 0


def test_a_strict_run_without_package_skips_passes(tmp_path: Path) -> None:
    body = PROBE.replace("needs bubblewrap: apt-get install bubblewrap", "not on this OS")
    assert _run(tmp_path, strict=True, body=body).returncode == 0
