"""Code pins cover what runs: a pyc planted beside a pinned driver's source
is never what `flightdeck launch` imports (issue 28 item 4).

Python uses `__pycache__/<module>.cpython-311.pyc` in place of the source
when the pyc is an unchecked hash-based one, or a timestamp one whose
recorded mtime and size match the source's. Pins digest the source and
leave bytecode out, so the launch must compile the pinned source instead.
Each attack is first shown to work against a plain `import`, so the test
would fail if it stopped being an attack.
"""

from __future__ import annotations

import importlib.util
import json
import os
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

from flightdeck.flightplan import generate_keys

from .conftest import contract, write_plan

FD = str(Path(sys.executable).with_name("flightdeck"))
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
Greets.
"""
LOCAL = """---
name: Greeter
id: greeter
description: Greets by name.
version: 1.0.0
kind: sdk
package: greetpkg
package_manager: local
import_style: python
install:
  - { method: vendored, path: ../../packages/greetpkg }
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
# The package's code sits in a subpackage: pins cover nested folders too.
INIT = '''"""The greeter package: its one function lives in a subpackage, padded
with this docstring so that the planted code fits in the same size."""

from .sub.helper import greet
'''
HELPER = '''"""Greets, and marks the call so the test knows this code ran."""
import os
import pathlib


def greet(name):
    pathlib.Path(os.environ["GREET_MARKS"], "called").write_text(name)
    return {"text": "hello " + name}
'''
EVIL = """import os, pathlib
def greet(name):
    pathlib.Path(os.environ["GREET_MARKS"], "pwned").write_text("bytecode ran")
    return {"text": "pwned " + name}
"""
MODES = ("unchecked-hash", "timestamp")


