"""Credentials, verification probes and retries through a real SDK driver and the CLI."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .conftest import contract, write_plan

FD = str(Path(sys.executable).with_name("flightdeck"))
CANARY = "CANARY-0b5e55ed-cli-credential"

TOOL = """---
name: {id}
id: {id}
description: A test tool.
version: 1.0.0
inputs:
  type: object
  properties: {{ {props} }}
  additionalProperties: false
outputs:
  type: object
---
Test.
"""
DRIVER = """---
name: Credentialed
id: cred
description: A driver that receives the plan-bound credential under its documented name.
version: 1.0.0
kind: sdk
package: credpkg
package_manager: local
import_style: python
install:
  - { method: vendored, path: ../../packages/credpkg }
auth:
  state: { env: ["FLIGHTDECK_CREDENTIAL", "UNRELATED_TOKEN"] }
network:
  egress: []
implements:
  - tool: ../../.tools/echo/TOOL.md
    version: "^1.0.0"
    metadata:
      sdk:
        function_ref: "echo"
        args_template:
          text: "${input.text}"
          token: "${secrets.FLIGHTDECK_CREDENTIAL}"
          placement: "${context.credential.placement}"
          kind: "${context.credential.kind}"
          label: "${context.credential.identityLabel}"
  - tool: ../../.tools/echo-verify/TOOL.md
    version: "^1.0.0"
    metadata:
      sdk:
        function_ref: "verify"
        args_template:
          method: "${input.method}"
          path: "${input.path}"
          token: "${secrets.FLIGHTDECK_CREDENTIAL}"
  - tool: ../../.tools/flaky/TOOL.md
    version: "^1.0.0"
    metadata:
      sdk:
        function_ref: "flaky"
        args_template: { text: "${input.text}" }
---
"""
BARE_DRIVER = """---
name: Bare
id: bare
description: A driver that declares no secret.
version: 1.0.0
kind: sdk
package: credpkg
package_manager: local
import_style: python
install:
  - { method: vendored, path: ../../packages/credpkg }
network:
  egress: []
implements:
  - tool: ../../.tools/flaky/TOOL.md
    version: "^1.0.0"
    metadata:
      sdk:
        function_ref: "flaky"
        args_template: { text: "${input.text}" }
---
"""
PACKAGE = """
import hashlib, os, pathlib, time

def _mark(prefix):
    folder = pathlib.Path(os.environ["MARKS"])
    n = len(list(folder.glob(prefix + "-*"))) + 1
    (folder / f"{prefix}-{n}").write_text("x")
    return n

def echo(text, token, placement, kind, label):
    _mark("echo")
    sha = hashlib.sha256(token.encode()).hexdigest()
    return {"said": text, "tokenSha": sha, "placement": placement, "kind": kind, "label": label}

def verify(method, path, token):
    _mark("verify")
    if os.environ.get("PROBE_FAIL"):
        raise PermissionError(f"{method} {path}: token {token} was rejected")
    return {"ok": True}

def flaky(text):
    n = _mark("flaky")
    if os.environ.get("FLAKY_OK"):
        return {"text": text}
    if n == 1:
        raise TimeoutError("upstream timed out")
    time.sleep(120)
    return {"text": text}
