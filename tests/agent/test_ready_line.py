"""The stdlib-only `ready` line (`_ready_line`) equals, byte for byte, the
line the engine writes for the same settings and session: its
`ready_event()`, decorated by the extensions `attach_extensions` loads for a
plain start (Spawn only), with the sandbox state, through `encode_event`.
Building it imports neither pydantic, asyncio nor click."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.agent.engine._session import AgentSession
from flightdeck.agent.engine._settings import PROVIDERS, AgentSettings, resolve_settings
from flightdeck.agent.engine._store import Session
from flightdeck.agent.extensions._load import attach_extensions
from flightdeck.agent.protocol import _models as p
from flightdeck.agent.stream._ready_line import ready_line
from flightdeck.llm import ScriptedProvider

_IDS = st.one_of(
    st.none(),  # sessions off
    st.from_regex(r"[0-9]{8}-[0-9]{6}-[0-9a-f]{6}", fullmatch=True),  # a generated id
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", fullmatch=True),  # --session-id
)


def _absent_or(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), values)


@st.composite
def _settings(draw: st.DrawFn, workspace: Path) -> AgentSettings:
    """Settings as `resolve_settings` makes them from flags and config."""
    agent: dict[str, Any] = {}
    for key, values in {
        "provider": st.sampled_from(PROVIDERS),
        "model": st.text(max_size=20),
        "mode": st.sampled_from(p.MODES),
        "thinking_budget": st.integers(1024, 100_000),
        "sessions": st.booleans(),
        "sandbox": st.one_of(
            st.sampled_from(["auto", "required", "off"]),
            st.fixed_dictionaries({"mode": st.sampled_from(["auto", "required", "off"])}),
        ),
        "max_tokens": st.integers(1, 100_000),
        "context_window": st.integers(1024, 1_000_000),
    }.items():
        value = draw(_absent_or(values))
        if value is not None:
            agent[key] = value
    providers: dict[str, Any] = {}
    effort = draw(_absent_or(st.sampled_from(["low", "medium", "high"])))
    if effort is not None:
        providers["openai"] = {"reasoning_effort": effort}
    flags = {
        "workspace": str(workspace),
        "provider": draw(_absent_or(st.sampled_from(PROVIDERS))),
        "model": draw(_absent_or(st.text(max_size=20))),
        "auto_approve": draw(st.sampled_from([None, True])),
        "max_turns": draw(_absent_or(st.integers(1, 100))),
        "system_prompt": draw(_absent_or(st.text(max_size=20))),
    }
    env = {"FLIGHTDECK_PROVIDER": draw(st.sampled_from(["", *PROVIDERS]))}
    return resolve_settings(flags, env, {"agent": agent, "providers": providers})


def _engine_line(settings: AgentSettings, session_id: str | None, sandbox: str) -> str:
    """What `_app.run_json_stream` writes for a plain start (no [mcp], no
    .drivers): the extensions attached, `ready` decorated, then the sandbox."""
    session = Session(Path("/sessions") / session_id) if session_id is not None else None
    agent = AgentSession(settings, ScriptedProvider(), lambda event: None, session=session)
    extensions = asyncio.run(attach_extensions(agent))
    assert not extensions.tools and not extensions.problems  # the plain start
    ready = extensions.decorate(agent.ready_event())
    caps = msgspec.structs.replace(ready.capabilities, sandbox=sandbox)
    return p.encode_event(msgspec.structs.replace(ready, capabilities=caps))


@settings(max_examples=150, deadline=None)
@given(data=st.data(), session_id=_IDS, sandbox=st.sampled_from(["bubblewrap", "off"]))
def test_equal_to_the_engines_ready_line(
    data: st.DataObject, session_id: str | None, sandbox: str, tmp_path_factory: Any
) -> None:
    workspace = tmp_path_factory.mktemp("ws")
    settings_ = data.draw(_settings(workspace))
    assert ready_line(settings_, session_id, sandbox) == _engine_line(
        settings_, session_id, sandbox
    )


def test_unicode_line_breaks_are_escaped_as_in_the_engines_line(tmp_path: Path) -> None:
    settings_ = AgentSettings(workspace=tmp_path)
    for text in ("a\u2028b", "\x85", "x\u2029", "é"):
        fast = ready_line(settings_, text, "off")
        assert fast == _engine_line(settings_, text, "off")
        assert "\u2028" not in fast and "\x85" not in fast


def test_imports_no_pydantic_nor_asyncio() -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from flightdeck.agent.stream._ready_line import ready_line\n"
        "from flightdeck.agent.engine._settings import AgentSettings\n"
        "ready_line(AgentSettings(workspace=Path('.'), provider='openai'), 's', 'off')\n"
        "print(sorted(m for m in ('pydantic', 'asyncio', 'click') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
