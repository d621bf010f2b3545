"""define_tool / load_tool (AIP-14) and the inspect report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import flightdeck.tools as ft
from flightdeck.actions import ActionResolver
from flightdeck.io import IOHandle
from flightdeck.tools import (
    ToolDefinitionError,
    define_tool,
    defineTool,
    inspect_manifest,
    load_tool,
)

ROOT = Path(__file__).resolve().parents[1]
STANDARD = ROOT / "data" / "corpus" / "libraries" / "standard"
VALID_TOOLS = sorted((ROOT / "data" / "corpus" / "valid" / "tool").glob("*/TOOL.md"))
STD = "@agentik/actions-standard"

BASE: dict[str, Any] = {
    "name": "Git push",
    "id": "git.push",
    "description": "Push commits.",
    "version": "1.0.0",
    "inputs": {"type": "object"},
    "outputs": {"type": "object"},
}


def test_public_surface() -> None:
    assert ft.__all__ == sorted(ft.__all__, key=lambda s: (not s.isupper(), s))
    assert defineTool is define_tool


def test_orphan_tool_has_its_own_view_with_defaults() -> None:
    tool = define_tool({**BASE, "mutates": ["workspace:/notes/*"], "approval": "on-mutate"})
    assert tool.orphan and isinstance(tool.io, IOHandle)
    assert (tool.mutates, tool.risk_level, tool.approval) == (
        ("workspace:/notes/*",),
        0,
        "on-mutate",
    )
    assert tool.view.origins["risk_level"] == "default"


def test_tool_inherits_and_narrows_its_action() -> None:
    tool = define_tool(
        {**BASE, "implements": f"{STD}/storage-push", "approval": "always"}, libraries=[STANDARD]
    )
    assert tool.action is not None and tool.action.id == "storage:push"
    assert tool.mutates == ("storage:*", "network:*")
    assert (tool.risk_level, tool.approval) == (2, "always")
    assert tool.view.origins["approval"] == "implementor"
    assert tool.view.origins["mutates"] == "action"


def test_tool_that_widens_is_refused_with_every_violation() -> None:
    with pytest.raises(ToolDefinitionError) as info:
        define_tool(
            {**BASE, "implements": f"{STD}/storage-push", "risk_level": 0, "mutates": []},
            libraries=[STANDARD],
        )
    assert sorted(info.value.codes) == ["drops_mutates", "drops_mutates", "lowers_risk_level"]


def test_tool_identity_and_io_problems_are_all_reported() -> None:
    with pytest.raises(ToolDefinitionError) as info:
        define_tool(
            {
                **BASE,
                "id": "Git Push",
                "version": "one",
                "approval": "later",
                "runner": {},
                "inputs": {"type": "object", "additionalProperties": False},
                "inputsFiles": {"src": {"path": "a.txt"}},
            }
        )
    assert sorted((d.code, d.pointer) for d in info.value.diagnostics) == [
        ("io.fs_root_not_admitted", "/inputs"),
        ("tool.invalid_id", "/id"),
        ("tool.invalid_version", "/version"),
        ("tool.removed_field", "/runner"),
        ("tool.unknown_approval_class", "/approval"),
    ]


def test_unresolvable_implements_is_reported_at_its_pointer() -> None:
    with pytest.raises(ToolDefinitionError) as info:
        define_tool({**BASE, "implements": "@nobody/none/x"})
    assert [(d.code, d.pointer) for d in info.value.diagnostics] == [
        ("action_ref_unresolvable", "/implements")
    ]


def test_inline_implements_needs_no_library() -> None:
    tool = define_tool(
        {**BASE, "implements": {"inline": {"id": "my.verb", "description": "x", "risk_level": 1}}}
    )
    assert tool.risk_level == 1 and tool.view.action_id == "my.verb"


@pytest.mark.parametrize("path", VALID_TOOLS, ids=[p.parent.name for p in VALID_TOOLS])
def test_valid_corpus_tools_load(path: Path) -> None:
    tool = load_tool(path)
    assert tool.source == path.resolve() and tool.id


def test_load_tool_locates_problems(tmp_path: Path) -> None:
    path = tmp_path / "TOOL.md"
    lines = [f"{k}: {v}" for k, v in BASE.items() if k not in ("inputs", "outputs")]
    body = "\n".join(lines) + "\ninputs: {type: object}\noutputs: {type: object}\n"
    path.write_text(f'---\n{body}implements: "@nobody/none/x"\n---\n')
    with pytest.raises(ToolDefinitionError) as info:
        load_tool(tmp_path, resolver=ActionResolver())
    d = info.value.diagnostics[0]
    assert (d.code, d.file, d.line) == ("action_ref_unresolvable", str(path), 8)


def test_inspect_reports_origins_for_tools_and_actions(tmp_path: Path) -> None:
    path = tmp_path / "TOOL.md"
    path.write_text(
        "---\nname: P\nid: p.push\ndescription: d\nversion: 1.0.0\ninputs: {type: object}\n"
        f'outputs: {{type: object}}\nimplements: "{STD}/storage-commit"\nrisk_level: 2\n---\n'
    )
    report = inspect_manifest(path, libraries=[STANDARD])
    data = report.to_dict()
    assert report.ok and data["kind"] == "tool"
    assert data["implements"]["id"] == "storage:commit"
    assert data["view"]["risk_level"] == {"value": 2, "from": "implementor"}
    assert data["view"]["mutates"] == {"value": ["storage:*"], "from": "action"}
    action = inspect_manifest(STANDARD / ".actions" / "secrets-reveal").to_dict()
    assert action["view"]["approval"] == {"value": "on-mutate", "from": "declared"}
    assert action["view"]["requires"]["from"] == "declared"


def test_inspect_of_something_else_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# hi\n")
    report = inspect_manifest(tmp_path / "notes.md")
    assert not report.ok and report.diagnostics[0].code == "inspect.not_a_tool_or_action"
