"""The stdlib-only `ready` line equals the protocol models' encoding of the
`ready` event the engine builds (no extensions loaded), byte for byte, and
building it imports neither pydantic nor asyncio."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from flightdeck.agent import _protocol as p
from flightdeck.agent._live_config import LiveConfig, capabilities
from flightdeck.agent._ready_line import PROTOCOL_VERSION, ready_line
from flightdeck.agent._settings import PROVIDERS, AgentSettings

_IDS = st.one_of(
    st.none(),
    st.from_regex(r"[0-9]{8}-[0-9]{6}-[0-9a-f]{6}", fullmatch=True),
    st.text(max_size=40),  # ids from --session-id, any text the encoder may meet
)


def _slow(
    session_id: str | None,
    provider: str,
    thinking: int | None,
    mode: p.Mode,
    sandbox: str | None,
    image_input: p.ImageInput,
) -> str:
    """What `run_json_stream` writes today: the engine's event, then sandbox."""
    settings = AgentSettings(workspace=Path("/w"), provider=provider, thinking_budget=thinking)
    caps = capabilities(settings, replace(LiveConfig(), image_input=image_input), mode, False)
    ready = p.ReadyEvent.model_construct(session_id=session_id, capabilities=caps)
    if sandbox is not None:
        caps = ready.capabilities.model_copy(update={"sandbox": sandbox})
        ready = ready.model_copy(update={"capabilities": caps})
    return p.encode_event(ready)


@given(
    session_id=_IDS,
    provider=st.sampled_from(PROVIDERS),
    thinking=st.one_of(st.none(), st.integers(1024, 100_000)),
    mode=st.sampled_from(p.MODES),
    sandbox=st.sampled_from([None, "bubblewrap", "off"]),
    image_input=st.sampled_from(["supported", "unsupported", "unknown"]),
)
def test_equal_to_the_models_encoding(
    session_id: str | None,
    provider: str,
    thinking: int | None,
    mode: p.Mode,
    sandbox: str | None,
    image_input: p.ImageInput,
) -> None:
    fast = ready_line(
        session_id,
        provider=provider,
        thinking=thinking is not None,
        mode=mode,
        sandbox=sandbox,
        image_input=image_input,
    )
    assert fast == _slow(session_id, provider, thinking, mode, sandbox, image_input)


def test_unicode_line_breaks_are_escaped_as_in_the_models_encoding() -> None:
    for text in ("a\u2028b", "\x85", "x\u2029", "é"):
        fast = ready_line(text, provider="anthropic", thinking=False, mode="default", sandbox="off")
        assert fast == _slow(text, "anthropic", None, "default", "off", "unknown")
        assert "\u2028" not in fast and "\x85" not in fast


def test_constants_match_the_protocol() -> None:
    from flightdeck.agent._live_config import EFFORT_LEVELS
    from flightdeck.agent._ready_line import _EFFORT_LEVELS, _MODES

    assert PROTOCOL_VERSION == p.PROTOCOL_VERSION
    assert _MODES == p.MODES
    assert _EFFORT_LEVELS == EFFORT_LEVELS


def test_imports_no_pydantic_nor_asyncio() -> None:
    code = (
        "import sys\n"
        "from flightdeck.agent._ready_line import ready_line\n"
        "ready_line('s', provider='openai', thinking=True, mode='yolo', sandbox='off')\n"
        "print(sorted(m for m in ('pydantic', 'asyncio', 'click') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
