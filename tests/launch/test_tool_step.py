"""Tool steps: argv without a shell, in the bubblewrap sandbox."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from flightdeck.launch import StepSettings, bwrap_path

from .conftest import Harness, write_plan

needs_bwrap = pytest.mark.skipif(
    bwrap_path() is None or shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") is None,
    reason="needs bubblewrap and a system python3: apt-get install -y bubblewrap python3",
)

SCRIPT = """
import json, os, pathlib, socket, sys
data = json.load(open('/flightdeck/in/input.json'))
out = pathlib.Path('/flightdeck/out')
(out / 'report.txt').write_text('hello ' + data['who'] + '\\n')
(out / 'sub').mkdir()
(out / 'sub' / 'n.json').write_text(json.dumps({'n': len(data['who'])}))
os.symlink('/etc/passwd', out / 'leak')
try:
    socket.create_connection(('1.1.1.1', 53), timeout=2)
    net = 'yes'
except OSError:
    net = 'no'
(out / 'net.txt').write_text(net)
"""


def _tool_plan(tmp_path: Path, command: list[str], **step: Any) -> Path:
    return write_plan(
        tmp_path,
        environment={"tools": ["python@3.x"]},
        inputs=[
            {
                "name": "who",
                "type": "string",
                "resolution": {"rule": "literal", "default": "world; rm -rf /"},
            }
        ],
        outputs=[
            {
                "name": "report.txt",
                "mimeType": "text/plain",
                "encoding": "utf-8",
                "publish": {"target": "file", "path": "report.txt"},
            }
        ],
        steps=[
            {
                "id": "run",
                "kind": "tool",
                "command": command,
                "bindings": {"who": "inputs.who"},
                "mount": {"path": "/flightdeck/in"},
                "collect": {"path": "/flightdeck/out"},
                "outputs": ["files"],
                "materializesOutput": "report.txt",
                **step,
            }
        ],
    )


@needs_bwrap
def test_tool_runs_in_sandbox_and_collects_regular_files(harness: Harness, tmp_path: Path) -> None:
    """Issue 6: bindings written to mount.path/input.json; regular files under
    collect.path (no symlinks) become the output; no network without stepTrust."""
    plan = _tool_plan(tmp_path, ["python3", "-c", SCRIPT])
    result = harness.run(plan)
    assert result.status == "completed", result.error
    assert (tmp_path / "out" / "report.txt").read_text() == "hello world; rm -rf /\n"
    files = harness.journal.steps(result.run_id)[0].result["outputs"]["files"]
    paths = {entry["path"]: entry["content"] for entry in files}
    assert set(paths) == {"net.txt", "report.txt", "sub/n.json"}  # the symlink is not collected
    assert paths["net.txt"] == "no"
    assert json.loads(paths["sub/n.json"]) == {"n": 15}
    record = harness.records("launch.tool_network")[0]
    assert record["sandbox"] == "bubblewrap" and record["network"] == "none"
    assert record["skipped"] == ["leak"]


@needs_bwrap
def test_tool_sandbox_has_read_only_system(harness: Harness, tmp_path: Path) -> None:
    plan = _tool_plan(tmp_path, ["python3", "-c", "open('/usr/evil', 'w')"])
    result = harness.run(plan)
    assert result.status == "failed" and result.error is not None
    assert result.error.code == "tool.exit"


@needs_bwrap
def test_tool_argv_is_not_a_shell(harness: Harness, tmp_path: Path) -> None:
    """Seed 003: command is an argv array: no shell interpretation, no splitting, no expansion."""
    code = (
        "import sys, pathlib;"
        " pathlib.Path('/flightdeck/out/report.txt').write_text(repr(sys.argv[1:]))"
    )
    plan = _tool_plan(tmp_path, ["python3", "-c", code, "$HOME", "a b", ";ls", "*"])
    result = harness.run(plan)
    assert result.status == "completed", result.error
    assert (tmp_path / "out" / "report.txt").read_text() == "['$HOME', 'a b', ';ls', '*']"


def test_no_sandbox_refuses_unless_flag(
    harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 6: when no sandbox is available a tool step refuses unless --no-sandbox,
    which is audited."""
    monkeypatch.setattr("flightdeck.launch.sandbox._tool_step.bwrap_path", lambda: None)
    script = (
        "import json, os; d = json.load(open(os.environ['FLIGHTDECK_MOUNT'] + '/input.json'));"
        "open('/flightdeck/out/report.txt', 'w').write(d['who'])"
    )
    plan = _tool_plan(tmp_path, ["python3", "-c", script])
    refused = harness.run(plan)
    assert refused.error is not None and refused.error.code == "tool.no_sandbox"
    allowed = harness.run(plan, settings=StepSettings(no_sandbox=True))
    assert allowed.status == "completed", allowed.error
    assert (tmp_path / "out" / "report.txt").read_text() == "world; rm -rf /"
    assert harness.records("launch.run")[-1]["no_sandbox"] is True
    assert harness.records("launch.tool_network")[-1]["sandbox"] == "none"


def test_tool_nonzero_exit_fails_the_step(harness: Harness, tmp_path: Path) -> None:
    plan = _tool_plan(tmp_path, ["python3", "-c", "import sys; sys.exit('bad things')"])
    result = harness.run(plan, settings=StepSettings(no_sandbox=True))
    assert result.error is not None and result.error.code == "tool.exit"
    assert "bad things" in result.error.message and result.error.step == "run"


