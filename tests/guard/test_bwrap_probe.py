"""The bubblewrap probe: which binary, and which privilege-dropping
arguments every sandbox starts with. Fake `bwrap` scripts on a PATH of
their own make each branch happen whatever is installed here; the last test
holds the real one to account where CI installed it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from flightdeck.guard import _bwrap as probe
from flightdeck.guard import bwrap_path, bwrap_privileges

AS_ROOT = (
    ("--cap-drop", "ALL", "--unshare-user", "--disable-userns", "--uid", "65534", "--gid", "65534"),
    ("--cap-drop", "ALL", "--unshare-user", "--uid", "65534", "--gid", "65534"),
    ("--cap-drop", "ALL"),
)
AS_USER = (
    ("--cap-drop", "ALL", "--unshare-user", "--disable-userns"),
    ("--cap-drop", "ALL", "--unshare-user"),
    ("--cap-drop", "ALL"),
)


@pytest.fixture
def fake_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty PATH directory; the probe forgets its answer before and after."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    probe.forget_probe()
    yield folder
    probe.forget_probe()  # the next caller probes the real PATH again


def fake_bwrap(folder: Path, *, refuse: str | None = None, body: str = "exit 0") -> Path:
    """A `bwrap` that logs its arguments and fails when given `refuse`."""
    script = folder / "bwrap"
    log = folder / "calls.log"
    rule = f'case " $* " in *" {refuse} "*) exit 1;; esac\n' if refuse else ""
    script.write_text(f'#!/bin/sh\necho "$*" >> {log}\n{rule}{body}\n')
    script.chmod(0o755)
    return script


def calls(folder: Path) -> list[str]:
    log = folder / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


@pytest.mark.parametrize("euid", [0, 1000])
@pytest.mark.parametrize(
    ("refuse", "chosen"), [(None, 0), ("--disable-userns", 1), ("--unshare-user", 2)]
)
def test_the_strongest_privilege_set_that_works_is_chosen(
    fake_path: Path, monkeypatch: pytest.MonkeyPatch, euid: int, refuse: str | None, chosen: int
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: euid)
    found = fake_bwrap(fake_path, refuse=refuse)
    assert bwrap_path() == str(found)
    expected = (AS_ROOT if euid == 0 else AS_USER)[chosen]
    assert bwrap_privileges() == expected
    # Each weaker set was tried only after the stronger one failed, and the
    # one chosen was tried with the sandbox's own namespaces.
    tried = calls(fake_path)
    assert len(tried) == chosen + 1
    sandbox = ["--ro-bind", "/", "/", "--unshare-all", "--", "/bin/true"]
    assert tried[-1] == " ".join([*expected, *sandbox])


def test_a_bubblewrap_that_cannot_drop_capabilities_is_not_used(fake_path: Path) -> None:
    fake_bwrap(fake_path, refuse="--cap-drop")
    assert bwrap_path() is None
    assert len(calls(fake_path)) == len(AS_ROOT)
    # A sandbox built anyway asks for every privilege to go, and so fails to start.
    assert bwrap_privileges() == (AS_ROOT if os.geteuid() == 0 else AS_USER)[0]


def test_the_first_executable_file_on_path_is_probed(
    tmp_path: Path, fake_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folders = [tmp_path / name for name in ("dir-named-bwrap", "not-executable", "good", "later")]
    for folder in folders:
        folder.mkdir()
    (folders[0] / "bwrap").mkdir()
    (folders[0] / "bwrap").chmod(0o755)
    fake_bwrap(folders[1]).chmod(0o644)
    good = fake_bwrap(folders[2])
    fake_bwrap(folders[3])
    monkeypatch.setenv("PATH", os.pathsep.join(["", *map(str, folders), ""]))
    assert bwrap_path() == str(good)
    assert calls(folders[2]) and not calls(folders[3]) and not calls(folders[1])


def test_no_bubblewrap_on_path(fake_path: Path) -> None:
    assert bwrap_path() is None
    assert bwrap_privileges() == (AS_ROOT if os.geteuid() == 0 else AS_USER)[0]


def test_a_bubblewrap_that_cannot_run_or_fails_everywhere_is_not_used(fake_path: Path) -> None:
    script = fake_path / "bwrap"
    script.write_text("#!/nonexistent/interpreter\n")
    script.chmod(0o755)
    assert bwrap_path() is None  # OSError when started
    probe.forget_probe()
    fake_bwrap(fake_path, body="exit 1")
    assert bwrap_path() is None
    assert len(calls(fake_path)) == len(AS_ROOT)


def test_a_bubblewrap_that_hangs_is_not_used(
    fake_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(probe, "PROBE_TIMEOUT", 0.5)
    fake_bwrap(fake_path, body="exec sleep 60")
    assert bwrap_path() is None


def test_the_answer_is_kept(fake_path: Path) -> None:
    fake_bwrap(fake_path)
    assert bwrap_path() == bwrap_path() and bwrap_privileges() == bwrap_privileges()
    assert len(calls(fake_path)) == 1


@pytest.mark.skipif(
    os.environ.get("FLIGHTDECK_REQUIRE_SYSTEM_PACKAGES") != "1" and shutil.which("bwrap") is None,
    reason="needs bubblewrap: apt-get install bubblewrap",
)
def test_the_installed_bubblewrap_works_and_drops_everything_it_can() -> None:
    """Where bubblewrap is installed (always in CI) the probe must accept it:
    otherwise every real-sandbox test would skip instead of running."""
    assert shutil.which("bwrap") is not None
    assert bwrap_path() is not None
    privileges = bwrap_privileges()
    assert privileges[:2] == ("--cap-drop", "ALL")
    if os.environ.get("FLIGHTDECK_REQUIRE_SYSTEM_PACKAGES") == "1":
        assert "--unshare-user" in privileges and "--disable-userns" in privileges
