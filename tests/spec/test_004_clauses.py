"""Seed 004, AIP-33 SDK.md: one test per MUST / MUST NOT that no other test names.

Builds its own small workspace (an action, a tool, a `kind: sdk` driver over a
local package) and goes through the public `flightdeck.drivers` API only."""

from __future__ import annotations

import asyncio
import os
import textwrap
from pathlib import Path
from typing import Any

import yaml

from flightdeck.drivers import load_driver, stream_tool

ACTION = """\
---
schema: action/v1
id: text:count
version: 1.0.0
description: Count things in a text without changing anything.
mutates: []
risk_level: 0
approval: auto
---
"""

TOOL: dict[str, Any] = {
    "name": "Echo",
    "id": "text.echo",
    "description": "Return the input text.",
    "version": "1.0.0",
    "implements": "text:count",
    "inputs": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    },
    "outputs": {},
}

MODULE = """
import asyncio
import os

OPEN = set()
CLOSED = []
PIDS = []


def where(value):
    PIDS.append(os.getpid())
    return {"pid": os.getpid(), "text": value["text"]}


async def chunks(value):
    OPEN.add(value["text"])
    try:
        for i in range(3):
            await asyncio.sleep(0)
            yield {"delta": value["text"] + str(i)}
    finally:
        OPEN.discard(value["text"])
        CLOSED.append(value["text"])
"""


def _front(data: dict[str, Any]) -> str:
    return "---\n" + yaml.safe_dump(data, sort_keys=False) + "---\nBody.\n"


def _driver(root: Path, function_ref: str, sdk: dict[str, Any] | None = None) -> Any:
    (root / ".actions" / "text-count").mkdir(parents=True)
    (root / ".actions" / "text-count" / "ACTION.md").write_text(ACTION)
    (root / ".tools" / "text-echo").mkdir(parents=True)
    (root / ".tools" / "text-echo" / "TOOL.md").write_text(_front(TOOL))
    (root / "pkgs" / "specmod").mkdir(parents=True)
    (root / "pkgs" / "specmod" / "__init__.py").write_text(textwrap.dedent(MODULE))
    data = {
        "name": "Spec SDK",
        "id": "spec-sdk",
        "description": "Driver over a workspace module.",
        "version": "1.0.0",
        "kind": "sdk",
        "package": "specmod",
        "package_manager": "local",
        "install": [{"method": "vendored", "path": "../../pkgs/specmod"}],
        "implements": [
            {
                "tool": "text.echo",
                "version": "^1.0.0",
                "metadata": {"sdk": {"function_ref": function_ref, **(sdk or {})}},
            }
        ],
    }
    (root / ".drivers" / "spec-sdk").mkdir(parents=True)
    path = root / ".drivers" / "spec-sdk" / "DRIVER.md"
    path.write_text(_front(data))
    return load_driver(path)


def _module(driver: Any) -> Any:
    assert driver.import_report is not None
    return driver.import_report.module


def test_aip33_sdk_drivers_run_in_the_host_process_with_first_party_trust(
    tmp_path: Path,
) -> None:
    """AIP-33: 'SDK drivers run in the same process as the agent ... Hosts MUST treat SDK
    drivers with the same trust model as first-party code; they're NOT a sandbox.' The
    function runs in this very process (no subprocess is started for it)."""
    from flightdeck.drivers import call_tool

    driver = _driver(tmp_path, "where")
    result = asyncio.run(call_tool("text.echo", {"text": "hi"}, driver=driver))
    assert result.output == {"pid": os.getpid(), "text": "hi"}
    assert [os.getpid()] == _module(driver).PIDS


def test_aip33_hosts_must_not_leak_iterators_across_calls(tmp_path: Path) -> None:
    """AIP-33: 'Hosts MUST cancel generators on caller abort (signal) and MUST NOT leak
    iterators across calls.' Two calls get two generators; aborting the first closes it
    and leaves the second whole; none stays open afterwards."""
    sdk = {"result_extract": "$.delta", "streaming": {"mode": "async-iterator"}}
    driver = _driver(tmp_path, "chunks", sdk)
    module = _module(driver)

    async def go() -> tuple[list[Any], list[Any]]:
        first = stream_tool("text.echo", {"text": "a"}, driver=driver)
        second = stream_tool("text.echo", {"text": "b"}, driver=driver)
        assert first is not second
        got_first = [await anext(first)]
        await first.aclose()  # type: ignore[attr-defined]  # the caller aborts the first
        got_second = [chunk async for chunk in second]
        return got_first, got_second

    got_first, got_second = asyncio.run(go())
    assert got_first == ["a0"]
    assert got_second == ["b0", "b1", "b2"]
    assert set() == module.OPEN
    assert module.CLOSED == ["a", "b"]  # the aborted one closed first, on the abort
