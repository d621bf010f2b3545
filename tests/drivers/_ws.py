"""Build small workspaces for driver tests: an action, tools, drivers, local modules."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import yaml

ACTION = """\
---
schema: action/v1
id: text:count
version: 1.0.0
description: Count things in a text without changing anything.
category: text
mutates: []
risk_level: 0
approval: auto
---
Pure.
"""

ECHO_TOOL: dict[str, Any] = {
    "name": "Echo",
    "id": "text.echo",
    "description": "Return the input text, possibly transformed.",
    "version": "1.2.0",
    "implements": "text:count",
    "inputs": {
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "times": {"type": "integer", "minimum": 1},
            "seed": {"type": "integer"},
            "items": {"type": "array"},
        },
        "required": ["text"],
        "additionalProperties": False,
    },
    "outputs": {},
}


def frontmatter(data: dict[str, Any], body: str = "Body.\n") -> str:
    return "---\n" + yaml.safe_dump(data, sort_keys=False) + "---\n" + body


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text) if text.startswith("\n") else text, encoding="utf-8")
    return path


def workspace(root: Path, *, tool: dict[str, Any] | None = None) -> Path:
    """A workspace with the text:count action and the text.echo tool."""
    write(root / ".actions" / "text-count" / "ACTION.md", ACTION)
    data = tool or ECHO_TOOL
    write(root / ".tools" / str(data["id"]).replace(".", "-") / "TOOL.md", frontmatter(data))
    return root


def sdk_driver(
    *,
    ident: str = "echo-sdk",
    function_ref: str = "echo",
    tool: str = "text.echo",
    package: str = "echomod",
    manager: str = "local",
    install: list[dict[str, Any]] | None = None,
    sdk: dict[str, Any] | None = None,
    entry: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    per_tool: dict[str, Any] = {"function_ref": function_ref, **(sdk or {})}
    impl: dict[str, Any] = {"tool": tool, "version": "^1.0.0", **(entry or {})}
    impl["metadata"] = {"sdk": per_tool}
    if install is None:
        install = (
            [{"method": "vendored", "path": f"../../pkgs/{package}"}] if manager == "local" else []
        )
    data: dict[str, Any] = {
        "name": "Echo SDK",
        "id": ident,
        "description": "Test driver over a workspace module.",
        "version": "1.0.0",
        "kind": "sdk",
        "package": package,
        "package_manager": manager,
    }
    if install:
        data["install"] = install
    data.update(extra)
    data["implements"] = [impl]
    return data


def add_driver(root: Path, data: dict[str, Any], module: str | None = None) -> Path:
    """Write `.drivers/<id>/DRIVER.md` and, when given, `pkgs/<package>/__init__.py`."""
    path = write(root / ".drivers" / str(data["id"]) / "DRIVER.md", frontmatter(data))
    if module is not None:
        write(root / "pkgs" / str(data["package"]) / "__init__.py", textwrap.dedent(module))
    return path


ECHO_MODULE = """
import asyncio
import threading
from types import SimpleNamespace

CALLS = []


def echo(value):
    CALLS.append(threading.get_ident())
    return {"text": value["text"], "n": value.get("times", 1)}


async def aecho(text, times=1):
    await asyncio.sleep(0)
    return {"text": text * times}


def kw_only(*, text, times=1):
    return text * times


def positional(a, b=None, *, flag=False):
    return {"a": a, "b": b, "flag": flag}


def boom(value):
    raise ValueError("bad input: " + value["text"])


def not_json(value):
    return object()


class Client:
    made = []

    def __init__(self, api_key=None, region="eu"):
        Client.made.append((api_key, region))
        self.api_key = api_key
        self.region = region
        self.images = _Images(self)


class _Images:
    def __init__(self, client):
        self.client = client

    def create(self, value):
        return {"url": "https://img/" + value["text"], "region": self.client.region}


images = SimpleNamespace(create=lambda value: {"nested": value["text"]})


def main(value):
    return {"main": value["text"]}
"""
