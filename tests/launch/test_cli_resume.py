"""The CLI as a process: launch, runs, and resume after a kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import contract, write_plan

ROOT = Path(__file__).resolve().parents[2]
FD = str(Path(sys.executable).with_name("flightdeck"))

TOOL = """---
name: {name}
id: {id}
description: A test tool.
version: 1.0.0
inputs:
  type: object
  properties: {{ text: {{}} }}
  additionalProperties: false
outputs:
  type: object
---
Test.
"""
DRIVER = """---
name: Ledger
id: ledger
description: A test ledger.
version: 1.0.0
kind: sdk
package: ledgerpkg
package_manager: local
import_style: python
install:
  - {{ method: vendored, path: ../../packages/ledgerpkg }}
network:
  egress: []
implements:
  - tool: ../../.tools/append/TOOL.md
    version: "^1.0.0"
    metadata:
      sdk:
        function_ref: "append"
        args_template: {{ text: "${{input.text}}", key: "${{context.idempotency_key}}" }}
  - tool: ../../.tools/wait/TOOL.md
    version: "^1.0.0"
    metadata:
      sdk:
        function_ref: "wait"
        args_template: {{ text: "${{input.text}}" }}
---
"""
PACKAGE = """
import os, pathlib, time

def _mark(name):
    pathlib.Path(os.environ["LEDGER_DIR"], name).write_text("x")

def append(text, key=""):
    with open(os.environ["LEDGER_DIR"] + "/ledger.txt", "a") as handle:
        handle.write(text + "\\n")
    _mark("appended")
    time.sleep(float(os.environ.get("APPEND_SECONDS", "0")))
    return {"count": 1, "text": text}

def wait(text):
    _mark("waiting")
    time.sleep(float(os.environ.get("WAIT_SECONDS", "0")))
    return {"done": text}
