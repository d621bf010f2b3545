"""Each command imports only what it uses (issue 14).

The command runs in a fresh interpreter through `flightdeck.cli.main`; the
test then lists the modules it must not have imported. A module in a list
here is one the command has no use for on that path: importing it only
costs start-up time (httpx and rich alone are ~100 ms).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ACTION = EXAMPLES / "workspace" / ".actions" / "notes-append" / "ACTION.md"
TOOL = EXAMPLES / "workspace" / ".tools" / "notes-append" / "TOOL.md"
PLAN = EXAMPLES / "flightplans" / "metrics-digest" / "SKILL.md"

_PROBE = """
import json, sys
from flightdeck.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""

# Never needed by a command that only reads manifests or prints.
NETWORK_AND_UI = [
    "httpx",
    "rich",
    "anthropic",
    "openai",
    "mcp",
    "pydantic",
    "jinja2",
    "starlette",
    "uvicorn",
    "flightdeck.ui",
    "acp",  # the Agent Client Protocol library: `agent --acp` only
    "flightdeck.agent.acp",
]
RUNTIME = [
    "asyncio",
    "cryptography",
    "jsonpath_rfc9535",
    "flightdeck.flightplan._freeze",
    "flightdeck.flightplan.registry._images",
    "flightdeck.flightplan.signing._signing",
    "flightdeck.drivers._binding",
    "flightdeck.drivers._seam",
    "flightdeck.io._host",
    "flightdeck.launch._launch",
]

CASES: list[tuple[str, list[str], list[str]]] = [
    ("version", ["--version"], ["click", "typing", "flightdeck.documents", "yaml"]),
    (
        "validate-action",
        ["validate", str(ACTION)],
        [
            *NETWORK_AND_UI,
            *RUNTIME,
            "flightdeck.drivers._manifest",
            "flightdeck.actions._check",
            # A valid document needs jsonschema-rs only; the Python validator explains failures.
            "jsonschema",
            "referencing",
            "regress",
            # The workspace and its flightdeck.toml matter to TOOL/DRIVER checks only.
            "flightdeck.config",
            "tomllib",
        ],
    ),
    ("validate-tool", ["validate", str(TOOL)], [*NETWORK_AND_UI, *RUNTIME]),
    (
        "validate-plan",
        ["validate", str(PLAN)],
        [*NETWORK_AND_UI, *RUNTIME, "flightdeck.drivers._manifest"],
    ),
    (
        "runs-list",
        ["runs", "list"],
        [*NETWORK_AND_UI, *RUNTIME, "jsonschema", "yaml", "flightdeck.documents"],
    ),
    (
        "schema",
        ["schema", "action"],
        [*NETWORK_AND_UI, *RUNTIME, "flightdeck.actions._check", "flightdeck.drivers._manifest"],
    ),
    ("lint", ["lint", str(PLAN)], [*NETWORK_AND_UI, *RUNTIME]),
    (
        "images-list",
        ["images", "list"],
        [*NETWORK_AND_UI, *RUNTIME, "flightdeck.launch.image._pull", "yaml"],
    ),
    *[
        (name, args, [*NETWORK_AND_UI, *RUNTIME, "jsonschema", "yaml", "flightdeck.documents"])
        for name, args in [
            ("config-show", ["config", "show"]),
            ("config-path", ["config", "path", "--format", "json"]),
            ("completion", ["completion", "bash"]),
            ("audit-list", ["audit", "list", "--format", "json"]),
            # The web server's libraries load when it starts, not for its help.
            ("ui-help", ["ui", "--help"]),
        ]
    ],
    (
        "lock-check",
        ["lock", "check", "--workspace", str(EXAMPLES / "workspace")],
        [*NETWORK_AND_UI, *RUNTIME, "flightdeck.flightplan", "flightdeck.drivers._manifest"],
    ),
]


def _imported(args: list[str], home: Path) -> set[str]:
    env = {**os.environ, "FLIGHTDECK_HOME": str(home)}
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    modules: list[str] = json.loads(proc.stderr.strip().splitlines()[-1])
    return set(modules)


