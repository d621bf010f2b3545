"""The code digest's tree walk (nested packages, links, special files,
bounds, depth) and the import that reads only what the digest checked."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flightdeck.drivers import (
    CodeDigest,
    CodeDigestError,
    DriverRegistrationError,
    _digest,
    driver_code,
    load_driver,
)
from flightdeck.launch import ActionCall, DriverInvoker, LaunchError

TOOL = """---
name: greet
id: greet
description: Greets.
version: 1.0.0
inputs:
  type: object
  properties: { name: {} }
  additionalProperties: false
outputs:
  type: object
---
"""
DRIVER = """---
name: Greeter
id: greeter
description: Greets by name.
version: 1.0.0
kind: sdk
package: greetpkg
package_manager: local
import_style: python
install:
  - { method: vendored, path: PACKAGE }
network:
  egress: []
implements:
  - tool: ../../.tools/greet/TOOL.md
    version: "^1.0.0"
    metadata:
      sdk:
        function_ref: "greet"
        args_template: { name: "${input.name}" }
---
"""
INIT = "from .a.b.helper import greet\n"
HELPER = "def greet(name):\n    return {'text': 'hello ' + name}\n"
NESTED = "../../packages/greetpkg/a/b/helper.py"
IMPORTED = "flightdeck_local_greeter"


def _ws(root: Path, package: str = "../../packages/greetpkg") -> Path:
    ws = root / "ws"
    (ws / ".tools" / "greet").mkdir(parents=True)
    (ws / ".tools" / "greet" / "TOOL.md").write_text(TOOL)
    (ws / ".drivers" / "greeter").mkdir(parents=True)
    (ws / ".drivers" / "greeter" / "DRIVER.md").write_text(DRIVER.replace("PACKAGE", package))
    pkg = ws / "packages" / "greetpkg"
    (pkg / "a" / "b").mkdir(parents=True)
    (pkg / "__init__.py").write_text(INIT)
    (pkg / "a" / "__init__.py").write_text("")
    (pkg / "a" / "b" / "__init__.py").write_text("")
    (pkg / "a" / "b" / "helper.py").write_text(HELPER)
    return ws


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # as a user's interpreter runs
    for name in [n for n in sys.modules if n.split(".")[0] == IMPORTED]:
        monkeypatch.delitem(sys.modules, name)
    return _ws(tmp_path)


def _driver(ws: Path) -> Path:
    return ws / ".drivers" / "greeter" / "DRIVER.md"


def _digest_error(ws: Path) -> CodeDigestError:
    with pytest.raises(CodeDigestError) as caught:
        driver_code(_driver(ws), ws)
    return caught.value


def test_nested_package_files_are_digested_and_bytecode_is_left_out(ws: Path) -> None:
    pkg = ws / "packages" / "greetpkg"
    for stray in ("a/b/__pycache__/helper.cpython-311.pyc", "a/b/old.pyc", "a/stale.pyo"):
        (pkg / stray).parent.mkdir(exist_ok=True)
        (pkg / stray).write_bytes(b"\0")
    code = driver_code(_driver(ws), ws)
    assert NESTED in code.files and "../../packages/greetpkg/a/b/__init__.py" in code.files
    assert not [name for name in code.files if name.endswith((".pyc", ".pyo"))]
    # Every digested file is also known by its resolved path, for the import.
    assert code.sources[os.path.realpath(pkg / "a" / "b" / "helper.py")] == code.files[NESTED]


@pytest.mark.parametrize("where", ["a/b/helper.py", "a/b/extra.py", "a/b/c/new.py"])
def test_a_change_deep_in_the_package_changes_the_digest(ws: Path, where: str) -> None:
    before = driver_code(_driver(ws), ws).digest
    target = ws / "packages" / "greetpkg" / where
    target.parent.mkdir(exist_ok=True)
    target.write_text(HELPER + "# edited\n")
    assert driver_code(_driver(ws), ws).digest != before


def test_a_tree_deeper_than_the_recursion_limit_is_walked(ws: Path) -> None:
    # The limit is lowered rather than the tree made thousands deep: pytest's
    # own clean-up (shutil.rmtree) recurses too.
    depth, frame = 0, sys._getframe()
    while frame.f_back is not None:
        depth, frame = depth + 1, frame.f_back
    folder = ws / "packages" / "greetpkg"
    for _ in range(400):
        folder = folder / "d"
        folder.mkdir()
    (folder / "leaf.py").write_text("x = 1\n")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + 200)
    try:
        code = driver_code(_driver(ws), ws)
    finally:
        sys.setrecursionlimit(limit)
    assert "../../packages/greetpkg/" + "d/" * 400 + "leaf.py" in code.files


def test_the_number_of_entries_is_bounded(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_digest, "MAX_ENTRIES", 12)
    for index in range(12):
        (ws / "packages" / "greetpkg" / f"m{index}.py").write_text("")
    assert "more than 12 files and folders" in _digest_error(ws).message


def test_the_bytes_hashed_are_bounded(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_digest, "MAX_BYTES", 4096)
    (ws / "packages" / "greetpkg" / "a" / "big.bin").write_bytes(b"x" * 5000)
    assert "more than 4,096 bytes" in _digest_error(ws).message


@pytest.mark.parametrize(
    "link",
    [
        "packages/greetpkg/a/b/linked.py",  # in a nested folder
        "packages/greetpkg/a/b",  # a nested folder itself
        ".drivers/greeter/notes.md",  # beside the DRIVER.md
    ],
)
def test_a_symbolic_link_anywhere_is_refused(ws: Path, link: str) -> None:
    target = ws / link
    if target.is_dir():
        moved = target.with_name("real")
        target.rename(moved)
        target.symlink_to(moved)
    else:
        target.symlink_to(ws / ".tools" / "greet" / "TOOL.md")
    error = _digest_error(ws)
    assert "symbolic link" in error.message
    assert error.path is not None and os.path.normpath(error.path) == str(ws / link)


def test_a_linked_package_driver_or_tool_is_refused(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    driver = _driver(ws)
    # The package folder itself a link.
    pkg = ws / "packages" / "greetpkg"
    pkg.rename(ws / "packages" / "real")
    pkg.symlink_to(ws / "packages" / "real")
    linked = driver.parent / "../../packages/greetpkg"
    assert _digest_error(ws).message == f"{linked} is a symbolic link"
    pkg.unlink()
    (ws / "packages" / "real").rename(pkg)
    # The TOOL.md it implements a link.
    tool = ws / ".tools" / "greet" / "TOOL.md"
    tool.rename(tool.with_name("real.md"))
    tool.symlink_to(tool.with_name("real.md"))
    named = driver.parent / "../../.tools/greet/TOOL.md"
    assert _digest_error(ws).message == f"{named} is a symbolic link; code pins refuse links"
    tool.unlink()
    tool.with_name("real.md").rename(tool)
    # The DRIVER.md a link (to something that is no manifest: never read).
    (ws / "other").write_bytes(b"\xff")
    driver.unlink()
    driver.symlink_to(ws / "other")
    assert _digest_error(ws).message == f"{driver} is a symbolic link"


def test_a_linked_driver_folder_is_refused(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    folder = ws / ".drivers" / "greeter"
    folder.rename(ws / "greeter-real")
    folder.symlink_to(ws / "greeter-real")
    message = _digest_error(ws).message
    assert message == f"{folder} is a symbolic link; code pins refuse links"


def _swapped(monkeypatch: pytest.MonkeyPatch, target: Path, make: Callable[[], str]) -> None:
    """After the walk has seen `target` as a regular file, opening it for the
    hash meets something else (what a racing writer could leave there)."""
    real_open = os.open

    def fake_open(path: Any, flags: int, *args: Any) -> int:
        if os.fspath(path).endswith(os.fspath(target.relative_to(target.parents[2]))):
            return real_open(make(), flags, *args)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", fake_open)


def test_a_file_swapped_for_a_fifo_before_its_hash_is_refused(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fifo = ws / "fifo"
    os.mkfifo(fifo)
    helper = ws / "packages" / "greetpkg" / "a" / "b" / "helper.py"
    _swapped(monkeypatch, helper, lambda: str(fifo))
    error = _digest_error(ws)
    assert error.message.endswith("helper.py is not a regular file")


def test_a_file_gone_before_its_hash_is_refused(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    helper = ws / "packages" / "greetpkg" / "a" / "b" / "helper.py"
    _swapped(monkeypatch, helper, lambda: str(ws / "gone"))
    error = _digest_error(ws)
    assert "helper.py: No such file or directory" in error.message


@pytest.mark.parametrize("kind", ["fifo", "socket"])
def test_a_fifo_or_socket_in_the_package_is_refused_not_skipped(ws: Path, kind: str) -> None:
    special = ws / "packages" / "greetpkg" / "a" / "b" / "pipe.py"
    if kind == "fifo":
        os.mkfifo(special)
    else:
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(special))
        listener.close()
    error = _digest_error(ws)
    assert "not a regular file" in error.message
    assert error.path is not None and os.path.normpath(error.path) == str(special)


def test_a_line_break_in_a_file_name_is_refused(ws: Path) -> None:
    (ws / "packages" / "greetpkg" / "a" / "two\nlines.py").write_text("")
    assert "line break" in _digest_error(ws).message


def test_an_unreadable_driver_file_is_refused(ws: Path) -> None:
    _driver(ws).write_bytes(b"\xff\xfe not a manifest")
    assert "cannot be read as a DRIVER.md" in _digest_error(ws).message


def test_a_missing_package_is_refused(ws: Path) -> None:
    pkg = ws / "packages" / "greetpkg"
    (pkg / "__init__.py").unlink()  # a folder without __init__.py is no package
    assert "is not there" in _digest_error(ws).message


def test_a_package_beside_the_driver_needs_no_workspace(tmp_path: Path) -> None:
    ws = _ws(tmp_path, package="./greetpkg")
    (ws / "packages" / "greetpkg").rename(ws / ".drivers" / "greeter" / "greetpkg")
    code = driver_code(_driver(ws))
    assert "greetpkg/a/b/helper.py" in code.files


def test_the_workspace_is_tried_after_the_driver_folder(tmp_path: Path) -> None:
    ws = _ws(tmp_path, package="packages/greetpkg")
    # A folder of that name beside the DRIVER.md, but no package: not it.
    (ws / ".drivers" / "greeter" / "packages" / "greetpkg").mkdir(parents=True)
    code = driver_code(_driver(ws), ws)
    assert "../../packages/greetpkg/a/b/helper.py" in code.files


def test_an_implements_entry_without_a_tool_file_adds_nothing(ws: Path) -> None:
    text = (
        _driver(ws)
        .read_text()
        .replace("implements:\n", "implements:\n  - { function: elsewhere }\n")
    )
    _driver(ws).write_text(text)
    assert NESTED in driver_code(_driver(ws), ws).files


# The import reads only what the digest checked.


def test_a_local_driver_is_imported_without_writing_bytecode(ws: Path) -> None:
    driver = load_driver(_driver(ws), workspace=ws)
    assert driver.binding("greet") is not None
    assert not list(ws.rglob("__pycache__"))


def test_a_sourceless_pyc_beside_the_package_is_never_imported(ws: Path) -> None:
    helper = ws / "packages" / "greetpkg" / "a" / "b" / "helper.py"
    import py_compile

    py_compile.compile(str(helper), cfile=str(helper.with_suffix(".pyc")), doraise=True)
    helper.unlink()  # only the sourceless helper.pyc is left, which a plain import runs
    with pytest.raises(DriverRegistrationError) as caught:
        load_driver(_driver(ws), workspace=ws)
    assert caught.value.code == "package_import_failed"
    assert "helper" in caught.value.message


def test_a_module_changed_after_the_check_is_refused(ws: Path) -> None:
    code = driver_code(_driver(ws), ws)
    (ws / "packages" / "greetpkg" / "a" / "b" / "helper.py").write_text(HELPER + "#\n")
    with pytest.raises(DriverRegistrationError) as caught:
        load_driver(_driver(ws), workspace=ws, code=code)
    assert caught.value.code == "package_code_unpinned"
    assert "changed after its code pin was checked" in caught.value.message


def test_a_module_added_after_the_check_is_refused(ws: Path) -> None:
    pkg = ws / "packages" / "greetpkg"
    (pkg / "a" / "b" / "late.py").write_text("")
    (pkg / "__init__.py").write_text(INIT + "from .a.b import late\n")
    code = driver_code(_driver(ws), ws)
    # The module is now found as a package whose __init__.py was never digested.
    (pkg / "a" / "b" / "late.py").unlink()
    (pkg / "a" / "b" / "late").mkdir()
    (pkg / "a" / "b" / "late" / "__init__.py").write_text("")
    with pytest.raises(DriverRegistrationError) as caught:
        load_driver(_driver(ws), workspace=ws, code=code)
    assert caught.value.code == "package_code_unpinned"
    assert "late/__init__.py, which its code pin did not check" in caught.value.message


def test_a_namespace_folder_inside_the_package_imports(ws: Path) -> None:
    pkg = ws / "packages" / "greetpkg"
    (pkg / "a" / "__init__.py").unlink()
    (pkg / "a" / "b" / "__init__.py").unlink()
    code = driver_code(_driver(ws), ws)
    driver = load_driver(_driver(ws), workspace=ws, code=code)
    assert driver.binding("greet") is not None


def test_the_invoker_imports_from_the_bytes_it_checked(ws: Path) -> None:
    from flightdeck.launch._pins import pin_for

    pin = pin_for("greeter", "greet", "workspace", ".drivers/greeter/DRIVER.md",
                  driver_code(_driver(ws), ws))  # fmt: skip
    invoker = DriverInvoker(ws)
    invoker.check_pins([pin])
    result = asyncio.run(invoker.invoke(ActionCall("greeter", "greet", {"name": "ada"})))
    assert result == {"text": "hello ada"}
    loader = sys.modules[IMPORTED + ".a.b.helper"].__spec__.loader  # type: ignore[union-attr]
    helper = ws / "packages" / "greetpkg" / "a" / "b" / "helper.py"
    assert getattr(loader, "checked", {}).get(os.path.realpath(helper)) == pin.files[NESTED]
    assert not list(ws.rglob("__pycache__"))
    with pytest.raises(LaunchError):
        (ws / "packages" / "greetpkg" / "a" / "b" / "helper.py").write_text(HELPER + "#\n")
        DriverInvoker(ws).check_pins([pin])


def _extension(ws: Path) -> Path:
    """A stdlib extension module copied into the package, imported by it."""
    import _bisect

    assert _bisect.__file__ is not None
    target = ws / "packages" / "greetpkg" / Path(_bisect.__file__).name
    shutil.copyfile(_bisect.__file__, target)
    (ws / "packages" / "greetpkg" / "__init__.py").write_text(INIT + "from . import _bisect\n")
    return target


def test_an_extension_module_is_loaded_when_its_bytes_were_checked(ws: Path) -> None:
    _extension(ws)
    code = driver_code(_driver(ws), ws)
    assert load_driver(_driver(ws), workspace=ws, code=code).binding("greet") is not None
    assert sys.modules[IMPORTED + "._bisect"].bisect_left([1, 3], 2) == 1


def test_an_extension_module_changed_after_the_check_is_refused(ws: Path) -> None:
    target = _extension(ws)
    code = driver_code(_driver(ws), ws)
    with target.open("ab") as handle:
        handle.write(b"\0")
    with pytest.raises(DriverRegistrationError) as caught:
        load_driver(_driver(ws), workspace=ws, code=code)
    assert caught.value.code == "package_code_unpinned"
    assert f"{target.name} changed after its code pin was checked" in caught.value.message


def test_a_package_file_outside_the_digest_given_is_refused(ws: Path) -> None:
    """The first module is loaded by file, not found by the finder: its loader
    checks it against the digest too."""
    empty = CodeDigest("sha256:" + "0" * 64, sources={})
    with pytest.raises(DriverRegistrationError) as caught:
        load_driver(_driver(ws), workspace=ws, code=empty)
    assert caught.value.code == "package_code_unpinned"
    assert "__init__.py is not among the files its code pin checked" in caught.value.message


def test_a_local_package_that_is_a_pyc_file_is_refused(ws: Path) -> None:
    """Its only module is bytecode, which the digest leaves out: a plain
    import would run it unpinned."""
    import py_compile

    module = ws / "packages" / "greetone.py"
    module.write_text(HELPER)
    py_compile.compile(str(module), cfile=str(module.with_suffix(".pyc")), doraise=True)
    module.unlink()
    text = _driver(ws).read_text().replace("../../packages/greetpkg", "../../packages/greetone.pyc")
    _driver(ws).write_text(text)
    with pytest.raises(DriverRegistrationError) as caught:
        load_driver(_driver(ws), workspace=ws)
    assert caught.value.code == "package_import_failed"
    assert "neither Python source nor an extension module" in caught.value.message
    assert IMPORTED not in sys.modules


@pytest.mark.parametrize("install", ['["vendored"]', "[{ method: vendored, path: 5 }]"])
def test_a_malformed_install_entry_is_no_package_not_a_crash(ws: Path, install: str) -> None:
    text = _driver(ws).read_text()
    text = text.replace("  - { method: vendored, path: ../../packages/greetpkg }\n", "")
    _driver(ws).write_text(text.replace("install:\n", f"install: {install}\n"))
    assert "is not there" in _digest_error(ws).message


def test_a_local_driver_with_a_version_range_needs_no_installed_distribution(ws: Path) -> None:
    text = (
        _driver(ws)
        .read_text()
        .replace("package: greetpkg\n", 'package: greetpkg\npackage_version: "^1.0.0"\n')
    )
    _driver(ws).write_text(text)
    assert load_driver(_driver(ws), workspace=ws).binding("greet") is not None


def test_a_missing_local_package_is_named(ws: Path) -> None:
    shutil.rmtree(ws / "packages" / "greetpkg")
    with pytest.raises(DriverRegistrationError) as caught:
        load_driver(_driver(ws), workspace=ws)
    assert caught.value.code == "package_import_failed"
    assert "local package path '../../packages/greetpkg' not found" in caught.value.message


def test_a_new_load_reads_every_module_again(ws: Path) -> None:
    """Nothing of an earlier import of the package (other bytes) is reused."""
    import asyncio

    from flightdeck.drivers import call_tool

    async def greet() -> object:
        driver = load_driver(_driver(ws), workspace=ws, code=driver_code(_driver(ws), ws))
        return (await call_tool("greet", {"name": "ada"}, driver=driver)).output

    assert asyncio.run(greet()) == {"text": "hello ada"}
    helper = ws / "packages" / "greetpkg" / "a" / "b" / "helper.py"
    helper.write_text(HELPER.replace("hello ", "hi "))
    assert asyncio.run(greet()) == {"text": "hi ada"}
