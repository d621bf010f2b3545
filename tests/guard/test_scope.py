"""The path-scoped file policy: `Policy.confine_files` and `FileScope`."""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flightdeck.guard import (
    FileAccess,
    FileScope,
    Policy,
    Refused,
    active,
    interpreter_roots,
    layers,
)

from .conftest import FakeDns


@pytest.fixture
def root(tmp_path: Path) -> Path:
    inside = tmp_path / "root"
    inside.mkdir()
    (inside / "in.txt").write_text("inside")
    return inside


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    away = tmp_path / "away"
    away.mkdir()
    (away / "secret.txt").write_text("s3cret")
    return away


def confined(*roots: Path, ro: tuple[Path, ...] = (), **kw: Any) -> Policy:
    return Policy.confine_files(roots, ro, owner="body", limit="its root", **kw)


def refused(action: Callable[[], object]) -> Refused:
    with pytest.raises(Refused) as caught:
        action()
    return caught.value


def test_reads_and_writes_inside_the_root_are_allowed(root: Path) -> None:
    with active(confined(root)) as policy:
        assert (root / "in.txt").read_text() == "inside"
        (root / "sub").mkdir()
        (root / "sub" / "a.txt").write_text("a")
        os.rename(root / "sub" / "a.txt", root / "sub" / "b.txt")
        assert sorted(os.listdir(root / "sub")) == ["b.txt"]
        assert [e.name for e in os.scandir(root / "sub")] == ["b.txt"]
        os.chmod(root / "sub" / "b.txt", 0o600)
        shutil.copy(root / "in.txt", root / "copy.txt")
        os.remove(root / "sub" / "b.txt")
        os.rmdir(root / "sub")
        sqlite3.connect(root / "db.sqlite").close()
        sqlite3.connect(":memory:").close()
    assert policy.denied == []


def test_reads_outside_the_roots_are_refused_and_remembered(root: Path, outside: Path) -> None:
    secret = outside / "secret.txt"
    with active(confined(root)) as policy:
        error = refused(secret.read_text)
        refused(lambda: os.listdir(outside))
        refused(lambda: os.scandir(outside))
        assert list(outside.glob("*")) == []  # pathlib swallows the refusal...
    assert str(error) == f"body: open {secret} is outside its root"
    assert error.event.files == (FileAccess("open", str(secret), write=False),)
    assert [e.detail for e in policy.denied] == [
        f"open {secret}",
        f"os.listdir {outside}",
        f"os.scandir {outside}",
        f"os.scandir {outside}",  # ...but it is remembered
    ]


@pytest.mark.parametrize(
    "action",
    [
        pytest.param(lambda o, r: (o / "new.txt").write_text("x"), id="open-write"),
        pytest.param(lambda o, r: (o / "secret.txt").open("a"), id="open-append"),
        pytest.param(lambda o, r: os.open(o / "n", os.O_CREAT | os.O_WRONLY), id="os.open"),
        pytest.param(lambda o, r: os.remove(o / "secret.txt"), id="remove"),
        pytest.param(lambda o, r: os.rename(o / "secret.txt", r / "s"), id="rename-from"),
        pytest.param(lambda o, r: os.rename(r / "in.txt", o / "s"), id="rename-to"),
        pytest.param(lambda o, r: os.replace(r / "in.txt", o / "s"), id="replace-to"),
        pytest.param(lambda o, r: os.mkdir(o / "d"), id="mkdir"),
        pytest.param(lambda o, r: os.rmdir(o), id="rmdir"),
        pytest.param(lambda o, r: shutil.rmtree(o), id="rmtree"),
        pytest.param(lambda o, r: os.symlink(r / "in.txt", o / "l"), id="symlink-at"),
        pytest.param(lambda o, r: os.link(o / "secret.txt", r / "h"), id="hardlink-from"),
        pytest.param(lambda o, r: os.chmod(o / "secret.txt", 0o777), id="chmod"),
        pytest.param(lambda o, r: os.utime(o / "secret.txt"), id="utime"),
        pytest.param(lambda o, r: os.truncate(o / "secret.txt", 0), id="truncate"),
        pytest.param(lambda o, r: shutil.copy(r / "in.txt", o), id="copy-out"),
        pytest.param(lambda o, r: shutil.copy(o / "secret.txt", r), id="copy-in"),
        pytest.param(lambda o, r: sqlite3.connect(o / "db.sqlite"), id="sqlite"),
    ],
)
def test_writes_outside_the_roots_are_refused(
    root: Path, outside: Path, action: Callable[[Path, Path], object]
) -> None:
    before = sorted(p.name for p in outside.iterdir())
    with active(confined(root)) as policy:
        refused(lambda: action(outside, root))
    assert len(policy.denied) == 1
    assert sorted(p.name for p in outside.iterdir()) == before
    assert (outside / "secret.txt").read_text() == "s3cret"
    assert (root / "in.txt").read_text() == "inside"


