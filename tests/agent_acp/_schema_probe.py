"""Validate and serialise ACP messages in a fresh interpreter; print the result
as JSON. `python _schema_probe.py MODE`; MODE is how `acp` gets imported:

- `normal`: `import acp`, as any program would;
- `fast`: through `flightdeck.agent.acp._library.import_acp`;
- `no-internals`: `import_acp` with the pydantic internals it uses removed;
- `failing`: `import_acp` where the first import of `acp.schema` fails.

The messages are the shapes the agent exchanges with a client (requests it
reads, responses and notifications it sends, requests it makes), valid and
invalid; each is validated from its JSON text and from a dict.
"""

from __future__ import annotations

import importlib.abc
import json
import sys
from typing import Any

DIFF = {"type": "diff", "path": "/w/a.py", "oldText": "x = 1\n", "newText": "x = 2\n"}
TEXT = {"type": "text", "text": "héllo ✓"}
MESSAGES: list[tuple[str, Any]] = [
    ("InitializeRequest", {"protocolVersion": 1}),
    (
        "InitializeRequest",
        {
            "protocolVersion": 1,
            "clientCapabilities": {
                "fs": {"readTextFile": True, "writeTextFile": True},
                "terminal": True,
            },
            "clientInfo": {"name": "zed", "version": "0.200.0"},
        },
    ),
    (
        "InitializeResponse",
        {
            "protocolVersion": 1,
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": True, "embeddedContext": True},
                "mcpCapabilities": {"http": True},
            },
            "agentInfo": {"name": "flightdeck", "title": "flightdeck", "version": "0.1.0"},
            "authMethods": [],
        },
    ),
    (
        "NewSessionRequest",
        {
            "cwd": "/w",
            "mcpServers": [
                {
                    "name": "files",
                    "command": "/usr/bin/mcp",
                    "args": ["--root", "/w"],
                    "env": [{"name": "TOKEN", "value": "t"}],
                },
                {
                    "type": "http",
                    "name": "web",
                    "url": "https://mcp.example/mcp",
                    "headers": [{"name": "Authorization", "value": "Bearer t"}],
                },
            ],
        },
    ),
    (
        "NewSessionResponse",
        {
            "sessionId": "s1",
            "modes": {
                "currentModeId": "default",
                "availableModes": [
                    {"id": "default", "name": "Ask", "description": "Ask first"},
                    {"id": "yolo", "name": "Yolo"},
                ],
            },
        },
    ),
    ("LoadSessionRequest", {"cwd": "/w", "sessionId": "s1", "mcpServers": []}),
    (
        "PromptRequest",
        {
            "sessionId": "s1",
            "prompt": [
                TEXT,
                {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
                {
                    "type": "resource",
                    "resource": {
                        "uri": "file:///w/a.py",
                        "text": "x = 1\n",
                        "mimeType": "text/x-python",
                    },
                },
                {"type": "resource_link", "uri": "file:///w/b.py", "name": "b.py"},
            ],
        },
    ),
    ("PromptResponse", {"stopReason": "end_turn"}),
    ("PromptResponse", {"stopReason": "max_turn_requests"}),
    ("SetSessionModeRequest", {"sessionId": "s1", "modeId": "yolo"}),
    ("CancelNotification", {"sessionId": "s1"}),
    (
        "SessionNotification",
        {"sessionId": "s1", "update": {"sessionUpdate": "agent_message_chunk", "content": TEXT}},
    ),
    (
        "SessionNotification",
        {"sessionId": "s1", "update": {"sessionUpdate": "agent_thought_chunk", "content": TEXT}},
    ),
    (
        "SessionNotification",
        {
            "sessionId": "s1",
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": "t1",
                "title": "Edit a.py",
                "kind": "edit",
                "status": "pending",
                "rawInput": {"path": "a.py", "old": "1", "new": "2"},
                "locations": [{"path": "/w/a.py", "line": 1}],
            },
        },
    ),
    (
        "SessionNotification",
        {
            "sessionId": "s1",
            "update": {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "t1",
                "status": "completed",
                "content": [DIFF, {"type": "content", "content": TEXT}],
            },
        },
    ),
    (
        "SessionNotification",
        {
            "sessionId": "s1",
            "update": {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "t2",
                "content": [{"type": "terminal", "terminalId": "term-1"}],
            },
        },
    ),
    (
        "SessionNotification",
        {
            "sessionId": "s1",
            "update": {"sessionUpdate": "current_mode_update", "currentModeId": "yolo"},
        },
    ),
    (
        "RequestPermissionRequest",
        {
            "sessionId": "s1",
            "toolCall": {"toolCallId": "t1", "title": "Bash: ls", "kind": "execute"},
            "options": [
                {"optionId": "allow_once", "name": "Allow", "kind": "allow_once"},
                {"optionId": "reject_always", "name": "Always reject", "kind": "reject_always"},
            ],
        },
    ),
    ("RequestPermissionResponse", {"outcome": {"outcome": "selected", "optionId": "allow_once"}}),
    ("RequestPermissionResponse", {"outcome": {"outcome": "cancelled"}}),
    ("ReadTextFileRequest", {"sessionId": "s1", "path": "/w/a.py", "line": 3, "limit": 10}),
    ("ReadTextFileResponse", {"content": "x = 1\n"}),
    ("WriteTextFileRequest", {"sessionId": "s1", "path": "/w/a.py", "content": "x = 2\n"}),
    (
        "CreateTerminalRequest",
        {
            "sessionId": "s1",
            "command": "bash",
            "args": ["-c", "ls"],
            "cwd": "/w",
            "outputByteLimit": 1024,
        },
    ),
    (
        "TerminalOutputResponse",
        {"output": "a.py\n", "truncated": False, "exitStatus": {"exitCode": 0}},
    ),
    # invalid: the errors must be the same too
    ("InitializeRequest", {"protocolVersion": "one"}),
    ("PromptRequest", {"sessionId": "s1", "prompt": [{"type": "video", "url": "x"}]}),
    ("SessionNotification", {"sessionId": "s1", "update": {"sessionUpdate": "nonsense"}}),
    ("RequestPermissionResponse", {"outcome": {"outcome": "selected"}}),
    ("NewSessionRequest", {"mcpServers": [{"type": "http", "name": "x"}]}),
]


