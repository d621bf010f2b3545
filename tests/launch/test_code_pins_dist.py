"""Code pins of a driver backed by an installed distribution: name, version
and the files its RECORD lists (a tiny dist-info made in tmp_path)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import importlib
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from flightdeck.drivers import CodeDigestError, _digest, driver_code
from flightdeck.drivers._source_import import release
from flightdeck.launch import ActionCall, DriverInvoker, LaunchError

TOOL = """---
name: greet
id: greet
description: Greets.
version: 1.0.0
inputs: { type: object }
outputs: { type: object }
---
"""
DRIVER = """---
name: Greeter
id: greeter
description: Greets from an installed distribution.
version: 1.0.0
kind: sdk
package: greetdist
package_manager: pip
import_style: python
install:
  - { method: pip, name: greetdist }
network:
  egress: []
implements:
  - tool: ../../.tools/greet/TOOL.md
    version: "^1.0.0"
    metadata:
      sdk:
        function_ref: "greet"
        args_template: {}
---
"""
MODULE = "def greet():\n    return {'text': 'hello'}\n"


def _record_hash(raw: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(raw).digest()).rstrip(b"=").decode()


def _install(
    site: Path, version: str, module: str = MODULE, *, hashless_first: bool = False
) -> None:
    """A distribution as an installer leaves it: files and a RECORD of their hashes."""
    for old in site.glob("greetdist-*.dist-info"):
        for file in old.iterdir():
            file.unlink()
        old.rmdir()
    info = site / f"greetdist-{version}.dist-info"
    info.mkdir(parents=True)
    (site / "greetdist").mkdir(exist_ok=True)
    metadata = f"Metadata-Version: 2.1\nName: greetdist\nVersion: {version}\n"
    files = {"greetdist/__init__.py": module.encode(), f"{info.name}/METADATA": metadata.encode()}
    for name, raw in files.items():
        (site / name).write_bytes(raw)
    rows = [f"{name},{_record_hash(raw)},{len(raw)}" for name, raw in files.items()]
    hashless = ["greetdist/__pycache__/__init__.cpython-312.pyc,,", f"{info.name}/RECORD,,"]
    rows = [*hashless, *rows] if hashless_first else [*rows, *hashless]
    (info / "RECORD").write_text("\n".join(["", *rows]) + "\n")  # a blank row is skipped
    importlib.invalidate_caches()  # importlib.metadata caches directory listings


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    yield _ws(tmp_path, monkeypatch)
    for name in [n for n in sys.modules if n.partition(".")[0] == "greetdist"]:
        del sys.modules[name]  # imported from this test's tmp_path
    release("greetdist")  # and claimed with this test's files


def _ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site"
    _install(site, "1.0")
    monkeypatch.syspath_prepend(str(site))
    ws = tmp_path / "ws"
    (ws / ".tools" / "greet").mkdir(parents=True)
    (ws / ".tools" / "greet" / "TOOL.md").write_text(TOOL)
    (ws / ".drivers" / "greeter").mkdir(parents=True)
    (ws / ".drivers" / "greeter" / "DRIVER.md").write_text(DRIVER)
    return ws


def test_distribution_digest_is_name_version_and_record_files(ws: Path) -> None:
    code = driver_code(ws / ".drivers" / "greeter" / "DRIVER.md", ws)
    assert (code.distribution, code.version) == ("greetdist", "1.0")
    # The lock lists the manifest files only; the digest covers the RECORD files too.
    assert sorted(code.files) == ["../../.tools/greet/TOOL.md", "DRIVER.md"]
    site = ws.parent / "site"
    named = {
        **{name: (ws / ".drivers" / "greeter" / name).read_bytes() for name in code.files},
        "dist:greetdist/__init__.py": (site / "greetdist" / "__init__.py").read_bytes(),
        "dist:greetdist-1.0.dist-info/METADATA": (
            site / "greetdist-1.0.dist-info" / "METADATA"
        ).read_bytes(),
    }
    lines = "".join(
        f"{hashlib.sha256(named[name]).hexdigest()}  {name}\n"
        for name in sorted(named, key=lambda n: n.encode())
    )
    manifest = ("distribution greetdist 1.0\n" + lines).encode()
    assert code.digest == "sha256:" + hashlib.sha256(manifest).hexdigest()


def test_an_edited_installed_file_is_refused_naming_it(ws: Path) -> None:
    pin = DriverInvoker(ws).pin("greeter", "greet")
    assert pin is not None
    DriverInvoker(ws).check_pins([pin])
    module = ws.parent / "site" / "greetdist" / "__init__.py"
    module.write_text(MODULE.replace("hello", "EVIL"))
    with pytest.raises(LaunchError) as caught:
        DriverInvoker(ws).check_pins([pin])
    assert caught.value.code == "launch.code_changed"
    assert "installed file greetdist/__init__.py of greetdist changed" in caught.value.message


def test_another_installed_version_is_refused(ws: Path) -> None:
    pin = DriverInvoker(ws).pin("greeter", "greet")
    assert pin is not None
    _install(ws.parent / "site", "1.1")
    with pytest.raises(LaunchError) as caught:
        DriverInvoker(ws).check_pins([pin])
    assert "distribution greetdist 1.0 is now greetdist 1.1" in caught.value.message


def test_a_poetry_driver_is_pinned_by_its_distribution_too(ws: Path) -> None:
    driver = ws / ".drivers" / "greeter" / "DRIVER.md"
    driver.write_text(
        DRIVER.replace("package_manager: pip", "package_manager: poetry").replace(
            "method: pip", "method: poetry"
        )
    )
    code = driver_code(driver, ws)
    assert (code.distribution, code.version) == ("greetdist", "1.0")
    pin = DriverInvoker(ws).pin("greeter", "greet")
    assert pin is not None and pin.distribution == "greetdist"
    (ws.parent / "site" / "greetdist" / "__init__.py").write_text(MODULE + "#\n")
    with pytest.raises(LaunchError) as caught:
        DriverInvoker(ws).check_pins([pin])
    assert "installed file greetdist/__init__.py of greetdist changed" in caught.value.message


def test_the_edited_file_is_named_past_rows_without_a_hash(ws: Path) -> None:
    site = ws.parent / "site"
    _install(site, "1.0", hashless_first=True)
    pin = DriverInvoker(ws).pin("greeter", "greet")
    assert pin is not None
    (site / "greetdist" / "__init__.py").write_text(MODULE + "#\n")
    with pytest.raises(LaunchError) as caught:
        DriverInvoker(ws).check_pins([pin])
    assert "installed file greetdist/__init__.py of greetdist changed" in caught.value.message


def _unpinnable(ws: Path) -> str:
    with pytest.raises(CodeDigestError) as caught:
        driver_code(ws / ".drivers" / "greeter" / "DRIVER.md", ws)
    return caught.value.message


def test_a_distribution_that_is_not_installed_or_has_no_record_is_unpinnable(ws: Path) -> None:
    info = ws.parent / "site" / "greetdist-1.0.dist-info"
    (info / "RECORD").unlink()
    importlib.invalidate_caches()
    assert "has no RECORD to pin" in _unpinnable(ws)
    for file in info.iterdir():
        file.unlink()
    info.rmdir()
    importlib.invalidate_caches()
    assert "is not installed" in _unpinnable(ws)


def test_a_linked_installed_file_is_refused(ws: Path) -> None:
    module = ws.parent / "site" / "greetdist" / "__init__.py"
    module.rename(module.with_name("real.py"))
    module.symlink_to(module.with_name("real.py"))
    assert _unpinnable(ws) == f"{module} is a symbolic link"


def test_the_rows_of_a_record_are_bounded(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_digest, "MAX_ENTRIES", 3)
    assert "lists more than 3 files" in _unpinnable(ws)


def test_a_distribution_imported_before_the_check_is_refused(ws: Path) -> None:
    """Imported the ordinary way (so perhaps from a planted pyc), its code is
    not the bytes the pin checked: the pinned driver does not reuse it."""
    importlib.import_module("greetdist")
    invoker = DriverInvoker(ws)
    pin = invoker.pin("greeter", "greet")
    assert pin is not None
    invoker.check_pins([pin])
    with pytest.raises(LaunchError) as caught:
        asyncio.run(invoker.invoke(ActionCall("greeter", "greet", {})))
    assert caught.value.code == "launch.code_changed"
    assert "greetdist was imported in this process before its code pin" in caught.value.message


def test_a_pinned_distribution_is_imported_from_its_checked_files(ws: Path) -> None:
    invoker = DriverInvoker(ws)
    pin = invoker.pin("greeter", "greet")
    assert pin is not None
    invoker.check_pins([pin])
    assert asyncio.run(invoker.invoke(ActionCall("greeter", "greet", {}))) == {"text": "hello"}
    spec = sys.modules["greetdist"].__spec__
    assert spec is not None and getattr(spec.loader, "checked", None)
    # Another launch in the same process reuses the module: its bytes are checked.
    again = DriverInvoker(ws)
    again.check_pins([pin])
    assert asyncio.run(again.invoke(ActionCall("greeter", "greet", {}))) == {"text": "hello"}


def test_an_editable_install_is_refused_at_the_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its RECORD lists a .pth, not the sources, so what would run was never
    pinned: the import refuses it instead of running unpinned sources."""
    ws = _ws(tmp_path, monkeypatch)
    site, source = tmp_path / "site", tmp_path / "src"
    for old in site.glob("greetdist*"):
        shutil.rmtree(old)
    (source / "greetdist").mkdir(parents=True)
    (source / "greetdist" / "__init__.py").write_text(MODULE)
    info = site / "greetdist-1.0.dist-info"
    info.mkdir()
    files = {
        "__editable__.greetdist-1.0.pth": f"{source}\n".encode(),
        f"{info.name}/METADATA": b"Metadata-Version: 2.1\nName: greetdist\nVersion: 1.0\n",
    }
    for name, raw in files.items():
        (site / name).write_bytes(raw)
    rows = [f"{name},{_record_hash(raw)},{len(raw)}" for name, raw in files.items()]
    (info / "RECORD").write_text("\n".join([*rows, f"{info.name}/RECORD,,"]) + "\n")
    monkeypatch.syspath_prepend(str(source))  # what site.py does with the .pth
    importlib.invalidate_caches()
    try:
        invoker = DriverInvoker(ws)
        pin = invoker.pin("greeter", "greet")
        assert pin is not None
        invoker.check_pins([pin])
        with pytest.raises(LaunchError) as caught:
            asyncio.run(invoker.invoke(ActionCall("greeter", "greet", {})))
        assert caught.value.code == "launch.code_changed"
        assert str(source / "greetdist" / "__init__.py") in caught.value.message
        assert "greetdist" not in sys.modules
    finally:
        sys.modules.pop("greetdist", None)
        release("greetdist")