def test_a_symlink_inside_pointing_outside_leads_outside(root: Path, outside: Path) -> None:
    """Paths are judged real: a link planted in the root does not open the world."""
    (root / "link.txt").symlink_to(outside / "secret.txt")
    (root / "linkdir").symlink_to(outside)
    with active(confined(root)) as policy:
        read = refused((root / "link.txt").read_text)
        refused(lambda: (root / "link.txt").write_text("overwrite"))
        refused(lambda: (root / "linkdir" / "new.txt").write_text("x"))
        refused(lambda: os.listdir(root / "linkdir"))
        refused(lambda: os.chmod(root / "link.txt", 0o777))
        # calls that act on the link itself stay inside
        os.rename(root / "link.txt", root / "moved.txt")
        os.remove(root / "moved.txt")
    assert read.event.files[0].resolved == str((outside / "secret.txt").resolve())
    assert len(policy.denied) == 5
    assert (outside / "secret.txt").read_text() == "s3cret"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_dot_dot_and_relative_paths_are_resolved(
    root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with active(confined(root)):
        refused(lambda: (root / ".." / "away" / "secret.txt").read_text())
        monkeypatch.chdir(outside)
        refused(lambda: Path("secret.txt").read_text())
        monkeypatch.chdir(root)
        assert Path("in.txt").read_text() == "inside"
        Path("rel.txt").write_text("ok")
    assert (root / "rel.txt").read_text() == "ok"


def test_dir_fd_relative_calls_are_judged_against_the_fd_directory(
    root: Path, outside: Path
) -> None:
    away, home = os.open(outside, os.O_RDONLY), os.open(root, os.O_RDONLY)
    try:
        (root / "gone.txt").write_text("x")
        with active(confined(root)):
            refused(lambda: os.remove("secret.txt", dir_fd=away))
            refused(lambda: os.mkdir("d", dir_fd=away))
            os.remove("gone.txt", dir_fd=home)
    finally:
        os.close(away)
        os.close(home)
    assert (outside / "secret.txt").exists() and not (root / "gone.txt").exists()


def test_read_only_roots_can_be_read_not_written(root: Path, outside: Path) -> None:
    with active(confined(root, ro=(outside,))) as policy:
        assert (outside / "secret.txt").read_text() == "s3cret"
        assert os.listdir(outside) == ["secret.txt"]
        refused(lambda: (outside / "secret.txt").write_text("x"))
        refused(lambda: os.remove(outside / "secret.txt"))
    assert [e.kind for e in policy.denied] == ["file_write", "file_write"]


def test_the_interpreter_can_still_import_lazily(root: Path) -> None:
    sys.modules.pop("colorsys", None)
    with active(confined(root)) as policy:
        import colorsys  # the point: an import while confined

        assert colorsys.rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)
    assert policy.denied == []