def _plant(source: Path, mode: str, scratch: Path) -> Path:
    """A pyc of EVIL where the interpreter looks for `source`'s bytecode."""
    target = Path(importlib.util.cache_from_source(str(source)))
    target.parent.mkdir(exist_ok=True)
    fake = scratch / f"evil-{source.stem}.py"
    size = source.stat().st_size
    assert len(EVIL) < size
    fake.write_text(EVIL + "#" * (size - len(EVIL) - 1) + "\n")
    if mode == "unchecked-hash":
        invalidation = py_compile.PycInvalidationMode.UNCHECKED_HASH
    else:  # the header records the source's own mtime and size
        invalidation = py_compile.PycInvalidationMode.TIMESTAMP
        stat = source.stat()
        os.utime(fake, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        assert fake.stat().st_size == size
    py_compile.compile(str(fake), cfile=str(target), doraise=True, invalidation_mode=invalidation)
    return target


def _plain_import_runs_it(folder: Path, module: str, marks: Path) -> bool:
    """Whether a plain import of `module` from `folder` runs the planted pyc."""
    probe = f"import sys; sys.path.insert(0, {str(folder)!r}); import {module}; {module}.greet('x')"
    env = {**os.environ, "GREET_MARKS": str(marks), "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run([sys.executable, "-c", probe], env=env, check=True, timeout=60)
    ran = (marks / "pwned").exists()
    (marks / "pwned").unlink(missing_ok=True)
    return ran


def _fd(*args: str | Path, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [FD, *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env=_environ(env),
    )


def _environ(extra: dict[str, str]) -> dict[str, str]:
    """os.environ with `extra`; a PYTHONPATH given goes before the caller's own."""
    merged = {**os.environ, **extra}
    if "PYTHONPATH" in extra and os.environ.get("PYTHONPATH"):
        merged["PYTHONPATH"] = extra["PYTHONPATH"] + os.pathsep + os.environ["PYTHONPATH"]
    return merged


def _plan(ws: Path) -> None:
    (ws / ".tools" / "greet").mkdir(parents=True)
    (ws / ".tools" / "greet" / "TOOL.md").write_text(TOOL)
    write_plan(
        ws,
        name="greeting",
        inputs=[{"name": "who", "type": "string", "resolution": {"rule": "literal"}}],
        actions={"aileron:greeter.greet": contract()},
        steps=[
            {
                "id": "hello",
                "kind": "action-call",
                "actionRef": "aileron:greeter.greet",
                "args": {"name": "inputs.who"},
                "outputs": ["text"],
            }
        ],
    )


def _freeze_and_launch(ws: Path, env: dict[str, str]) -> dict[str, object]:
    keys = generate_keys(ws.parent / "keys")
    frozen = _fd(
        "freeze", "SKILL.md", "--signing-key", keys.private_path, "--version", "1.0.0",
        cwd=ws, env=env,
    )  # fmt: skip
    assert frozen.returncode == 0, frozen.stderr
    out = ws.parent / "out"
    done = _fd(
        "launch", "greeting@1.0.0", "--input", "who=ada", "--out-dir", out, "--format", "json",
        cwd=ws, env=env,
    )  # fmt: skip
    assert done.stdout, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    result["returncode"] = done.returncode
    return result


def _pycs(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted(root.rglob("*.pyc"))}


@pytest.fixture
def marks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "marks"
    folder.mkdir()
    monkeypatch.setenv("GREET_MARKS", str(folder))
    return folder


@pytest.mark.parametrize("mode", MODES)
def test_a_planted_pyc_of_a_local_driver_is_not_what_launch_runs(
    tmp_path: Path, marks: Path, mode: str
) -> None:
    ws = tmp_path / "ws"
    _plan(ws)
    (ws / ".drivers" / "greeter").mkdir(parents=True)
    (ws / ".drivers" / "greeter" / "DRIVER.md").write_text(LOCAL)
    package = ws / "packages" / "greetpkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text(INIT)
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "helper.py").write_text(HELPER)
    # Both the package and its subpackage's module get a planted pyc.
    _plant(package / "__init__.py", mode, tmp_path)
    _plant(package / "sub" / "helper.py", mode, tmp_path)
    assert _plain_import_runs_it(ws / "packages", "greetpkg", marks)
    planted = _pycs(ws)

    result = _freeze_and_launch(ws, {})
    assert result["returncode"] == 0, result
    assert result["status"] == "completed"
    assert not (marks / "pwned").exists(), "the planted bytecode ran"
    assert (marks / "called").read_text() == "ada"  # the pinned source ran
    assert _pycs(ws) == planted  # and no bytecode was written either


def _record_hash(raw: bytes) -> str:
    import base64
    import hashlib

    digest = hashlib.sha256(raw).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


DIST = LOCAL.replace("package_manager: local", "package_manager: pip").replace(
    "  - { method: vendored, path: ../../packages/greetpkg }", "  - { method: pip, name: greetpkg }"
)


def _install(site: Path) -> None:
    """greetpkg 1.0 as pip leaves it: files, and a RECORD listing the pycs without hashes."""
    info = site / "greetpkg-1.0.dist-info"
    info.mkdir(parents=True)
    files = {
        "greetpkg/__init__.py": INIT.encode(),
        "greetpkg/sub/__init__.py": b"",
        "greetpkg/sub/helper.py": HELPER.encode(),
        f"{info.name}/METADATA": b"Metadata-Version: 2.1\nName: greetpkg\nVersion: 1.0\n",
    }
    for name, raw in files.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_bytes(raw)
    rows = [f"{name},{_record_hash(raw)},{len(raw)}" for name, raw in files.items()]
    rows += [
        "greetpkg/__pycache__/__init__.cpython-311.pyc,,",
        "greetpkg/sub/__pycache__/helper.cpython-311.pyc,,",
        f"{info.name}/RECORD,,",
    ]
    (info / "RECORD").write_text("\n".join(rows) + "\n")


@pytest.mark.parametrize("mode", MODES)
def test_a_planted_pyc_of_an_installed_distribution_is_not_what_launch_runs(
    tmp_path: Path, marks: Path, mode: str
) -> None:
    site = tmp_path / "site"
    _install(site)
    ws = tmp_path / "ws"
    _plan(ws)
    (ws / ".drivers" / "greeter").mkdir(parents=True)
    (ws / ".drivers" / "greeter" / "DRIVER.md").write_text(DIST)
    _plant(site / "greetpkg" / "__init__.py", mode, tmp_path)
    _plant(site / "greetpkg" / "sub" / "helper.py", mode, tmp_path)
    assert _plain_import_runs_it(site, "greetpkg", marks)
    planted = _pycs(site)

    result = _freeze_and_launch(ws, {"PYTHONPATH": str(site)})
    assert result["returncode"] == 0, result
    assert result["status"] == "completed"
    assert not (marks / "pwned").exists(), "the planted bytecode ran"
    assert (marks / "called").read_text() == "ada"
    assert _pycs(site) == planted


def test_a_module_shadowing_the_pinned_distribution_is_refused(tmp_path: Path, marks: Path) -> None:
    """The pin digests the distribution's RECORD files; an earlier sys.path
    entry holding a package of the same name is what a plain import runs."""
    site = tmp_path / "site"
    _install(site)
    ws = tmp_path / "ws"
    _plan(ws)
    (ws / ".drivers" / "greeter").mkdir(parents=True)
    (ws / ".drivers" / "greeter" / "DRIVER.md").write_text(DIST)
    keys = generate_keys(tmp_path / "keys")
    env = {"PYTHONPATH": str(site)}
    frozen = _fd(
        "freeze", "SKILL.md", "--signing-key", keys.private_path, "--version", "1.0.0",
        cwd=ws, env=env,
    )  # fmt: skip
    assert frozen.returncode == 0, frozen.stderr
    shadow = tmp_path / "shadow" / "greetpkg"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(EVIL)
    env = {"PYTHONPATH": f"{shadow.parent}{os.pathsep}{site}"}
    done = _fd(
        "launch", "greeting@1.0.0", "--input", "who=ada", "--format", "json", cwd=ws, env=env
    )
    assert not (marks / "pwned").exists(), "the shadowing package ran"
    assert done.returncode == 1, done.stdout + done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "launch.code_changed", error
    assert str(shadow / "__init__.py") in error["message"]
