"""Code pinning (issue 12 item 4, issue 15 item 4): freeze records the driver
code behind every action ref; launch refuses other code before anything runs."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from flightdeck.audit import MemoryAuditSink
from flightdeck.drivers import digest_of
from flightdeck.flightplan import CodePin, FlightPlanError, Lock, freeze_plan, generate_keys
from flightdeck.launch import (
    ActionCall,
    Approvals,
    DriverInvoker,
    Journal,
    LaunchError,
    LaunchOptions,
    RunResult,
    Runtime,
    SecretStore,
    StepServices,
    StepSettings,
    code_resolver,
    launch,
)
from tests.flightplan._resign import resign

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
PACKAGE = """import os, pathlib

def greet(name):
    pathlib.Path(os.environ["GREET_MARKS"], "called").write_text(name)
    return {"text": "hello " + name}
"""
IMPORTED = "flightdeck_local_greeter"  # the module name a local driver is imported as
MODULE = "../../packages/greetpkg/__init__.py"


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / ".tools" / "greet").mkdir(parents=True)
    (ws / ".tools" / "greet" / "TOOL.md").write_text(TOOL)
    (ws / ".drivers" / "greeter").mkdir(parents=True)
    (ws / ".drivers" / "greeter" / "DRIVER.md").write_text(DRIVER)
    (ws / "packages" / "greetpkg").mkdir(parents=True)
    (ws / "packages" / "greetpkg" / "__init__.py").write_text(PACKAGE)
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
    return ws


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("GREET_MARKS", str(marks))
    monkeypatch.delitem(sys.modules, IMPORTED, raising=False)
    return _workspace(tmp_path)


def _freeze(ws: Path, *, pinned: bool = True) -> dict[str, Any]:
    """The stored lock, with `codePins` read from the stored code-pins.json
    (the SKILL.md's own lock holds none: Aileron's lock is closed)."""
    keys = generate_keys(ws.parent / "keys")
    outcome = freeze_plan(
        ws / "SKILL.md",
        signing_key=keys.private_path,
        version="1.0.0",
        code=code_resolver(ws) if pinned else None,
    )
    lock = dict(outcome.frozen.lock)
    assert "codePins" not in lock
    pins = outcome.stored.path / "code-pins.json"
    if pins.exists():
        lock["codePins"] = json.loads(pins.read_text())["codePins"]
    return lock


class Run:
    def __init__(self, ws: Path) -> None:
        self.audit = MemoryAuditSink()
        self.journal = Journal(ws.parent / "runs.sqlite3")
        self.invoker = DriverInvoker(ws)
        self.ws = ws

    def __call__(self, **options: Any) -> RunResult:
        services = StepServices(self.invoker, SecretStore(env={}, path=self.ws / "s.toml"))
        runtime = Runtime(services, journal=self.journal, audit=self.audit)
        chosen = LaunchOptions(
            inputs={"who": "ada"},
            out_dir=self.ws.parent / "out",
            settings=StepSettings(workspace=str(self.ws), retry_base_delay=0.0),
            **options,
        )
        target = None if chosen.resume else "greeting@1.0.0"
        return asyncio.run(launch(target, chosen, runtime))

    def refused(self) -> LaunchError:
        with pytest.raises(LaunchError) as caught:
            self()
        marks = Path(os.environ["GREET_MARKS"])
        # Nothing ran, nothing imported, no run recorded or audited.
        assert not (marks / "called").exists() and IMPORTED not in sys.modules
        assert self.journal.runs() == [] and self.audit.records() == []
        return caught.value


def test_freeze_records_the_driver_its_location_and_a_recomputable_digest(ws: Path) -> None:
    (ws / "packages" / "greetpkg" / "__pycache__").mkdir()
    (ws / "packages" / "greetpkg" / "__pycache__" / "x.cpython-312.pyc").write_bytes(b"\0")
    [pin] = _freeze(ws)["codePins"]
    assert (pin["driver"], pin["tools"], pin["root"], pin["location"]) == (
        "greeter",
        ["greet"],
        "workspace",
        ".drivers/greeter/DRIVER.md",
    )
    assert sorted(pin["files"]) == ["../../.tools/greet/TOOL.md", MODULE, "DRIVER.md"]
    # docs/canonical-bytes.md: sha256sum lines sorted by name, then SHA-256.
    driver_dir = ws / ".drivers" / "greeter"
    lines = []
    for name in sorted(pin["files"], key=lambda n: n.encode()):
        hexdigest = hashlib.sha256((driver_dir / name).read_bytes()).hexdigest()
        assert pin["files"][name] == "sha256:" + hexdigest
        lines.append(f"{hexdigest}  {name}\n")
    manifest = "".join(lines).encode()
    assert pin["digest"] == "sha256:" + hashlib.sha256(manifest).hexdigest()


def test_unchanged_code_runs_and_the_audit_carries_the_digest(ws: Path) -> None:
    [pin] = _freeze(ws)["codePins"]
    run = Run(ws)
    result = run()
    assert result.status == "completed", result.error
    assert result.warnings == []
    assert (Path(os.environ["GREET_MARKS"]) / "called").read_text() == "ada"
    [record] = [dict(r.fields) for r in run.audit.records(kind="launch.run")]
    assert record["code_pinned"] is True and record["code_pins"] == {"greeter": pin["digest"]}
    calls = [dict(r.fields) for r in run.audit.records() if "connector-hash" in r.fields]
    assert calls and {c["connector-hash"] for c in calls} == {pin["digest"]}


def test_one_changed_byte_in_the_module_is_refused_naming_the_file(ws: Path) -> None:
    _freeze(ws)
    module = ws / "packages" / "greetpkg" / "__init__.py"
    module.write_text(PACKAGE.replace('"hello "', '"EVIL! "'))
    error = Run(ws).refused()
    assert error.code == "launch.code_changed"
    assert "greeter" in error.message and f"file {MODULE} changed" in error.message


@pytest.mark.parametrize(
    ("where", "named"),
    [
        ("packages/greetpkg/helper.py", "file ../../packages/greetpkg/helper.py was added"),
        (".drivers/greeter/notes.txt", "file notes.txt was added"),
    ],
)
def test_an_added_file_is_refused(ws: Path, where: str, named: str) -> None:
    _freeze(ws)
    (ws / where).write_text("print('side effect')\n")
    error = Run(ws).refused()
    assert error.code == "launch.code_changed" and named in error.message


def test_a_removed_tool_file_is_refused(ws: Path) -> None:
    _freeze(ws)
    (ws / ".tools" / "greet" / "TOOL.md").unlink()
    error = Run(ws).refused()
    assert "file ../../.tools/greet/TOOL.md was removed" in error.message


def test_code_changed_after_the_gate_is_caught_before_the_import(ws: Path) -> None:
    lock = _freeze(ws)
    pins = Lock.read(lock)
    assert pins is not None
    invoker = DriverInvoker(ws)
    invoker.check_pins(pins.code_pins)
    (ws / "packages" / "greetpkg" / "__init__.py").write_text(PACKAGE + "\n# edited\n")
    call = ActionCall("greeter", "greet", {"name": "x"})
    with pytest.raises(LaunchError) as caught:
        asyncio.run(invoker.invoke(call))
    assert caught.value.code == "launch.code_changed"
    assert IMPORTED not in sys.modules


def test_a_plan_frozen_without_pins_runs_with_a_warning(ws: Path) -> None:
    assert "codePins" not in _freeze(ws, pinned=False)
    run = Run(ws)
    result = run()
    assert result.status == "completed" and result.warnings
    assert "code not pinned" in result.warnings[0]
    [record] = [dict(r.fields) for r in run.audit.records(kind="launch.run")]
    assert record["code_pinned"] is False


def test_a_missing_driver_at_freeze_is_located_at_the_step(ws: Path) -> None:
    plan = (ws / "SKILL.md").read_text().replace("greeter.greet", "absent.greet")
    (ws / "SKILL.md").write_text(plan)
    with pytest.raises(FlightPlanError) as caught:
        _freeze(ws)
    assert caught.value.code == "freeze.driver_not_found"
    line = next(i for i, t in enumerate(plan.splitlines(), 1) if "actionRef: aileron:absent" in t)
    assert caught.value.where is not None
    assert caught.value.where.startswith(f"{ws / 'SKILL.md'}:{line}:")


def test_a_tool_the_driver_does_not_implement_is_refused_at_freeze(ws: Path) -> None:
    plan = (ws / "SKILL.md").read_text().replace("greeter.greet", "greeter.wave")
    (ws / "SKILL.md").write_text(plan)
    with pytest.raises(FlightPlanError) as caught:
        _freeze(ws)
    assert caught.value.code == "freeze.driver_not_found" and "'wave'" in caught.value.message


def test_a_symlink_in_the_driver_tree_is_refused_at_freeze(ws: Path) -> None:
    (ws / "packages" / "greetpkg" / "linked.py").symlink_to(ws / "SKILL.md")
    with pytest.raises(FlightPlanError) as caught:
        _freeze(ws)
    assert caught.value.code == "freeze.code_unpinnable"
    assert caught.value.where is not None and caught.value.where.endswith("linked.py")


def _fd(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [FD, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def test_cli_launch_from_another_directory_and_a_moved_workspace(ws: Path) -> None:
    keys = generate_keys(ws.parent / "keys")
    frozen = _fd(
        "freeze", "SKILL.md", "--signing-key", keys.private_path, "--version", "1.0.0", cwd=ws
    )
    assert frozen.returncode == 0, frozen.stderr
    elsewhere = ws.parent / "elsewhere"
    elsewhere.mkdir()
    args = ("launch", "greeting@1.0.0", "--input", "who=ada", "--format", "json")
    done = _fd(*args, cwd=elsewhere)  # the workspace recorded at freeze
    assert done.returncode == 0, done.stderr + done.stdout
    assert json.loads(done.stdout)["status"] == "completed"

    moved = ws.parent / "moved"
    ws.rename(moved)
    done = _fd(*args, cwd=elsewhere)  # recorded workspace gone: the current directory
    assert done.returncode == 1
    assert json.loads(done.stdout)["error"]["code"] == "launch.code_changed"
    done = _fd(*args, "--workspace", moved, cwd=elsewhere)
    assert done.returncode == 0, done.stderr + done.stdout

    (moved / "packages" / "greetpkg" / "__init__.py").write_text(PACKAGE + "#\n")
    done = _fd(*args, "--workspace", moved, cwd=elsewhere)
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "launch.code_changed" and MODULE in error["message"]


def test_the_worked_example_of_docs_canonical_bytes() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "canonical-bytes.md").read_text()
    example = page.split("Worked example of step 6 alone", 1)[1]
    stated = example.split("its digest is `", 1)[1].split("`", 1)[0]
    one = {"DRIVER.md": "sha256:" + hashlib.sha256(b"x\n").hexdigest()}
    assert digest_of(one) == stated


def test_a_driver_library_is_pinned_relative_to_the_library(ws: Path) -> None:
    shared = ws.parent / "shared"
    (shared / "libs").mkdir(parents=True)
    (ws / ".drivers" / "greeter").rename(shared / "libs" / "greeter")
    (ws / "packages").rename(shared / "packages")
    (ws / ".tools").rename(shared / ".tools")
    (ws / "flightdeck.toml").write_text(f'[launch]\ndriver_libraries = ["{shared / "libs"}"]\n')
    from flightdeck.config import set_trust

    set_trust(ws)  # the workspace names where code is imported from
    [pin] = _freeze(ws)["codePins"]
    assert (pin["root"], pin["location"]) == ("library", "greeter/DRIVER.md")
    invoker = code_resolver(ws)
    recorded = CodePin.read(pin)
    assert recorded is not None
    invoker.check_pins([recorded])
    (shared / "packages" / "greetpkg" / "__init__.py").write_text(PACKAGE + "#\n")
    with pytest.raises(LaunchError) as caught:
        code_resolver(ws).check_pins([recorded])
    assert f"file {MODULE} changed" in caught.value.message


def test_a_resumed_run_is_checked_again(ws: Path) -> None:
    plan = (ws / "SKILL.md").read_text().replace("effect: read", "effect: write")
    (ws / "SKILL.md").write_text(plan)
    _freeze(ws)
    run = Run(ws)
    paused = run()
    assert paused.status == "pending-approval"
    (ws / "packages" / "greetpkg" / "__init__.py").write_text(PACKAGE + "#\n")
    with pytest.raises(LaunchError) as caught:
        run(resume=paused.run_id, approvals=Approvals.build(["all"]))
    assert caught.value.code == "launch.code_changed"
    assert not (Path(os.environ["GREET_MARKS"]) / "called").exists()
    row = run.journal.run(paused.run_id)
    assert row is not None and row.status == "pending-approval"


def test_a_plan_frozen_with_pins_inside_its_lock_still_verifies_and_is_checked(ws: Path) -> None:
    """Before code-pins.json, freeze wrote the pins into `aileron.lock`."""
    keys = generate_keys(ws.parent / "keys")
    outcome = freeze_plan(
        ws / "SKILL.md", signing_key=keys.private_path, version="1.0.0", code=code_resolver(ws)
    )
    folder = outcome.stored.path
    pins = json.loads((folder / "code-pins.json").read_text())["codePins"]
    (folder / "code-pins.json").unlink()

    def old_format(data: dict[str, Any]) -> None:
        del data["metadata"]
        data["aileron"]["lock"]["codePins"] = pins

    resign(folder, keys, old_format)
    lock = json.loads((folder / "lock.json").read_text())
    assert "codePins" in lock
    folder.rename(folder.with_name(lock["contentHash"][7:23]))  # a new hash, its directory
    run = Run(ws)
    result = run()
    assert result.status == "completed", result.error
    [record] = [dict(r.fields) for r in run.audit.records(kind="launch.run")]
    assert record["code_pins"] == {"greeter": pins[0]["digest"]}
    (ws / "packages" / "greetpkg" / "__init__.py").write_text(PACKAGE + "#\n")
    with pytest.raises(LaunchError) as caught:
        run()
    assert caught.value.code == "launch.code_changed"