def test_interpreter_roots_cover_the_prefixes_and_sys_path_but_not_the_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    monkeypatch.setattr(sys, "path", ["", str(tmp_path / "lib"), *sys.path])
    roots = interpreter_roots()
    assert os.path.realpath(sys.prefix) in roots
    assert os.path.realpath(sys.base_prefix) in roots
    assert str((tmp_path / "lib").resolve()) in roots
    assert str((tmp_path / "cwd").resolve()) not in roots
    bare = FileScope.of([], interpreter=False)
    assert bare.writable == () and bare.readable == ()


def test_an_interpreter_root_holding_the_scope_is_not_granted(
    root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A script run from the temp directory puts it on sys.path: siblings stay closed."""
    monkeypatch.setattr(sys, "path", [str(root.parent), *sys.path])
    with active(confined(root)):
        refused((outside / "secret.txt").read_text)
    with active(confined(outside / "..", ro=(outside,))):
        assert (outside / "secret.txt").read_text() == "s3cret"  # callers' roots are kept


def test_recording_layers_see_the_new_writes_but_not_listings(root: Path) -> None:
    with active(Policy.watch()) as watch:
        os.chmod(root / "in.txt", 0o600)
        os.symlink(root / "in.txt", root / "link")
        os.listdir(root)
    assert [e.detail for e in watch.observed] == [
        f"os.chmod {root / 'in.txt'}",
        f"os.symlink {root / 'in.txt'} -> {root / 'link'}",
    ]


def test_bytecode_is_judged_by_scopes_only(root: Path, outside: Path) -> None:
    pyc = outside / "__pycache__" / "m.cpython-311.pyc"
    pyc.parent.mkdir()
    with active(Policy.watch()) as watch, active(confined(root)) as scope:
        refused(lambda: pyc.write_bytes(b"planted"))
    assert watch.observed == [] and watch.denied == []
    assert [e.kind for e in scope.denied] == ["bytecode"]
    assert not pyc.exists()


def test_subprocesses_are_refused_unless_allowed(root: Path) -> None:
    with active(confined(root)) as policy:
        refused(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True))
    assert [e.kind for e in policy.denied] == ["subprocess"]
    with active(confined(root, subprocess=True)) as allowing:
        subprocess.run([sys.executable, "-c", "pass"], check=True)
    assert allowing.denied == []


def test_an_unknowable_path_is_outside() -> None:
    scope = FileScope.of(["/"], interpreter=False)
    assert scope.permits(FileAccess("open", "/anything", write=True))
    assert not scope.permits(FileAccess("os.remove", None, write=True))


def test_nested_with_a_host_layer_every_layer_must_allow(
    root: Path, outside: Path, fake_dns: FakeDns
) -> None:
    fake_dns.table["api.example.com"] = ["192.0.2.1"]
    hosts = Policy.allow_hosts(["api.example.com"], owner="egress denied", limit="hosts")
    with active(hosts), active(confined(root)) as scope:
        fake_dns("api.example.com", 443)  # the scope leaves the network alone
        refused(lambda: fake_dns("exfil.example.net", 443))
        refused(lambda: (outside / "x").write_text("x"))
        (root / "ok.txt").write_text("ok")
        assert layers() == (hosts, scope)
    assert [e.kind for e in hosts.denied] == ["dns"]
    assert [e.kind for e in scope.denied] == ["file_write"]


def test_nested_scopes_intersect(root: Path) -> None:
    inner_root = root / "inner"
    inner_root.mkdir()
    with active(confined(root)), active(confined(inner_root)) as inner:
        (inner_root / "a").write_text("a")
        error = refused(lambda: (root / "b").write_text("b"))
    assert error.policy is inner and not (root / "b").exists()


def test_the_scope_follows_tasks_and_to_thread(root: Path, outside: Path) -> None:
    async def main() -> list[str]:
        def read() -> str:
            return (outside / "secret.txt").read_text()

        with active(confined(root)):
            results = await asyncio.gather(
                asyncio.to_thread(read),
                asyncio.create_task(asyncio.to_thread(read)),
                return_exceptions=True,
            )
        return [type(r).__name__ for r in results]

    assert asyncio.run(main()) == ["Refused", "Refused"]
