"""Session behaviours behind issue 13, in memory: stop drops queued messages,
set_config compaction and thinking rules, resume fallbacks."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from flightdeck.agent import protocol as p
from flightdeck.agent._app import open_session
from flightdeck.agent.engine._settings import AgentSettings
from tests.agent._harness import Harness, Step


def msg(msg_id: str, text: str = "hi") -> dict[str, Any]:
    return {"type": "message", "msg_id": msg_id, "input": text}


def test_stop_drops_queued_messages_with_an_info(tmp_path: Path) -> None:
    async def go() -> None:
        h = Harness(tmp_path, [Step(text="slow", hang=True), Step(text="never")])
        await h.send(msg("m1"))
        await h.until("text_delta")
        await h.send(msg("m2"))
        await h.until("info")
        await h.send({"type": "stop"})
        events = await h.until("stream_end")
        dropped = [e for e in events if isinstance(e, p.InfoEvent) and e.msg_id == "m2"]
        assert dropped and "Dropped by stop" in dropped[0].message
        assert events[-1].msg_id == "m1"  # type: ignore[union-attr]
        await asyncio.sleep(0.05)
        assert not h.agent.busy and len(h.provider.requests) == 1

    asyncio.run(go())


def test_compaction_off_turns_compaction_off(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"line {i:03d} {'x' * 40}\n" for i in range(150)))

    async def go() -> None:
        steps = [Step(calls=[("r1", "Read", {"file_path": "big.txt"})]), Step(text="a")]
        steps += [Step(text="b")]
        h = Harness(tmp_path, steps, mode="yolo", context_window=3000, max_tokens=1000)
        await h.send({"type": "set_config", "compaction": "off"})
        changed = await h.until("config_changed")
        assert changed[-1].config.compaction == "off"  # type: ignore[union-attr]
        await h.send(msg("m1"))
        await h.until("stream_end")
        await h.send(msg("m2"))
        events = await h.until("stream_end")
        # over the window, yet neither cleared nor refused: compaction is off
        assert not [e for e in events if isinstance(e, p.InfoEvent | p.ErrorEvent)]
        await h.send({"type": "set_config", "compaction": "safe"})
        await h.until("config_changed")
        assert h.agent.settings.context_window == 3000

    asyncio.run(go())


def test_thinking_budget_rules(tmp_path: Path) -> None:
    async def go() -> None:
        h = Harness(tmp_path, [])
        await h.send({"type": "set_config", "thinking_budget": 4096})
        events = await h.until("config_changed")
        assert "thinking is disabled" in events[0].message  # type: ignore[union-attr]
        await h.send({"type": "set_config", "thinking": "enabled", "thinking_budget": 100})
        events = await h.until("config_changed")
        assert "at least 1024" in events[0].message  # type: ignore[union-attr]
        await h.send({"type": "set_config", "thinking": "enabled"})
        events = await h.until("config_changed")
        assert h.agent.settings.thinking_budget == 10_000
        await h.send({"type": "set_config", "thinking": "disabled"})
        await h.until("config_changed")
        assert h.agent.settings.thinking_budget is None

    asyncio.run(go())


def test_resume_latest_without_sessions_starts_a_new_one(tmp_path: Path) -> None:
    settings = AgentSettings(workspace=tmp_path)
    session, loaded = open_session(settings, None, "latest", "m")
    assert session is not None and session.id != "latest"
    assert "no sessions yet" in loaded.problems[0]
