"""One output convention: every `--format json` command prints snake_case keys.

The commands run as processes over a small store built here (a key, a
trusted publisher, the metrics-digest plan frozen, verified and launched),
and every key of every object in their output is checked recursively. The
only exception is the spec's closed set of audit-field names (kebab-case,
skill.schema.json `audit.fields`), which action-call audit records carry
under exactly the names the plan declared.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest

from flightdeck.cli._main import cli
from tests.cli._run import FLIGHTDECK, run
from tests.flightplan import _oci_server

ROOT = Path(__file__).resolve().parents[2]
PLAN = ROOT / "examples" / "flightplans" / "metrics-digest"
PUBLISHER = "github://flightdeck/examples"
SNAKE = re.compile(r"[a-z][a-z0-9_]*")
_SCHEMA = ROOT / "src" / "flightdeck" / "documents" / "schemas" / "skill.schema.json"


def _spec_audit_fields() -> set[str]:
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("title") == "audit":
                found.update(node["properties"]["fields"]["items"]["enum"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads(_SCHEMA.read_text("utf-8")))
    return found


SPEC_NAMES = _spec_audit_fields()


# Objects under these keys are maps keyed by a user's names (tool ids, step
# ids, input names, MCP server names), not field names: their keys are data.
# Objects keyed by ids or refs (data, not field names).
# A tool catalog's `versions` and a Feature's `options` are keyed by version
# strings and option ids.
ID_MAPS = {
    "tools",
    "steps",
    "inputs",
    "mcp_servers",
    "entries",
    "code_pins",
    "versions",
    "options",
}


def non_snake_keys(value: Any, where: str = "", keys_are_data: bool = False) -> list[str]:
    """Pointers of keys that are not snake_case, spec audit-field names aside."""
    bad: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if not keys_are_data and not SNAKE.fullmatch(key) and key not in SPEC_NAMES:
                bad.append(f"{where}/{key}")
            bad += non_snake_keys(item, f"{where}/{key}", key in ID_MAPS and not keys_are_data)
    elif isinstance(value, list):
        for n, item in enumerate(value):
            bad += non_snake_keys(item, f"{where}/{n}")
    return bad


def test_the_checker_finds_camel_case_keys() -> None:
    assert non_snake_keys({"run_id": 1, "x": [{"contentHash": 2}]}) == ["/x/0/contentHash"]
    assert non_snake_keys({"fields": {"connector-hash": "sha256:"}}) == []
    assert non_snake_keys({"tools": {"text.stats": {"functionRef": 1}}}) == [
        "/tools/text.stats/functionRef"
    ]


def _json_commands() -> set[str]:
    """Every command whose --format offers json, as 'group sub'."""
    found: set[str] = set()

    def walk(command: click.Command, path: str, ctx: click.Context) -> None:
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None
                walk(sub, f"{path} {name}".strip(), ctx)
            return
        for param in command.params:
            choice = param.type if isinstance(param.type, click.Choice) else None
            if param.name == "fmt" and choice is not None and "json" in choice.choices:
                found.add(path)

    walk(cli, "", click.Context(cli))
    return found


def _saved_session(root: Path) -> None:
    """A session with a tool call, as the agent saves one."""
    from flightdeck.agent import SessionStore
    from flightdeck.llm import Message, TextBlock, ToolResultBlock, ToolUseBlock

    session = SessionStore(root).create(title="casing")
    session.append_context("project notes")
    session.append_messages(
        [
            Message("user", [TextBlock("count words")]),
            Message("assistant", [ToolUseBlock("t1", "read_file", {"path": "a.txt"})]),
            Message("user", [ToolResultBlock("t1", [TextBlock("to be")])]),
        ]
    )


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("casing")
    stack = contextlib.ExitStack()
    registry = stack.enter_context(_oci_server.serving())  # publish, install
    env = {
        "FLIGHTDECK_HOME": str(tmp / "home"),
        "LOCAL_TRACKER_DB": str(tmp / "tracker.sqlite3"),
        "FLIGHTDECK_SECRET_TRACKER": "token",
    }
    _saved_session(tmp / "home" / "data" / "sessions")
    keys = tmp / "keys"
    # The example drivers without the OpenAI ones: their SDK import is slow.
    shutil.copytree(ROOT / "examples" / "drivers", tmp / "drivers")
    for name in ("openai-sdk", "openai-stream-sdk"):
        shutil.rmtree(tmp / "drivers" / ".drivers" / name)
    drivers = str(tmp / "drivers")
    workspace = tmp / "workspace"
    shutil.copytree(ROOT / "examples" / "workspace", workspace)
    # A second key, for `sign` (co-signing) and then `keyring revoke`.
    subprocess.run(
        [str(FLIGHTDECK), "keys", "generate", "--out", str(keys), "--name", "second"],
        env={**os.environ, **env},
        capture_output=True,
        check=True,
    )
    catalog = tmp / "tools.catalog.json"
    feature = "127.0.0.1:9/features/hello:1@sha256:" + "a" * 64
    version = {"feature": feature, "options": {"install-tools": "yes"}}
    catalog.write_text(
        json.dumps(
            {
                "catalogVersion": 1,
                "runnerBase": "127.0.0.1:9/runner@sha256:" + "b" * 64,
                "tools": {"hello": {"programs": ["hello"], "versions": {"1.2.0": version}}},
            }
        )
    )
    steps: list[tuple[str, list[str]]] = [
        ("catalog list", ["catalog", "list", "--catalog", str(catalog)]),
        ("catalog show", ["catalog", "show", "hello", "--catalog", str(catalog)]),
        # Nothing listens on port 9: refused (compose.feature_unavailable), as JSON.
        (
            "catalog add",
            ["catalog", "add", "hi", "1.0.0", "127.0.0.1:9/f:1", "--catalog", str(catalog)],
        ),
        ("config path", ["config", "path"]),
        ("config show", ["config", "show"]),
        ("config trust", ["config", "trust", str(tmp)]),
        ("lock create", ["lock", "create", "--workspace", str(workspace)]),
        ("lock check", ["lock", "check", "--workspace", str(workspace)]),
        ("lock update", ["lock", "update", "--workspace", str(workspace)]),
        ("images list", ["images", "list"]),
        ("images prune", ["images", "prune"]),
        ("keys generate", ["keys", "generate", "--out", str(keys), "--name", "demo"]),
        ("keyring trust", ["keyring", "trust", PUBLISHER, "--key", str(keys / "demo.pub")]),
        ("keyring list", ["keyring", "list"]),
        ("validate", ["validate", str(PLAN)]),
        ("lint", ["lint", str(PLAN / "SKILL.md")]),
        ("graph", ["graph", str(PLAN / "SKILL.md")]),
        (
            "freeze",
            [
                "freeze",
                str(PLAN / "SKILL.md"),
                "--workspace",
                str(PLAN),
                "--signing-key",
                str(keys / "demo.key"),
                "--publisher",
                PUBLISHER,
                "--version",
                "1.0.0",
            ],
        ),
        ("verify", ["verify", "metrics-digest@1.0.0"]),
        ("publish", ["publish", "metrics-digest", "--registry", f"{registry.address}/x/plans"]),
        ("install", ["install", f"{registry.address}/x/plans"]),
        ("skills export", ["skills", "export", "metrics-digest@1.0.0", "-o", str(tmp / "x.tar")]),
        ("skills import", ["skills", "import", str(tmp / "x.tar")]),
        ("skills list", ["skills", "list"]),
        (
            "launch",
            [
                "launch",
                "metrics-digest@1.0.0",
                "--workspace",
                str(PLAN),
                "--approve",
                "file_issue",
                "--verify-credentials",
                "--out-dir",
                str(tmp / "out"),
            ],
        ),
        ("runs list", ["runs", "list"]),
        ("runs show", ["runs", "show", "RUN"]),
        ("runs outputs", ["runs", "outputs", "RUN", "--out-dir", str(tmp / "fetched")]),
        # A local run: refused (runs.not_temporal), as JSON.
        ("runs approve", ["runs", "approve", "RUN", "file_issue"]),
        ("audit list", ["audit", "list"]),
        ("audit show", ["audit", "show", "RUN"]),
        ("sign", ["sign", "metrics-digest@1.0.0", "--signing-key", str(keys / "second.key")]),
        ("inspect", ["inspect", str(ROOT / "examples/workspace/.tools/notes-append/TOOL.md")]),
        ("drivers list", ["drivers", "list", "--workspace", drivers]),
        ("drivers show", ["drivers", "show", "textstats-local", "--workspace", drivers]),
        (
            "call",
            [
                "call",
                "text.stats",
                "--workspace",
                drivers,
                "--input",
                '{"text": "to be"}',
            ],
        ),
        ("sessions list", ["sessions", "list"]),
        ("sessions show", ["sessions", "show", "latest"]),
        ("agent", ["agent", "--list-tools", "--workspace", str(tmp)]),
        ("keyring revoke", ["keyring", "revoke", str(keys / "second.pub")]),
        ("keyring untrust", ["keyring", "untrust", PUBLISHER]),
    ]
    seen: dict[str, Any] = {}
    for name, args in steps:
        if name in ("runs show", "audit show", "runs approve", "runs outputs"):
            args = [*args[:2], seen["launch"]["run_id"], *args[3:]]
        done = run(*args, "--format", "json", env=env)
        assert done.stdout.strip(), f"{name}: no JSON output; stderr {done.stderr}"
        seen[name] = json.loads(done.stdout)
    yield seen
    stack.close()


def test_every_json_command_is_walked(outputs: dict[str, Any]) -> None:
    assert _json_commands() == set(outputs)


def test_reporting_commands_without_json_before_have_it() -> None:
    assert {"keys generate", "graph", "keyring trust"} <= _json_commands()


@pytest.mark.parametrize("name", sorted(_json_commands()))
def test_json_keys_are_snake_case(outputs: dict[str, Any], name: str) -> None:
    assert non_snake_keys(outputs[name]) == [], name


def test_the_walk_saw_a_real_run(outputs: dict[str, Any]) -> None:
    # An empty walk proves nothing: the launch completed and its audit is there.
    assert outputs["launch"]["status"] == "completed", outputs["launch"]
    kinds = {record["kind"] for record in outputs["runs show"]["audit"]}
    assert {"launch.run", "launch.action_call", "launch.output"} <= kinds
    assert outputs["graph"]["nodes"] and outputs["graph"]["edges"]
    failed = [
        name for name, out in outputs.items() if isinstance(out, dict) and out.get("ok") is False
    ]
    # An error object would hide the command's real keys. `runs approve`
    # needs a Temporal cluster to succeed: tests/launch/test_temporal_routing.py
    # checks its keys there.
    # `catalog add` needs a registry with a Feature: tests/launch/test_compose.py
    # checks its keys there.
    assert failed == ["catalog add", "runs approve"], failed


# Stores written by older versions (camelCase) are still read --------------


def test_old_camel_case_keyring_is_read(fd_home: Path) -> None:
    pem = run("keys", "generate", "--out", str(fd_home / "k"), "--format", "json")
    key_id = json.loads(pem.stdout)["key_id"]
    public = (fd_home / "k" / "flightdeck.pub").read_text("utf-8")
    old = {"publisher": "github://acme", "keyId": key_id, "publicKey": public, "addedAt": "t"}
    (fd_home / "data").mkdir(exist_ok=True)
    (fd_home / "data" / "keyring.json").write_text(json.dumps({"keys": [old]}), "utf-8")
    listed = json.loads(run("keyring", "list", "--format", "json").stdout)
    assert listed == [
        {
            "publisher": "github://acme",
            "key_id": key_id,
            "public_key": public,
            "added_at": "t",
            "revoked": None,
        }
    ]


def test_old_camel_case_trust_state_is_read(fd_home: Path) -> None:
    run("keys", "generate", "--out", str(fd_home / "k"))
    run("keyring", "trust", PUBLISHER, "--key", str(fd_home / "k" / "flightdeck.pub"))
    frozen = run(
        "freeze",
        str(PLAN / "SKILL.md"),
        "--workspace",
        str(PLAN),
        "--signing-key",
        str(fd_home / "k" / "flightdeck.key"),
        "--publisher",
        PUBLISHER,
        "--version",
        "1.0.0",
        "--format",
        "json",
    )
    content_hash = json.loads(frozen.stdout)["content_hash"]
    # Pinned by an older version: if contentHash were not read, the same label
    # with "other" content would be refused as a rollback.
    record = {"owner": PUBLISHER, "version": "1.0.0", "contentHash": content_hash}
    old = {"version": 1, "plans": {"metrics-digest": {**record, "pinnedAt": "t"}}}
    (fd_home / "data" / "trust.json").write_text(json.dumps(old), "utf-8")
    done = run("verify", "metrics-digest@1.0.0", "--format", "json")
    assert done.returncode == 0, done.stdout
    assert json.loads(done.stdout)["first_trust"] is False


def test_old_camel_case_journal_options_are_read(tmp_path: Path) -> None:
    from flightdeck.launch import Journal

    journal = Journal(tmp_path / "journal.sqlite3")
    journal.create_run(
        "run-old",
        plan_name="p",
        plan_path="p.md",
        content_hash=None,
        launch_time="2026-01-01T00:00:00Z",
        inputs={},
        options={"outDir": "/tmp/o", "replayOf": "run-a", "noSandbox": True, "unsigned": False},
    )
    row = journal.run("run-old")
    assert row is not None
    assert row.options == {
        "out_dir": "/tmp/o",
        "replay_of": "run-a",
        "no_sandbox": True,
        "unsigned": False,
    }
    with sqlite3.connect(tmp_path / "journal.sqlite3") as conn:  # stored as written
        (stored,) = conn.execute("SELECT options FROM runs").fetchone()
    assert "outDir" in stored
