"""Long conversations in memory: clearing older tool results, summarising the
oldest turns, and `context_overflow` instead of a provider 400."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from flightdeck.agent import SettingsError, resolve_settings
from flightdeck.agent import protocol as p
from flightdeck.agent.engine._compaction import (
    CLEARED,
    clear_tool_results,
    estimate_tokens,
    usable_window,
)
from flightdeck.llm import ImageBlock, Message, Request, TextBlock, ToolResultBlock, ToolUseBlock
from tests.agent._harness import Harness, Step


def msg(msg_id: str, text: str) -> dict[str, Any]:
    return {"type": "message", "msg_id": msg_id, "input": text}


def big_file(ws: Path, lines: int = 40) -> None:
    (ws / "big.txt").write_text("".join(f"line {i:03d} " + "x" * 40 + "\n" for i in range(lines)))


def read_step(call_id: str) -> Step:
    return Step(calls=[(call_id, "Read", {"file_path": "big.txt"})])


def all_text(request: Request) -> str:
    parts: list[str] = []
    for message in request.messages:
        for block in message.content:
            if isinstance(block, TextBlock):
                parts.append(block.text)
            elif isinstance(block, ToolResultBlock):
                parts.extend(b.text for b in block.content if isinstance(b, TextBlock))
    return "\n".join(parts)


def test_estimate_counts_text_tools_and_images() -> None:
    base = estimate_tokens(Request(model="m", messages=[]))
    assert base == 0
    text = Request(model="m", messages=[Message("user", [TextBlock("x" * 400)])])
    assert estimate_tokens(text) == 100
    image = Request(model="m", messages=[Message("user", [ImageBlock("image/png", "AAAA")])])
    assert estimate_tokens(image) >= 1000
    assert usable_window(10_000, 2_000) == 8_000 and usable_window(1_000, 2_000) == 1_000


def test_clear_tool_results_keeps_the_latest_message() -> None:
    def result(i: str, text: str) -> Message:
        return Message("user", [ToolResultBlock(i, [TextBlock(text)])])

    call = Message("assistant", [ToolUseBlock("a", "Read", {})])
    history = [call, result("a", "A" * 200), call, result("b", "B" * 200), call, result("c", "C")]
    assert clear_tool_results(history) == 2
    texts = [
        b.content[0].text for m in history for b in m.content if isinstance(b, ToolResultBlock)
    ]  # type: ignore[union-attr]
    assert texts == [CLEARED, CLEARED, "C"]
    assert clear_tool_results(history) == 0  # already cleared: nothing more


def test_older_tool_results_cleared_first_and_client_told(tmp_path: Path) -> None:
    big_file(tmp_path)

    async def go() -> None:
        steps = [read_step("r1"), Step(text="ok"), read_step("r2"), Step(text="ok again")]
        h = Harness(tmp_path, steps, mode="yolo", context_window=3000, max_tokens=1000)
        await h.send(msg("m1", "read it"))
        first = await h.until("stream_end")
        assert not [e for e in first if isinstance(e, p.InfoEvent)]
        await h.send(msg("m2", "read it again"))
        events = await h.until("stream_end")
        infos = [e for e in events if isinstance(e, p.InfoEvent)]
        assert len(infos) == 1 and "cleared 1 older tool result" in infos[0].message
        assert infos[0].msg_id == "m2"
        last = h.provider.requests[-1]
        text = all_text(last)
        assert CLEARED in text and text.count("line 039") == 1  # only the latest kept
        assert estimate_tokens(last) <= 0.8 * 2000

    asyncio.run(go())


def test_oldest_turns_summarised_into_one_message(tmp_path: Path) -> None:
    async def go() -> None:
        steps = [Step(text="ok"), Step(text="SUMMARY: the user sent a long text."), Step(text="2")]
        h = Harness(tmp_path, steps, context_window=3000, max_tokens=1000)
        await h.send(msg("m1", "a" * 2400))
        await h.until("stream_end")
        await h.send(msg("m2", "b" * 2400))
        events = await h.until("stream_end")
        infos = [e for e in events if isinstance(e, p.InfoEvent)]
        assert len(infos) == 1 and "summarised 2 older message(s)" in infos[0].message
        summary_request, last = h.provider.requests[-2], h.provider.requests[-1]
        assert summary_request.tools == [] and "aaaa" in all_text(summary_request)
        assert "summarise" in (summary_request.system or "").lower()
        assert last.messages[0].role == "user"
        first = last.messages[0].content[0]
        assert isinstance(first, TextBlock) and "SUMMARY: the user sent" in first.text
        assert "aaaa" not in all_text(last) and "bbbb" in all_text(last)
        end = events[-1]
        assert isinstance(end, p.StreamEndEvent) and end.usage.input_tokens == 20  # both calls

    asyncio.run(go())


def test_context_that_cannot_fit_is_context_overflow_not_a_provider_call(tmp_path: Path) -> None:
    async def go() -> None:
        steps = [Step(text="SUMMARY: a huge paste."), Step(text="small answer")]
        h = Harness(tmp_path, steps, context_window=3000, max_tokens=1000)
        await h.send(msg("m1", "z" * 20_000))
        events = await h.until("stream_end")
        errors = [e for e in events if isinstance(e, p.ErrorEvent)]
        assert len(errors) == 1 and errors[0].error.code == "context_overflow"
        assert errors[0].msg_id == "m1" and "context_window" in errors[0].error.message
        assert h.provider.requests == []
        # the conversation goes on: the next turn summarises the huge message away
        await h.send(msg("m2", "and now?"))
        events = await h.until("stream_end")
        assert not [e for e in events if isinstance(e, p.ErrorEvent)]
        assert "".join(e.text for e in events if isinstance(e, p.TextDeltaEvent)) == "small answer"
        assert "zzzz" not in all_text(h.provider.requests[-1])

    asyncio.run(go())


def test_no_window_configured_means_no_compaction(tmp_path: Path) -> None:
    async def go() -> None:
        h = Harness(tmp_path, [Step(text="fine")])
        await h.send(msg("m1", "y" * 50_000))
        events = await h.until("stream_end")
        assert not [e for e in events if isinstance(e, p.InfoEvent | p.ErrorEvent)]

    asyncio.run(go())


@pytest.mark.parametrize("bad", [0, 100, "big", True])
def test_context_window_setting_is_validated(tmp_path: Path, bad: object) -> None:
    with pytest.raises(SettingsError, match="context_window"):
        resolve_settings({"workspace": str(tmp_path)}, {}, {"agent": {"context_window": bad}})
    ok = resolve_settings({"workspace": str(tmp_path)}, {}, {"agent": {"context_window": 8192}})
    assert ok.context_window == 8192