NET_SCRIPT = """
import json, os, socket, urllib.request
data = json.load(open('/flightdeck/in/input.json'))
port = data['port']
out = {}
out['allowed'] = urllib.request.urlopen(f'http://127.0.0.1:{port}/', timeout=10).read().decode()
if data['deny']:
    try:
        urllib.request.urlopen('http://denied.example.invalid/', timeout=10)
    except Exception as exc:
        out['denied'] = type(exc).__name__
try:
    socket.create_connection(('127.0.0.1', port), timeout=2)
    out['direct'] = 'reached'
except OSError:
    out['direct'] = 'blocked'
open('/flightdeck/out/report.txt', 'w').write(json.dumps(out))
"""


@needs_bwrap
def test_tool_network_only_sealed_hosts_through_proxy(harness: Harness, tmp_path: Path) -> None:
    """Issue 6: no network unless the sealed stepTrust hosts allow, and then only those
    hosts through a host-side egress proxy; the reach is audited."""
    import http.server
    import threading

    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"hello from the host")

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        plan = write_plan(
            tmp_path,
            environment={"tools": ["python@3.x"]},
            inputs=[
                {
                    "name": "port",
                    "type": "number",
                    "resolution": {"rule": "literal", "default": server.server_address[1]},
                },
                {"name": "deny", "type": "boolean", "resolution": {"rule": "literal"}},
            ],
            outputs=[
                {
                    "name": "report.txt",
                    "mimeType": "text/plain",
                    "encoding": "utf-8",
                    "publish": {"target": "file", "path": "report.txt"},
                }
            ],
            steps=[
                {
                    "id": "net",
                    "kind": "tool",
                    "command": ["python3", "-c", NET_SCRIPT],
                    "bindings": {"port": "inputs.port", "deny": "inputs.deny"},
                    "mount": {"path": "/flightdeck/in"},
                    "collect": {"path": "/flightdeck/out"},
                    "trustContract": {**_TOOL_CONTRACT, "hosts": [f"127.0.0.1:{port}"]},
                    "outputs": ["files"],
                    "materializesOutput": "report.txt",
                }
            ],
        )
        allowed = harness.run(plan, inputs={"deny": "false"})
        denied = harness.run(plan, inputs={"deny": "true"})
    finally:
        server.shutdown()
    assert allowed.status == "completed", allowed.error
    report = json.loads((tmp_path / "out" / "report.txt").read_text())
    assert report == {"allowed": "hello from the host", "direct": "blocked"}
    first = harness.records("launch.tool_network")[0]
    assert first["contacted"] == [f"127.0.0.1:{port}"] and first["denied"] == []
    assert first["allowed_hosts"] == [f"127.0.0.1:{port}"]
    assert denied.status == "failed" and denied.error is not None
    assert denied.error.code == "egress_denied"
    assert "denied.example.invalid" in denied.error.message
    assert harness.records("launch.tool_network")[1]["denied"] == ["denied.example.invalid:80"]


_TOOL_CONTRACT: dict[str, Any] = {
    "credential": {"kind": "none"},
    "effect": "read",
    "idempotency": {"safeToRetry": True},
    "audit": {"fields": ["network-target"]},
}


def test_locked_tool_versions_are_checked() -> None:
    """Issue 6: the environment's tools must be present at the versions the lock recorded."""
    import asyncio
    import subprocess

    from flightdeck.launch import LaunchError
    from flightdeck.launch.sandbox._toolcheck import check_tool_version

    found = subprocess.run(
        ["/usr/bin/python3", "--version"], capture_output=True, text=True, check=True
    ).stdout.split()[1]
    checked = asyncio.run(check_tool_version("python3", {"python": found}))
    assert checked == {"tool": "python", "version": found}
    assert asyncio.run(check_tool_version("python3", {"jq": "1.7"})) is None  # not pinned
    with pytest.raises(LaunchError) as caught:
        asyncio.run(check_tool_version("python3", {"python": "0.0.1"}))
    assert caught.value.code == "tool.version_mismatch" and "0.0.1" in caught.value.message
    with pytest.raises(LaunchError) as caught:
        asyncio.run(check_tool_version("terraform", {"terraform": "1.9.8"}))
    assert caught.value.code in ("tool.missing", "tool.version_mismatch")


@needs_bwrap
def test_a_host_tools_step_run_as_root_cannot_remount_or_write_opt(
    harness: Harness, tmp_path: Path
) -> None:
    """Issue 28: with every capability kept, a host-tools step remounted the
    host's /opt writable and wrote to it."""
    import os
    import uuid

    from tests.guard._attacks import assert_unprivileged, attack_script

    marker = f"/opt/flightdeck-escape-{uuid.uuid4().hex}"
    places = ["/", "/usr", "/opt", "/etc", "/flightdeck/in"]
    script = attack_script(remount=places, write=[marker, "/planted"], unmount=["/usr", "/opt"])
    shell = "import os, sys; os.execv('/bin/sh', ['sh', '-c', sys.argv[1]])"
    plan = _tool_plan(
        tmp_path, ["python3", "-c", shell, "exec > /flightdeck/out/report.txt\n" + script]
    )
    try:
        result = harness.run(plan)
        assert not os.path.exists(marker)
    finally:
        Path(marker).unlink(missing_ok=True)
    assert result.status == "completed", result.error
    report = (tmp_path / "out" / "report.txt").read_text()
    assert_unprivileged(report, expected_attempts=len(places) * 4 + 2 + 2 * 4)
