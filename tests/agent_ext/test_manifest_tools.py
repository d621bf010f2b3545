"""Manifest tools in memory: category and approval from the merged action
view, schemas, results, audit, and every bad path reported, not raised."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from flightdeck.agent import protocol as p
from flightdeck.agent.extensions._manifest_tools import (
    ManifestTool,
    discover_manifest_tools,
    object_schema,
)
from flightdeck.agent.tools import Workspace
from flightdeck.audit import MemoryAuditSink
from tests.agent._harness import Harness, Step
from tests.agent_ext._manifest_ws import APPEND_ACTION, manifest_workspace


def tools_of(ws: Path, **kw: Any) -> dict[str, ManifestTool]:
    found = discover_manifest_tools(ws, **kw)
    assert found.problems == []
    return {t.name: t for t in found.tools}


@pytest.mark.parametrize(
    ("changes", "category", "always_ask"),
    [
        ({}, "edit", True),  # approval always, risk 1, mutates
        ({"approval": "on-mutate"}, "edit", True),  # mutates non-empty
        ({"approval": "on-mutate", "mutates": [], "risk_level": 0}, "info", False),
        ({"approval": "auto", "risk_level": 0, "mutates": []}, "info", False),
        ({"approval": "auto"}, "edit", False),  # scoped write
        ({"approval": "auto", "risk_level": 2}, "exec", False),  # external side effect
        ({"approval": "auto", "risk_level": 3, "mutates": []}, "exec", False),
    ],
)
def test_category_and_approval_follow_the_merged_action_view(
    tmp_path: Path, changes: dict[str, Any], category: str, always_ask: bool
) -> None:
    ws = manifest_workspace(tmp_path, append_action={**APPEND_ACTION, **changes})
    tool = tools_of(ws)["notes_append"]
    assert tool.category == category and tool.always_ask is always_ask


def test_info_tool_schema_is_the_io_inputs(tmp_path: Path) -> None:
    tools = tools_of(manifest_workspace(tmp_path))
    assert tools["text_count"].category == "info" and not tools["text_count"].always_ask
    assert tools["text_count"].input_schema == {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    }
    assert object_schema(None) == {"type": "object", "properties": {}}
    assert object_schema({"properties": {"a": {}}}) == {"type": "object", "properties": {"a": {}}}


def test_calls_are_audited_and_driver_errors_are_tool_errors(tmp_path: Path) -> None:
    sink = MemoryAuditSink()
    tools = tools_of(manifest_workspace(tmp_path), audit=sink, run_id="run-1")

    async def go() -> None:
        ok = await tools["notes_append"].run({"line": "x"}, Workspace(tmp_path))
        assert ok.status == "success" and '"appended": "x"' in ok.output
        bad = await tools["notes_append"].run({"lines": 1}, Workspace(tmp_path))
        assert bad.status == "error" and bad.output.startswith("input_invalid: ")

    asyncio.run(go())
    records = sink.records(kind="agent.tool_call")
    assert [(r.fields["ok"], r.fields.get("code")) for r in records] == [
        (True, None),
        (False, "input_invalid"),
    ]
    assert all(r.run_id == "run-1" and r.fields["action"] == "notes:append" for r in records)
    assert len(sink.records(kind="driver.call")) == 2


def test_refused_driver_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    ws = manifest_workspace(tmp_path, driver_extra={"package_manager": "nonsense"})
    found = discover_manifest_tools(ws)
    assert found.tools == []
    assert len(found.problems) == 1 and found.problems[0].startswith("driver notes-sdk not loaded")


def test_name_taken_is_reported_and_skipped(tmp_path: Path) -> None:
    found = discover_manifest_tools(manifest_workspace(tmp_path), taken=["text_count"])
    assert [t.name for t in found.tools] == ["notes_append"]
    assert found.problems == ["tool text.count: its name text_count is already taken; skipped"]


def test_no_drivers_folder_means_no_tools(tmp_path: Path) -> None:
    assert discover_manifest_tools(tmp_path).tools == []


def test_always_ask_overrides_yolo_and_session_allow_list(tmp_path: Path) -> None:
    """In memory: `always_ask` forces a tool_request in yolo mode, and after a
    `scope: always` approval, on the next call too."""
    tools = tools_of(manifest_workspace(tmp_path / "ws"))
    step = Step(calls=[("a1", "notes_append", {"line": "x"})])
    again = Step(calls=[("a2", "notes_append", {"line": "y"})])

    async def go() -> None:
        h = Harness(tmp_path, [step, again, Step(text="ok")], mode="yolo")
        h.agent.tools["notes_append"] = tools["notes_append"]
        await h.send({"type": "message", "msg_id": "m1", "input": "go"})
        await h.until("tool_request")
        await h.send({"type": "tool_approve", "call_id": "a1", "scope": "always"})
        events = await h.until("tool_request")
        request = events[-1]
        assert isinstance(request, p.ToolRequestEvent) and request.call_id == "a2"
        await h.send({"type": "tool_approve", "call_id": "a2"})
        await h.until("stream_end")

    asyncio.run(go())