def _distribution(site: Path, name: str, files: dict[str, str]) -> None:
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    raw = {path: text.encode() for path, text in files.items()}
    raw[f"{info.name}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode()
    for path, data in raw.items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_bytes(data)
    rows = [f"{path},{_record_hash(data)},{len(data)}" for path, data in raw.items()]
    (info / "RECORD").write_text("\n".join([*rows, f"{info.name}/RECORD,,"]) + "\n")


def test_a_namespace_shared_with_another_distribution_is_no_obstacle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`nsdist` is a namespace: the pinned `nsdist.greet` and another
    distribution's `nsdist.other`, imported before in the ordinary way."""
    ws = _ws(tmp_path, monkeypatch)
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    _distribution(ours, "greetns", {"nsdist/greet/__init__.py": MODULE})
    _distribution(theirs, "otherns", {"nsdist/other/__init__.py": "VALUE = 1\n"})
    monkeypatch.syspath_prepend(str(theirs))
    monkeypatch.syspath_prepend(str(ours))
    importlib.invalidate_caches()
    driver = ws / ".drivers" / "greeter" / "DRIVER.md"
    driver.write_text(
        DRIVER.replace("package: greetdist", "package: greetns\nentrypoint: nsdist.greet").replace(
            "name: greetdist }", "name: greetns }"
        )
    )
    try:
        assert importlib.import_module("nsdist.other").VALUE == 1
        invoker = DriverInvoker(ws)
        pin = invoker.pin("greeter", "greet")
        assert pin is not None and pin.distribution == "greetns"
        invoker.check_pins([pin])
        result = asyncio.run(invoker.invoke(ActionCall("greeter", "greet", {})))
        assert result == {"text": "hello"}
        spec = sys.modules["nsdist.greet"].__spec__
        assert spec is not None and getattr(spec.loader, "checked", None)
    finally:
        for name in [n for n in sys.modules if n.partition(".")[0] == "nsdist"]:
            del sys.modules[name]
        release("nsdist")


def test_a_shadowing_package_imported_before_the_check_is_refused(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shadow = ws.parent / "shadow"
    (shadow / "greetdist").mkdir(parents=True)
    (shadow / "greetdist" / "__init__.py").write_text(MODULE.replace("hello", "shadow"))
    monkeypatch.syspath_prepend(str(shadow))
    importlib.invalidate_caches()
    importlib.import_module("greetdist")  # the shadow, imported the ordinary way
    monkeypatch.syspath_prepend(str(ws.parent / "site"))
    invoker = DriverInvoker(ws)
    pin = invoker.pin("greeter", "greet")
    assert pin is not None
    invoker.check_pins([pin])
    with pytest.raises(LaunchError) as caught:
        asyncio.run(invoker.invoke(ActionCall("greeter", "greet", {})))
    assert caught.value.code == "launch.code_changed"
    assert "greetdist was imported in this process before its code pin" in caught.value.message
