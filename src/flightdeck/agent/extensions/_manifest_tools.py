"""The workspace's manifest tools as agent tools.

A TOOL.md contract is offered to the model when an SDK driver of the
workspace (`.drivers/*/DRIVER.md`, `kind: sdk`) implements it; the TOOL and
its ACTION are found by the drivers layer (`.tools/`, `.actions/`, and the
configured libraries for action refs). The model sees the tool's IO `inputs`
as its input schema; calls go through `flightdeck.drivers.call_tool`, which
validates input and output and writes a `driver.call` audit record, and the
agent adds an `agent.tool_call` record of its own.

Approval follows the merged action view (the action's floors with the tool's
narrowing), not the tool's own say:

- category: `info` for risk 0 with no `mutates`, `exec` for risk >= 2
  (external side effects), `edit` otherwise (scoped writes);
- `approval: always` (and `policy:<ref>`, whose strength is unknown here)
  asks on every call, even in `yolo` mode or after `scope: always`;
- `on-mutate` asks on every call when `mutates` is non-empty;
- `auto` follows the session's mode and allow-list by category.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flightdeck._json import json_copy
from flightdeck.agent.mcp._config import safe_name
from flightdeck.agent.tools import Category, ToolOutput, Workspace, truncate

if TYPE_CHECKING:
    from flightdeck.actions import MergedView
    from flightdeck.audit import AuditSink
    from flightdeck.drivers import Driver
    from flightdeck.tools import ToolHandle

log = logging.getLogger("flightdeck.agent")

RESERVED = frozenset({"Read", "Write", "Edit", "Bash", "Glob", "Grep", "Spawn"})


def category_for(view: MergedView) -> Category:
    if view.risk_level >= 2:
        return "exec"
    if view.risk_level == 0 and not view.mutates:
        return "info"
    return "edit"


def asks_always(view: MergedView) -> bool:
    """Whether the action demands a person's approval on every call."""
    approval = view.approval
    if approval == "always" or approval.startswith("policy:"):
        return True
    return approval == "on-mutate" and bool(view.mutates)


def object_schema(inputs: Any) -> dict[str, Any]:
    """The IO `inputs` as plain JSON data, an object schema as providers require."""
    schema = json_copy(inputs, default=dict) if inputs else {}
    if not isinstance(schema, dict) or not schema:
        return {"type": "object", "properties": {}}
    if schema.get("type") != "object":
        return {"type": "object", **schema} if "properties" in schema else schema
    return schema


class ManifestTool:
    def __init__(
        self,
        tool: ToolHandle,
        driver: Driver,
        *,
        name: str,
        audit: AuditSink | None,
        run_id: str | None,
    ) -> None:
        self.contract = tool
        self.driver = driver
        self.name = name
        self.category: Category = category_for(tool.view)
        self.always_ask = asks_always(tool.view)
        self.description = tool.description or tool.view.description or tool.name
        self.input_schema: dict[str, Any] = object_schema(tool.io.inputs)
        self.audit = audit
        self.run_id = run_id
        where = str(tool.source) if tool.source else tool.id
        self.source = f"manifest:{where} (driver {driver.id})"

    def summary(self, args: dict[str, Any]) -> str:
        shown = json.dumps(args, ensure_ascii=False, sort_keys=True)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        view = self.contract.view
        action = f" [{view.action_id}, approval {view.approval}]" if view.action_id else ""
        return f"{self.contract.id}{action} {shown}"

    async def run(self, args: dict[str, Any], ws: Workspace) -> ToolOutput:
        from flightdeck.drivers import DriverError, call_tool

        fields: dict[str, Any] = {
            "tool": self.contract.id,
            "agent_tool": self.name,
            "driver": self.driver.id,
            "action": self.contract.view.action_id,
            "approval": self.contract.view.approval,
            "category": self.category,
        }
        try:
            result = await call_tool(
                self.contract.id,
                args,
                driver=self.driver,
                context={"workspace": str(ws.root)},
                audit=self.audit,
                run_id=self.run_id,
            )
        except DriverError as exc:
            self._record({**fields, "ok": False, "code": exc.code})
            return ToolOutput(f"{exc.code}: {exc.message}", status="error")
        self._record({**fields, "ok": True, "duration_ms": round(result.duration_ms, 3)})
        output = result.output
        text = (
            output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, indent=2)
        )
        return ToolOutput(truncate(text))

    def _record(self, fields: dict[str, Any]) -> None:
        if self.audit is None:
            return
        from flightdeck.audit import AuditRecord

        try:
            self.audit.record(AuditRecord("agent.tool_call", self.run_id, fields))
        except Exception as exc:  # an audit store problem must not fail the call
            log.warning("could not record the call of %s: %s", self.name, exc)


@dataclass
class ManifestTools:
    tools: list[ManifestTool] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def discover_manifest_tools(
    workspace: Path,
    *,
    taken: Sequence[str] = (),
    audit: AuditSink | None = None,
    run_id: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> ManifestTools:
    """Every TOOL an SDK driver of the workspace implements, one agent tool each
    (the driver chosen by the drivers layer's ranking). Refused drivers and
    unusable tools become problems; nothing raises."""
    found = ManifestTools()
    if not (workspace / ".drivers").is_dir():
        return found
    from flightdeck.drivers import discover_drivers, resolve_driver

    candidates = discover_drivers(workspace, environ=environ)
    tool_ids: list[str] = []
    for cand in candidates:
        if cand.driver is None:
            why = f"{cand.refusal.code}: {cand.refusal.message}" if cand.refusal else "refused"
            found.problems.append(f"driver {cand.id} not loaded: {why}")
            continue
        if cand.kind != "sdk":
            continue
        for tid in getattr(cand.driver, "tool_ids", ()):
            if tid not in tool_ids:
                tool_ids.append(tid)
    names = set(taken) | RESERVED
    sdk_only = [c for c in candidates if c.kind == "sdk"]
    for tid in tool_ids:
        choice = resolve_driver(tid, sdk_only)
        binding = choice.driver.binding(tid) if choice.driver is not None else None
        if choice.driver is None or binding is None or binding.tool is None:
            found.problems.append(f"tool {tid}: no usable driver ({choice.reason})")
            continue
        if binding.streaming:
            found.problems.append(f"tool {tid}: streaming tools are not offered to the agent")
            continue
        name = safe_name(tid)[:64]
        if name in names:
            found.problems.append(f"tool {tid}: its name {name} is already taken; skipped")
            continue
        names.add(name)
        tool = ManifestTool(binding.tool, choice.driver, name=name, audit=audit, run_id=run_id)
        found.tools.append(tool)
    return found