"""

WRITE = contract(effect="write", idempotency={"safeToRetry": False, "idempotencyKey": False})


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    for tool in ("append", "wait"):
        (ws / ".tools" / tool).mkdir(parents=True)
        (ws / ".tools" / tool / "TOOL.md").write_text(TOOL.format(name=tool, id=tool))
    (ws / ".drivers" / "ledger").mkdir(parents=True)
    (ws / ".drivers" / "ledger" / "DRIVER.md").write_text(DRIVER.format())
    (ws / "packages" / "ledgerpkg").mkdir(parents=True)
    (ws / "packages" / "ledgerpkg" / "__init__.py").write_text(PACKAGE)
    plan = write_plan(
        ws,
        inputs=[
            {
                "name": "text",
                "type": "string",
                "resolution": {"rule": "literal", "default": "entry"},
            }
        ],
        actions={"aileron:ledger.append": WRITE, "aileron:ledger.wait": contract()},
        outputs=[
            {
                "name": "done.json",
                "mimeType": "application/json",
                "encoding": "utf-8",
                "publish": {"target": "file", "path": "done.json"},
            }
        ],
        steps=[
            {
                "id": "write",
                "kind": "action-call",
                "actionRef": "aileron:ledger.append",
                "args": {"text": "inputs.text"},
                "outputs": ["receipt"],
            },
            {
                "id": "wait",
                "kind": "action-call",
                "actionRef": "aileron:ledger.wait",
                "args": {"text": "steps.write.receipt"},
                "outputs": ["done"],
                "materializesOutput": "done.json",
            },
        ],
    )
    return ws, plan


def _env(ws: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "LEDGER_DIR": str(ws), **extra}


def _fd(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [FD, *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


def _kill_when(marker: Path, args: list[str], env: dict[str, str]) -> None:
    process = subprocess.Popen(
        [FD, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert process.poll() is None, "the launch ended before reaching the marker"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()


def _run_id() -> str:
    listed = _fd("runs", "list", "--format", "json")
    return str(json.loads(listed.stdout)[0]["run_id"])


def test_resume_after_kill_never_repeats_a_completed_write(tmp_path: Path) -> None:
    """Issue 6: a killed run resumes with --resume RUN_ID without repeating completed
    steps; a non-idempotent write never runs twice (process killed mid-run)."""
    ws, plan = _workspace(tmp_path)
    args = [
        "launch",
        str(plan),
        "--unsigned",
        "--workspace",
        str(ws),
        "--approve",
        "all",
        "--out-dir",
        str(tmp_path / "out"),
    ]
    _kill_when(ws / "waiting", args, _env(ws, WAIT_SECONDS="60"))
    assert (ws / "ledger.txt").read_text() == "entry\n"
    run_id = _run_id()
    shown = json.loads(_fd("runs", "show", run_id, "--format", "json").stdout)
    assert {s["id"]: s["status"] for s in shown["steps"]} == {
        "write": "completed",
        "wait": "started",
    }
    resumed = _fd(
        "launch", "--resume", run_id, "--workspace", str(ws), "--format", "json", env=_env(ws)
    )
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    assert json.loads(resumed.stdout)["status"] == "completed"
    assert (ws / "ledger.txt").read_text() == "entry\n"  # the write ran once
    assert json.loads((tmp_path / "out" / "done.json").read_text()) == {
        "count": 1,
        "text": "entry",
    }


def test_write_interrupted_mid_call_is_in_doubt_not_repeated(tmp_path: Path) -> None:
    """A write killed mid-call that is neither safeToRetry nor keyed is not re-run."""
    ws, plan = _workspace(tmp_path)
    args = ["launch", str(plan), "--unsigned", "--workspace", str(ws), "--approve", "all"]
    _kill_when(ws / "appended", args, _env(ws, APPEND_SECONDS="60"))
    run_id = _run_id()
    resumed = _fd(
        "launch", "--resume", run_id, "--workspace", str(ws), "--format", "json", env=_env(ws)
    )
    assert resumed.returncode == 1
    report = json.loads(resumed.stdout)
    assert report["error"]["code"] == "resume.in_doubt" and report["error"]["step"] == "write"
    assert (ws / "ledger.txt").read_text() == "entry\n"


def test_cli_pending_approval_exit_code_and_runs_show(tmp_path: Path) -> None:
    ws, plan = _workspace(tmp_path)
    first = _fd(
        "launch", str(plan), "--unsigned", "--workspace", str(ws), "--format", "json", env=_env(ws)
    )
    assert first.returncode == 3, first.stderr
    report = json.loads(first.stdout)
    assert report["status"] == "pending-approval" and report["pending_approval"] == ["write"]
    text = _fd("runs", "show", report["run_id"])
    assert "pending-approval" in text.stdout and "write" in text.stdout
    listed = json.loads(_fd("runs", "list", "--format", "json").stdout)
    assert listed[0]["run_id"] == report["run_id"]
    assert _fd("runs", "path").stdout.strip() == report["journal"]
    done = _fd(
        "launch",
        "--resume",
        report["run_id"],
        "--approve",
        "write",
        "--workspace",
        str(ws),
        env=_env(ws),
    )
    assert done.returncode == 0, done.stderr
    assert "completed" in done.stdout and "audit:" in done.stdout
    shown = json.loads(_fd("runs", "show", report["run_id"], "--format", "json").stdout)
    kinds = [record["kind"] for record in shown["audit"]]
    assert kinds.count("launch.action_call") == 2 and "launch.output" in kinds
    call = next(r["fields"] for r in shown["audit"] if r["kind"] == "launch.action_call")
    assert call["action-manifest-version"] == "append@1.0.0 via ledger@1.0.0"
    assert call["connector-hash"].startswith("sha256:")
    assert shown["approvals"] == [{"step": "write", "decision": "approved:flag"}]


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["launch"], 2, "name a plan"),
        (["launch", "no-such-plan"], 1, "store.not_found"),
        (["launch", "--resume", "run-nope"], 1, "resume.unknown_run"),
        (["runs", "show", "run-nope"], 1, "runs.unknown"),
    ],
)
def test_cli_errors(args: list[str], code: int, needle: str) -> None:
    result = _fd(*args)
    assert result.returncode == code
    assert needle in result.stderr + result.stdout
    assert "Traceback" not in result.stderr


def test_cli_bad_input_is_named(tmp_path: Path) -> None:
    _, plan = _workspace(tmp_path)
    result = _fd("launch", str(plan), "--unsigned", "--input", "nope=1", "--format", "json")
    assert result.returncode == 1
    error: dict[str, Any] = json.loads(result.stdout)["error"]
    assert error["code"] == "input.unknown" and "nope" in error["message"]
    assert "UNSIGNED" in result.stderr


def test_demo_script_runs_offline(tmp_path: Path) -> None:
    """Issue 6 main job: the demo validates, freezes, verifies and launches, producing
    a CSV and a JSON output."""
    env = {**os.environ, "DEMO_HOME": str(tmp_path / "demo")}
    result = subprocess.run(
        [str(ROOT / "scripts" / "demo.sh")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr + result.stdout
    out = tmp_path / "demo" / "out"
    assert (out / "digest.csv").read_text().startswith("name,unit,count")
    assert json.loads((out / "filed_issue.json").read_text())["created"] is True
    assert "completed" in result.stdout and "audit:" in result.stdout


def test_llm_example_through_a_local_openai_compatible_server(tmp_path: Path) -> None:
    """Issue 6: the llm-seam example runs against an OpenAI-compatible base URL (a
    loopback fake server), and --replay re-executes it without calling the model."""
    from tests.fakes import FakeLLMServer, Turn

    example = ROOT / "examples" / "flightplans"
    env = {
        **os.environ,
        "LOCAL_TRACKER_DB": str(tmp_path / "tracker.sqlite3"),
        "FLIGHTDECK_SECRET_TRACKER": "token",
    }
    args = [
        "launch",
        str(example / "metrics-digest-llm" / "SKILL.md"),
        "--unsigned",
        "--workspace",
        str(example / "metrics-digest"),
        "--approve",
        "file_issue",
        "--llm-provider",
        "openai",
        "--llm-model",
        "local-model",
        "--format",
        "json",
    ]
    with FakeLLMServer([Turn(text="- all metrics nominal")]) as server:
        first = _fd(
            *args,
            "--llm-base-url",
            server.base_url + "/v1",
            "--out-dir",
            str(tmp_path / "one"),
            env=env,
        )
        assert first.returncode == 0, first.stderr + first.stdout
        prompt = json.dumps(server.requests[0])
        assert "api.latency_p95" in prompt and server.requests[0]["model"] == "local-model"
        run_id = json.loads(first.stdout)["run_id"]
        again = _fd(
            *args,
            "--llm-base-url",
            server.base_url + "/v1",
            "--replay",
            run_id,
            "--out-dir",
            str(tmp_path / "two"),
            env=env,
        )
        assert again.returncode == 0, again.stderr + again.stdout
        assert len(server.requests) == 1  # replay reused the recorded seam output
    assert (tmp_path / "one" / "digest.csv").read_text() == (
        tmp_path / "two" / "digest.csv"
    ).read_text()


def test_llm_example_without_provider_says_how(tmp_path: Path) -> None:
    example = ROOT / "examples" / "flightplans"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLIGHTDECK_LLM")}
    result = _fd(
        "launch",
        str(example / "metrics-digest-llm" / "SKILL.md"),
        "--unsigned",
        "--workspace",
        str(example / "metrics-digest"),
        env=env,
    )
    assert result.returncode == 1
    assert "llm.not_configured" in result.stderr and "--llm-provider" in result.stderr


LEAK_DRIVER = """---
name: Leaky
id: leaky
description: A driver whose package echoes its token.
version: 1.0.0
kind: sdk
package: leakypkg
package_manager: local
import_style: python
install:
  - { method: vendored, path: ../../packages/leakypkg }