@pytest.mark.parametrize(("args", "forbidden"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_command_imports_only_what_it_uses(
    args: list[str], forbidden: list[str], tmp_path: Path
) -> None:
    imported = _imported(args, tmp_path)
    assert "flightdeck.cli" in imported  # the probe really ran the command
    assert sorted(set(forbidden) & imported) == []


def test_probe_sees_what_a_command_does_import(tmp_path: Path) -> None:
    """The probe can fail: validating a driver does need the driver checks."""
    driver = EXAMPLES / "drivers" / ".drivers" / "textstats-local" / "DRIVER.md"
    assert "flightdeck.drivers._manifest" in _imported(["validate", str(driver)], tmp_path)


def test_a_local_launch_never_imports_temporal(tmp_path: Path) -> None:
    """Issue 20: temporalio is imported only on the Temporal path."""
    plan = tmp_path / "SKILL.md"
    plan.write_text(
        "---\nname: local-only\ndescription: One transform.\naileron:\n"
        "  schemaVersion: aileron.flightplan.v1\n  outputs: []\n  steps:\n"
        "    - {id: a, kind: transform, transform: json, bindings: {v: inputs.x}, outputs: [o]}\n"
        "  inputs:\n    - {name: x, type: string, resolution: {rule: literal, default: hi}}\n"
        "---\n",
        "utf-8",
    )
    launched = _imported(["launch", str(plan), "--unsigned", "--out-dir", str(tmp_path)], tmp_path)
    assert "flightdeck.launch._launch" in launched  # it did launch
    assert (
        sorted(m for m in launched if m.startswith(("temporalio", "flightdeck.launch.temporal")))
        == []
    )
    worker = _imported(["worker", "--help"], tmp_path)
    assert "temporalio" not in worker


# `agent --json-stream`: the modules imported when `ready` is written (the
# provider SDK is imported after it, in the background: flightdeck.llm.warm).
# A plain start writes it before the engine (agent/stream/_early.py); any other
# through the engine's writer.
_READY_PROBE = """
import json, os, sys
from flightdeck.agent.stream import _early
def report():
    print(json.dumps(sorted(sys.modules)), file=sys.stderr, flush=True)
    os._exit(0)
write_line = _early.write_line
def early_write(out, line):
    write_line(out, line)
    report()
_early.write_line = early_write
if sys.argv[1:] == ["engine"]:  # imports the engine's writer (and msgspec) here
    from flightdeck.agent.stream import _transport
    flush = _transport.LineWriter.flush
    def first_flush(self):
        flush(self)
        report()
    _transport.LineWriter.flush = first_flush
from flightdeck.cli import main
main(["agent", "--json-stream"])
"""


def _imported_at_ready(workspace: Path, home: Path, *args: str) -> set[str]:
    env = {**os.environ, "FLIGHTDECK_HOME": str(home), "ANTHROPIC_API_KEY": "test"}
    proc = subprocess.run(
        [sys.executable, "-c", _READY_PROBE, *args],
        input="",
        capture_output=True,
        text=True,
        cwd=workspace,
        env=env,
        timeout=60,
        check=False,
    )
    assert '"type":"ready"' in proc.stdout
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))


# Not needed by the engine's start either (the protocol models are msgspec
# Structs, so not pydantic: the SDKs, MCP and ACP use it); bubblewrap's probe needs
# `guard.bwrap_path` only; the audit hook, policies and egress proxy load when
# a layer or a sandbox needs them.
_NOT_AT_READY = [
    *NETWORK_AND_UI,
    "click",  # the usual command lines are read without it (cli/chat/_agent_stream.py)
    "flightdeck.guard._hook",
    "flightdeck.guard._policy",
    "flightdeck.guard._egress",
    "flightdeck.guard._scope",
]


@pytest.mark.parametrize(
    "project",
    [None, '[agent]\nmode = "yolo"\n[providers.anthropic]\nbase_url = "http://x"\n'],
    ids=["no-file", "untrusted-loosening"],
)
def test_agent_json_stream_imports_before_ready(tmp_path: Path, project: str | None) -> None:
    # a plain start: the standard library, msgspec and the setup steps only.
    # The setup's classes are msgspec Structs, not dataclasses (issue 14):
    # importing msgspec costs less than `exec`-ing each dataclass's methods.
    # An untrusted workspace that loosens settings is still plain: its keys
    # are screened and trust decided before `ready` with the same modules.
    if project is not None:
        (tmp_path / "flightdeck.toml").write_text(project)
    imported = _imported_at_ready(tmp_path, tmp_path)
    assert "flightdeck.agent.engine._setup" in imported  # the probe saw the session start
    forbidden = [
        *_NOT_AT_READY,
        "dataclasses",
        "asyncio",
        "flightdeck.agent.engine._session",
        "flightdeck.agent.protocol._models",
        "flightdeck.agent.tools._bash",
    ]
    assert sorted(set(forbidden) & imported) == []


def test_agent_json_stream_imports_before_ready_through_the_engine(tmp_path: Path) -> None:
    # AionUi's compat file: its problems follow `ready`, so the engine writes it
    (tmp_path / ".aionrs.toml").write_text("")
    imported = _imported_at_ready(tmp_path, tmp_path, "engine")
    assert "flightdeck.agent.engine._session" in imported  # the probe saw the session start
    assert sorted(set(_NOT_AT_READY) & imported) == []
