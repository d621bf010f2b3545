"""The compiled code of a pinned driver's checked source is kept in the data
directory and read back instead of compiling again, but only from a file
this user owns that nobody else can write, made from the same bytes at the
same path; the pin check itself still reads and hashes every file."""

from __future__ import annotations

import builtins
import hashlib
import importlib
import marshal
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flightdeck.drivers._source_import import UnpinnedModule, claim, release

TOP = "fd_code_cache_probe"


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("FLIGHTDECK_HOME", str(tmp_path / "home"))
    root = tmp_path / "site"
    (root / TOP).mkdir(parents=True)
    (root / TOP / "__init__.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(root))
    yield root / TOP
    release(TOP)
    sys.modules.pop(TOP, None)


def _checked(folder: Path) -> dict[str, str]:
    return {
        os.path.realpath(path): "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
        for path in folder.glob("*.py")
    }


def _import(folder: Path) -> Any:
    sys.modules.pop(TOP, None)
    claim(TOP, [TOP], _checked(folder), whole=True)
    return importlib.import_module(TOP)


def _cache(home: Path) -> list[Path]:
    folder = home / "data" / "cache" / "code"
    return (
        sorted(p for p in folder.iterdir() if not p.name.startswith(".")) if folder.exists() else []
    )


def _no_compile(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    compiled: list[str] = []
    real = builtins.compile

    def counting(source: Any, filename: Any, *args: Any, **kwargs: Any) -> Any:
        compiled.append(str(filename))
        return real(source, filename, *args, **kwargs)

    monkeypatch.setattr(builtins, "compile", counting)
    return compiled


def test_the_second_import_reads_the_kept_code(
    package: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _import(package).VALUE == 1
    kept = _cache(tmp_path / "home")
    assert len(kept) == 1 and kept[0].stat().st_mode & 0o077 == 0
    compiled = _no_compile(monkeypatch)
    assert _import(package).VALUE == 1
    assert compiled == []


def test_changed_source_is_compiled_again(
    package: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _import(package)
    (package / "__init__.py").write_text("VALUE = 2\n")
    compiled = _no_compile(monkeypatch)
    assert _import(package).VALUE == 2
    assert compiled == [str(package / "__init__.py")]
    assert len(_cache(tmp_path / "home")) == 2


def test_the_pin_check_still_runs_with_code_kept(package: Path) -> None:
    _import(package)
    checked = _checked(package)
    (package / "__init__.py").write_text("VALUE = 3\n")
    sys.modules.pop(TOP, None)
    claim(TOP, [TOP], checked, whole=True)
    with pytest.raises(UnpinnedModule, match="changed after its code pin"):
        importlib.import_module(TOP)


@pytest.mark.parametrize(
    "how", ["group_writable", "folder_writable", "other_path", "garbage", "fifo", "link"]
)
def test_a_kept_file_that_is_not_trusted_is_ignored(
    how: str, package: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _import(package)
    (entry,) = _cache(tmp_path / "home")
    if how == "group_writable":
        entry.write_bytes(
            marshal.dumps(compile("VALUE = 99\n", str(package / "__init__.py"), "exec"))
        )
        entry.chmod(0o620)
    elif how == "folder_writable":
        entry.write_bytes(
            marshal.dumps(compile("VALUE = 99\n", str(package / "__init__.py"), "exec"))
        )
        entry.parent.chmod(0o777)
    elif how == "other_path":
        entry.write_bytes(marshal.dumps(compile("VALUE = 99\n", "/elsewhere/__init__.py", "exec")))
    elif how == "fifo":  # opening it must not wait for a writer
        entry.unlink()
        os.mkfifo(entry, 0o600)
    elif how == "link":
        planted = tmp_path / "planted"
        planted.write_bytes(
            marshal.dumps(compile("VALUE = 99\n", str(package / "__init__.py"), "exec"))
        )
        entry.unlink()
        entry.symlink_to(planted)
    else:
        entry.write_bytes(b"\x00not marshal data")
    compiled = _no_compile(monkeypatch)
    assert _import(package).VALUE == 1
    assert compiled == [str(package / "__init__.py")]