auth:
  state: { env: ["LEAKY_TOKEN"] }
network:
  egress: []
implements:
  - tool: ../../.tools/echo/TOOL.md
    version: "^1.0.0"
    metadata:
      sdk:
        function_ref: "echo"
        args_template: { text: "${input.text}", token: "${secrets.LEAKY_TOKEN}" }
---
"""
LEAK_PACKAGE = """
import os

def echo(text, token):
    if os.environ.get("LEAKY_FAIL"):
        raise RuntimeError("upstream rejected token " + token)
    return {"said": text, "token": token, "note": "auth " + token}
"""


def test_credential_canary_through_a_driver_process(tmp_path: Path) -> None:
    """Issue 6: credentials bound from the secret store are handed to the driver and never
    written to logs, audit, outputs or errors (canary, end to end through the CLI)."""
    canary = "CANARY-7d1e5b0c-do-not-leak"
    ws = tmp_path / "ws"
    (ws / ".tools" / "echo").mkdir(parents=True)
    (ws / ".tools" / "echo" / "TOOL.md").write_text(TOOL.format(name="echo", id="echo"))
    (ws / ".drivers" / "leaky").mkdir(parents=True)
    (ws / ".drivers" / "leaky" / "DRIVER.md").write_text(LEAK_DRIVER)
    (ws / "packages" / "leakypkg").mkdir(parents=True)
    (ws / "packages" / "leakypkg" / "__init__.py").write_text(LEAK_PACKAGE)
    api_key = {"kind": "api-key", "placement": "header", "identityLabel": "ops"}
    plan = write_plan(
        ws,
        inputs=[
            {"name": "text", "type": "string", "resolution": {"rule": "literal", "default": "hi"}}
        ],
        actions={"aileron:leaky.echo": contract(credential=api_key)},
        outputs=[
            {
                "name": "echo.json",
                "mimeType": "application/json",
                "encoding": "utf-8",
                "publish": {"target": "file", "path": "echo.json"},
            }
        ],
        steps=[
            {
                "id": "say",
                "kind": "action-call",
                "actionRef": "aileron:leaky.echo",
                "args": {"text": "inputs.text"},
                "outputs": ["reply"],
                "materializesOutput": "echo.json",
            }
        ],
    )
    env = {**os.environ, "FLIGHTDECK_SECRET_LEAKY_OPS": canary}
    args = ["launch", str(plan), "--unsigned", "--workspace", str(ws)]
    ok = _fd(*args, "--out-dir", str(tmp_path / "out"), env=env)
    assert ok.returncode == 0, ok.stderr
    echoed = json.loads((tmp_path / "out" / "echo.json").read_text())
    assert echoed["token"] == "[REDACTED]"  # the driver got it; it was scrubbed on the way out
    failed = _fd(*args, "--format", "json", env={**env, "LEAKY_FAIL": "1"})
    assert failed.returncode == 1 and json.loads(failed.stdout)["error"]["step"] == "say"
    run_id = json.loads(failed.stdout)["run_id"]
    shown = _fd("runs", "show", run_id, "--format", "json")
    home = Path(os.environ["FLIGHTDECK_HOME"])
    blobs = [p.read_bytes() for p in [*home.rglob("*"), *tmp_path.rglob("*")] if p.is_file()]
    for text in (ok.stdout, ok.stderr, failed.stdout, failed.stderr, shown.stdout):
        assert canary not in text
    assert all(canary.encode() not in blob for blob in blobs)


def test_ctrl_c_leaves_a_resumable_interrupted_run(tmp_path: Path) -> None:
    ws, plan = _workspace(tmp_path)
    # The SIGINT lands while `wait` sleeps in a worker thread for far longer than
    # the bound below: launch must exit without waiting for that call to return.
    env = _env(ws, WAIT_SECONDS="600")
    args = ["launch", str(plan), "--unsigned", "--workspace", str(ws), "--approve", "all"]
    process = subprocess.Popen(
        [FD, *args, "--format", "json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (ws / "waiting").exists():
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    run_id = _run_id()
    assert f"--resume {run_id}" in stderr
    # JSON says what the exit status says.
    assert json.loads(stdout) == {"ok": False, "run_id": run_id, "status": "interrupted"}
    shown = json.loads(_fd("runs", "show", run_id, "--format", "json").stdout)
    assert shown["status"] == "interrupted"
    resumed = _fd("launch", "--resume", run_id, "--workspace", str(ws), env=_env(ws))
    assert resumed.returncode == 0, resumed.stderr
    assert (ws / "ledger.txt").read_text() == "entry\n"


WORKER = """
import asyncio, json, sys
from pathlib import Path
from flightdeck.launch import StepTask, configured_runtime, execute_step
task = StepTask.from_dict(json.load(sys.stdin))
services = configured_runtime(Path(task.settings.workspace)).services
print(json.dumps(asyncio.run(execute_step(task, services)).to_dict()))
"""


def test_steps_run_in_another_process_from_plain_data(tmp_path: Path) -> None:
    """Issue 6: step execution keeps no process-local state: a task serialized to JSON
    runs in a fresh worker process that instantiates its own drivers."""
    import asyncio

    from flightdeck.audit import MemoryAuditSink
    from flightdeck.launch import (
        Approvals,
        Journal,
        LaunchOptions,
        StepOutcome,
        StepSettings,
        StepTask,
        configured_runtime,
        launch,
    )

    ws, plan = _workspace(tmp_path)
    shipped: list[str] = []

    class ProcessExecutor:
        async def submit(self, task: StepTask) -> StepOutcome:
            shipped.append(task.step_id)
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                WORKER,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=_env(ws),
            )
            out, _ = await process.communicate(json.dumps(task.to_dict()).encode())
            return StepOutcome.from_dict(json.loads(out))

    runtime = configured_runtime(ws)
    runtime.executor = ProcessExecutor()
    runtime.journal = Journal(tmp_path / "runs.sqlite3")
    runtime.audit = MemoryAuditSink()
    options = LaunchOptions(
        unsigned=True,
        out_dir=tmp_path / "out",
        approvals=Approvals.build(["all"]),
        settings=StepSettings(workspace=str(ws)),
    )
    result = asyncio.run(launch(plan, options, runtime))
    assert result.status == "completed", result.error
    assert shipped == ["write", "wait"]
    assert (ws / "ledger.txt").read_text() == "entry\n"
    assert [r.kind for r in runtime.audit.records()].count("launch.action_call") == 2
