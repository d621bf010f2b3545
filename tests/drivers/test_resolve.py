"""Choosing a driver for a tool (AIP-30 § Multi-driver routing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flightdeck.drivers import (
    FunctionDriver,
    discover_drivers,
    resolve_driver,
    select_driver,
)
from flightdeck.drivers._binding import ToolBinding
from flightdeck.io import IOHandle
from tests.drivers._ws import ECHO_MODULE, add_driver, sdk_driver, workspace, write


class Fake(FunctionDriver):
    def __init__(
        self,
        ident: str,
        kind: str,
        tags: tuple[str, ...] = (),
        region: tuple[str, ...] = ("global",),
        cost: float | None = None,
        dropped: frozenset[str] = frozenset(),
    ) -> None:
        super().__init__(ident, {"t": lambda v, c: v}, kind=kind, policy_tags=tags, region=region)
        self._cost, self._dropped = cost, dropped

    def binding(self, tool_id: str) -> ToolBinding | None:
        if tool_id != "t":
            return None
        return ToolBinding("t", IOHandle(), self._dropped, cost_units=self._cost)


def test_aip30_prefers_in_process_sdk_over_http_and_cli() -> None:
    choice = resolve_driver("t", [Fake("c", "cli"), Fake("h", "http"), Fake("s", "sdk")])
    assert choice.driver is not None and choice.driver.id == "s"
    assert {r.driver for r in choice.rejected} == {"c", "h"}
    assert "ranked below s" in choice.rejected[0].reason


def test_required_policy_tags_filter_candidates_with_reasons() -> None:
    drivers = [Fake("cloud", "sdk", ("third-party-llm",)), Fake("local", "http", ("pii-safe",))]
    choice = resolve_driver("t", drivers, require_tags=["pii-safe"])
    assert choice.driver is not None and choice.driver.id == "local"
    assert choice.rejected[0].driver == "cloud"
    assert "lacks required policy tag(s): pii-safe" in choice.rejected[0].reason
    lines = choice.explain()
    assert lines[0].startswith("t: chose local") and "rejected cloud" in lines[1]


def test_region_must_match() -> None:
    choice = resolve_driver(
        "t",
        [Fake("us", "sdk", region=("us-east-1",)), Fake("eu", "sdk", region=("EU",))],
        region="EU",
    )
    assert choice.driver is not None and choice.driver.id == "eu"
    assert "does not include EU" in choice.rejected[0].reason


def test_cost_breaks_ties_within_a_kind_then_id() -> None:
    choice = resolve_driver(
        "t", [Fake("b", "sdk", cost=5), Fake("a", "sdk", cost=9), Fake("c", "sdk", cost=5)]
    )
    assert choice.driver is not None and choice.driver.id == "b"


def test_dropped_input_used_by_the_call_rejects_the_driver() -> None:
    choice = resolve_driver(
        "t", [Fake("d", "sdk", dropped=frozenset({"seed"})), Fake("k", "http")], input={"seed": 1}
    )
    assert choice.driver is not None and choice.driver.id == "k"
    assert "seed" in choice.rejected[0].reason


def test_no_candidate_is_a_choice_without_driver() -> None:
    choice = resolve_driver("t", [Fake("x", "sdk", ("a",))], require_tags=["b"])
    assert choice.driver is None
    assert choice.to_dict()["driver"] is None and choice.to_dict()["rejected"]


def test_pin_wins_when_it_survives() -> None:
    drivers = [Fake("s", "sdk"), Fake("h", "http")]
    pinned = resolve_driver("t", drivers, pin="h")
    assert pinned.driver is not None and pinned.driver.id == "h" and pinned.reason == "pinned"
    assert resolve_driver("t", drivers, pin="zz").driver is None


def _ws_with_two(tmp_path: Path) -> Path:
    ws = workspace(tmp_path)
    add_driver(ws, sdk_driver(ident="good-sdk", policy_tags=["pii-safe"]), ECHO_MODULE)
    add_driver(ws, sdk_driver(ident="npm-sdk", manager="npm", package="@x/y"))
    write(
        ws / ".drivers" / "web" / "DRIVER.md",
        "---\nname: W\nid: web-http\ndescription: d\nversion: 1.0.0\nkind: http\n"
        "implements:\n  - tool: text.echo\n    version: '^1'\n---\n",
    )
    return ws


def test_workspace_discovery_keeps_refusals_as_rejections(tmp_path: Path) -> None:
    ws = _ws_with_two(tmp_path)
    found = discover_drivers(ws)
    assert [(c.id, c.driver is not None) for c in found] == [
        ("good-sdk", True),
        ("npm-sdk", False),
        ("web-http", False),
    ]
    choice = resolve_driver("text.echo", found, require_tags=["pii-safe"])
    assert choice.driver is not None and choice.driver.id == "good-sdk"
    reasons = {r.driver: r.reason for r in choice.rejected}
    assert "not runnable by this Python host" in reasons["npm-sdk"]
    assert "kind 'http'" in reasons["web-http"]


def test_select_driver_loads_only_the_named_driver(tmp_path: Path) -> None:
    ws = _ws_with_two(tmp_path)
    choice = select_driver(ws, "text.echo", driver_id="npm-sdk")
    assert choice.driver is None and choice.refusal is not None
    assert choice.refusal.code == "driver_not_runnable"
    assert select_driver(ws, "text.echo", driver_id="nope").driver is None
    ok: Any = select_driver(ws, "text.echo", driver_id="good-sdk").driver
    assert ok.id == "good-sdk"


def test_call_tool_resolves_among_drivers_when_none_is_given() -> None:
    import asyncio

    import pytest

    from flightdeck.drivers import DriverCallError, call_tool

    drivers = [Fake("cloud", "sdk", ("third-party-llm",)), Fake("local", "http", ("pii-safe",))]
    result = asyncio.run(call_tool("t", {"x": 1}, drivers=drivers, require_tags=["pii-safe"]))
    assert result.driver == "local" and result.output == {"x": 1}
    with pytest.raises(DriverCallError) as info:
        asyncio.run(call_tool("t", {}, drivers=drivers, require_tags=["hipaa"]))
    assert info.value.code == "no_driver"
    assert len(info.value.details["rejected"]) == 2
