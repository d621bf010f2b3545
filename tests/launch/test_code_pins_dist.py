"""Code pins of a driver backed by an installed distribution: name, version
and the files its RECORD lists (a tiny dist-info made in tmp_path)."""

from __future__ import annotations

import base64
import hashlib
import importlib
from pathlib import Path

import pytest

from flightdeck.drivers import driver_code
from flightdeck.launch import DriverInvoker, LaunchError

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


def _install(site: Path, version: str, module: str = MODULE) -> None:
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
    rows += ["greetdist/__pycache__/__init__.cpython-312.pyc,,", f"{info.name}/RECORD,,"]
    (info / "RECORD").write_text("\n".join(rows) + "\n")
    importlib.invalidate_caches()  # importlib.metadata caches directory listings


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
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