"""
API_KEY = {"kind": "api-key", "placement": "header", "identityLabel": "ops"}
TEXT_INPUT = [
    {"name": "text", "type": "string", "resolution": {"rule": "literal", "default": "hi"}}
]
JSON_OUT = [
    {
        "name": "out.json",
        "mimeType": "application/json",
        "encoding": "utf-8",
        "publish": {"target": "file", "path": "out.json"},
    }
]


def _one_step_plan(folder: Path, ref: str, tc: dict[str, Any]) -> Path:
    folder.mkdir(parents=True)
    return write_plan(
        folder,
        inputs=TEXT_INPUT,
        outputs=JSON_OUT,
        actions={ref: tc},
        steps=[
            {
                "id": "call",
                "kind": "action-call",
                "actionRef": ref,
                "args": {"text": "inputs.text"},
                "outputs": ["reply"],
                "materializesOutput": "out.json",
            }
        ],
    )


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    tools = {
        "echo": ("echo", "text: {}"),
        "echo-verify": ("echo.verify", "method: {}, path: {}"),
        "flaky": ("flaky", "text: {}"),
    }
    for folder, (tool_id, props) in tools.items():
        (ws / ".tools" / folder).mkdir(parents=True)
        (ws / ".tools" / folder / "TOOL.md").write_text(TOOL.format(id=tool_id, props=props))
    for name, text in (("cred", DRIVER), ("bare", BARE_DRIVER)):
        (ws / ".drivers" / name).mkdir(parents=True)
        (ws / ".drivers" / name / "DRIVER.md").write_text(text)
    (ws / "packages" / "credpkg").mkdir(parents=True)
    (ws / "packages" / "credpkg" / "__init__.py").write_text(PACKAGE)
    (ws / "marks").mkdir()
    return ws


def _env(ws: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "MARKS": str(ws / "marks"), **extra}


def _fd(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [FD, *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


def _marks(ws: Path, prefix: str) -> int:
    return len(list((ws / "marks").glob(prefix + "-*")))


def test_cli_credential_placed_for_the_driver_and_probe_verified(tmp_path: Path) -> None:
    """Issue 6 credentials + seed 003 verification: the bound credential reaches the SDK
    driver as ${secrets.FLIGHTDECK_CREDENTIAL} with its kind and placement in
    context.credential; --verify-credentials runs the `<action>.verify` probe first; a
    failing probe refuses the launch (credential.verification_failed) before any step; the
    canary never appears in stdout/stderr, journal, audit or outputs."""
    ws = _workspace(tmp_path)
    probed = contract(credential=API_KEY, verification={"method": "GET", "path": "/me"})
    plan = _one_step_plan(ws / "a", "aileron:cred.echo", probed)
    env = _env(ws, FLIGHTDECK_SECRET_CRED_OPS=CANARY, UNRELATED_TOKEN="ambient")
    args = ["launch", str(plan), "--unsigned", "--workspace", str(ws), "--format", "json"]
    ok = _fd(*args, "--verify-credentials", "--out-dir", str(tmp_path / "out"), env=env)
    assert ok.returncode == 0, ok.stderr + ok.stdout
    reply = json.loads((tmp_path / "out" / "out.json").read_text())
    assert reply["tokenSha"] == hashlib.sha256(CANARY.encode()).hexdigest()
    assert (reply["placement"], reply["kind"], reply["label"]) == ("header", "api-key", "ops")
    assert json.loads(ok.stdout)["credential_probes"][0]["status"] == "ok"
    assert (_marks(ws, "verify"), _marks(ws, "echo")) == (1, 1)

    failed = _fd(*args, "--verify-credentials", env={**env, "PROBE_FAIL": "1"})
    assert failed.returncode == 1
    error = json.loads(failed.stdout)["error"]
    assert error["code"] == "credential.verification_failed"
    assert "aileron:cred.echo" in error["message"]
    assert (_marks(ws, "verify"), _marks(ws, "echo")) == (2, 1)  # no step ran
    assert "Traceback" not in failed.stderr

    run_id = json.loads(ok.stdout)["run_id"]
    shown = _fd("runs", "show", run_id, "--format", "json", env=env)
    probes = [
        r for r in json.loads(shown.stdout)["audit"] if r["kind"] == "launch.credential_probe"
    ]
    assert probes and probes[0]["fields"]["result"] == "ok"
    home = Path(os.environ["FLIGHTDECK_HOME"])
    for text in (ok.stdout, ok.stderr, failed.stdout, failed.stderr, shown.stdout):
        assert CANARY not in text
    files = [p for p in [*home.rglob("*"), *tmp_path.rglob("*")] if p.is_file()]
    assert all(CANARY.encode() not in p.read_bytes() for p in files)


def test_cli_unrunnable_probe_warns_and_the_run_goes_on(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    probed = contract(verification={"method": "HEAD", "path": "/health"})
    plan = _one_step_plan(ws / "b", "aileron:cred.flaky", probed)
    env = _env(ws, FLAKY_OK="1")
    result = _fd(
        "launch", str(plan), "--unsigned", "--workspace", str(ws), "--verify-credentials", env=env
    )
    assert result.returncode == 0, result.stderr
    assert "warning: credential probe of aileron:cred.flaky not run" in result.stderr


def test_cli_credential_bound_to_a_driver_with_no_secret_is_unplaceable(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    plan = _one_step_plan(ws / "c", "aileron:bare.flaky", contract(credential=API_KEY))
    env = _env(ws, FLAKY_OK="1", FLIGHTDECK_SECRET_BARE=CANARY)
    result = _fd(
        "launch", str(plan), "--unsigned", "--workspace", str(ws), "--format", "json", env=env
    )
    assert result.returncode == 1
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "credential.unplaceable" and "FLIGHTDECK_CREDENTIAL" in error["hint"]
    assert _marks(ws, "flaky") == 0 and CANARY not in result.stdout + result.stderr


def test_cli_bad_retry_config_is_named(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    plan = _one_step_plan(ws / "d", "aileron:cred.flaky", contract())
    (ws / "flightdeck.toml").write_text("[launch]\nmax_tries = 0\n")
    result = _fd("launch", str(plan), "--unsigned", "--workspace", str(ws), env=_env(ws))
    assert result.returncode == 1
    assert "config.invalid" in result.stderr and "[launch] max_tries" in result.stderr
    assert "Traceback" not in result.stderr


def test_cli_kill_mid_retry_keeps_the_finished_tries_audited(tmp_path: Path) -> None:
    """Issue 6: each try audited; the record is written as the try ends, so a process
    killed during try 2 has try 1 in the audit. The bound comes from flightdeck.toml."""
    ws = _workspace(tmp_path)
    plan = _one_step_plan(ws / "e", "aileron:cred.flaky", contract())
    (ws / "flightdeck.toml").write_text("[launch]\nmax_tries = 4\nbackoff_seconds = 0\n")
    env = _env(ws)
    args = [FD, "launch", str(plan), "--unsigned", "--workspace", str(ws)]
    process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while _marks(ws, "flaky") < 2:
        assert process.poll() is None, "the launch ended before try 2"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    listed = json.loads(_fd("runs", "list", "--format", "json", env=env).stdout)
    shown = _fd("runs", "show", listed[0]["run_id"], "--format", "json", env=env)
    tries = [r["fields"] for r in json.loads(shown.stdout)["audit"]]
    tries = [f for f in tries if f.get("step") == "call"]
    assert [f["attempt"] for f in tries] == [1]
    assert tries[0]["result"].startswith("error:")