class _FailOnce(importlib.abc.MetaPathFinder):
    """Fails the first import of `acp.schema`, as a broken fast path would."""

    failed = False

    def find_spec(self, name: str, path: Any, target: Any = None) -> None:
        if name == "acp.schema" and not self.failed:
            self.failed = True
            raise ImportError("injected failure")


def _import(mode: str) -> list[str]:
    if mode == "normal":
        import acp  # noqa: F401

        return []
    import pydantic
    from pydantic._internal import _config, _fields, _generate_schema

    if mode == "no-internals":
        # A pydantic whose internals are laid out differently: a module the
        # fast path reaches for cannot be imported (pydantic itself already
        # holds what it needs from it).
        pydantic.RootModel, pydantic.TypeAdapter  # noqa: B018 (loaded before it goes)
        del pydantic._internal._generate_schema
        sys.modules["pydantic._internal._generate_schema"] = None  # type: ignore[assignment]
    if mode == "failing":
        sys.meta_path.insert(0, _FailOnce())
    from flightdeck.agent.acp._library import import_acp

    applied = list(import_acp())
    # what was patched is back as it was
    assert _config.config_defaults["defer_build"] is False
    hidden = "pydantic._internal._docs_extraction"
    assert _fields.extract_docstrings_from_cls.__module__ == hidden
    assert _generate_schema.extract_docstrings_from_cls.__module__ == hidden
    return applied


def _run(model: Any, payload: Any) -> dict[str, Any]:
    from pydantic import ValidationError

    out: dict[str, Any] = {}
    for source, validate in (
        ("json", lambda: model.model_validate_json(json.dumps(payload))),
        ("python", lambda: model.model_validate(payload)),
    ):
        try:
            value = validate()
        except ValidationError as exc:
            out[source] = {"errors": exc.errors(include_url=False)}
            continue
        out[source] = {
            "dump": value.model_dump(mode="json", by_alias=True, exclude_none=True),
            "json": value.model_dump_json(by_alias=True),
            "repr": repr(value),
        }
    return out


def main() -> None:
    applied = _import(sys.argv[1])
    import acp.schema

    results = [_run(getattr(acp.schema, name), payload) for name, payload in MESSAGES]
    # A class defined afterwards keeps the documented behaviour: eager build,
    # field docstrings as descriptions.
    from pydantic import BaseModel, ConfigDict

    class Later(BaseModel):
        model_config = ConfigDict(use_attribute_docstrings=True)
        x: int
        """the x"""

    later = [Later.__pydantic_complete__, Later.model_fields["x"].description]
    described = acp.schema.ReadTextFileRequest.model_fields["path"].description
    json.dump(
        {"applied": applied, "results": results, "later": later, "described": described},
        sys.stdout,
        default=repr,
    )


if __name__ == "__main__":
    main()
