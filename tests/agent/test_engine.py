"""The session engine in memory: every flow of spec sections 3 and 4 and the
drifts issue 7 names, with a scripted provider (no process, no network)."""

from __future__ import annotations

import asyncio
import base64
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from flightdeck.agent import protocol as p
from flightdeck.agent.tools import ToolOutput, Workspace
from flightdeck.llm import ImageBlock, ProviderError, TextBlock, ToolResultBlock, Usage
from tests.agent._harness import Harness, Step, types


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def msg(msg_id: str, text: str = "hi", **extra: Any) -> dict[str, Any]:
    return {"type": "message", "msg_id": msg_id, "input": text, **extra}


def test_spec_3_2_message_turn_streams_text_and_ends(tmp_path: Path) -> None:
    async def body() -> None:
        h = Harness(tmp_path, [Step(text="Hi! How can I help?")])
        await h.send(msg("m1", "Hello"))
        events = await h.until("stream_end")
        assert types(events) == ["stream_start", "text_delta", "text_delta", "stream_end"]
        assert all(getattr(e, "msg_id", None) == "m1" for e in events)
        text = "".join(e.text for e in events if isinstance(e, p.TextDeltaEvent))
        assert text == "Hi! How can I help?"

    run(body())


def test_drift_usage_is_per_turn_not_cumulative(tmp_path: Path) -> None:
    """stream_end.usage is this turn's usage: input, output, cache read, cache write."""

    async def body() -> None:
        steps = [
            Step(text="a", usage=Usage(100, 10, 50, 5)),
            Step(text="b", usage=Usage(7, 3, 1, 0)),
        ]
        h = Harness(tmp_path, steps)
        await h.send(msg("m1"))
        end1 = (await h.until("stream_end"))[-1]
        await h.send(msg("m2"))
        end2 = (await h.until("stream_end"))[-1]
        assert isinstance(end1, p.StreamEndEvent) and isinstance(end2, p.StreamEndEvent)
        assert end1.usage == p.UsageInfo(
            input_tokens=100, output_tokens=10, cache_read_tokens=50, cache_write_tokens=5
        )
        assert end2.usage == p.UsageInfo(
            input_tokens=7, output_tokens=3, cache_read_tokens=1, cache_write_tokens=0
        )

    run(body())


def test_usage_sums_the_model_calls_of_one_turn(tmp_path: Path) -> None:
    async def body() -> None:
        steps = [
            Step(calls=[("t1", "Glob", {"pattern": "*"})], usage=Usage(10, 1, 0, 0)),
            Step(text="ok", usage=Usage(20, 2, 3, 4)),
        ]
        h = Harness(tmp_path, steps, mode="yolo")
        await h.send(msg("m1"))
        end = (await h.until("stream_end"))[-1]
        assert isinstance(end, p.StreamEndEvent)
        assert end.usage.input_tokens == 30 and end.usage.cache_write_tokens == 4

    run(body())


def test_spec_3_3_tool_approval_flow_pauses_until_approved(tmp_path: Path) -> None:
    async def body() -> None:
        args = {"file_path": "hello.rs", "content": "fn main() {}\n"}
        steps = [
            Step(text="I'll create the file.", calls=[("t1", "Write", args)]),
            Step(text="File created successfully."),
        ]
        h = Harness(tmp_path, steps)
        await h.send(msg("m2", "Create a hello.rs file"))
        events = await h.until("tool_request")
        request = events[-1]
        assert isinstance(request, p.ToolRequestEvent)
        assert request.call_id == "t1" and request.msg_id == "m2"
        assert request.tool.name == "Write" and request.tool.category == "edit"
        assert request.tool.args == args and "hello.rs" in request.tool.description
        await asyncio.sleep(0.01)
        assert h.drain() == []  # paused: nothing runs before the approval
        assert not (tmp_path / "hello.rs").exists()
        await h.send({"type": "tool_approve", "call_id": "t1", "scope": "once"})
        rest = await h.until("stream_end")
        assert types(rest) == [
            "tool_running",
            "tool_result",
            "text_delta",
            "text_delta",
            "stream_end",
        ]
        result = rest[1]
        assert isinstance(result, p.ToolResultEvent)
        assert result.status == "success" and result.tool_name == "Write"
        assert (tmp_path / "hello.rs").read_text() == "fn main() {}\n"

    run(body())


class _Rendezvous:
    """Two calls that each wait for the other to start: they only finish if
    they run at the same time (sequential execution would hang)."""

    name = "Meet"
    category = "info"
    description = "test tool"
    input_schema: ClassVar[dict[str, Any]] = {"type": "object"}

    def __init__(self) -> None:
        self.started: dict[str, asyncio.Event] = {"a": asyncio.Event(), "b": asyncio.Event()}

    def summary(self, args: dict[str, Any]) -> str:
        return "meet"

    async def run(self, args: dict[str, Any], ws: Workspace) -> ToolOutput:
        me, other = args["me"], args["other"]
        self.started[me].set()
        await asyncio.wait_for(self.started[other].wait(), 5)
        return ToolOutput(f"{me} met {other}")


def test_drift_several_tool_calls_requested_first_approved_any_order_run_concurrently(
    tmp_path: Path,
) -> None:
    """Spec 3.4: every tool_request comes first, approvals in any order, calls run together."""

    async def body() -> None:
        meet = _Rendezvous()
        calls = [
            ("t1", "Meet", {"me": "a", "other": "b"}),
            ("t2", "Meet", {"me": "b", "other": "a"}),
        ]
        h = Harness(tmp_path, [Step(calls=calls), Step(text="done")], tools=[meet])
        await h.send(msg("m1"))
        first = await h.until("tool_request")
        second = await h.next()
        assert types(first) == ["stream_start", "tool_request"]
        assert isinstance(second, p.ToolRequestEvent) and second.call_id == "t2"
        await h.send({"type": "tool_approve", "call_id": "t2"})
        await h.send({"type": "tool_approve", "call_id": "t1"})
        rest = await h.until("stream_end")
        results = [e for e in rest if isinstance(e, p.ToolResultEvent)]
        assert sorted(r.output for r in results) == ["a met b", "b met a"]
        tool_results = h.provider.requests[1].messages[-1].content
        assert [b.tool_use_id for b in tool_results if isinstance(b, ToolResultBlock)] == [
            "t1",
            "t2",
        ]

    run(body())


def test_spec_2_4_deny_emits_cancelled_feeds_reason_back_and_continues(tmp_path: Path) -> None:
    async def body() -> None:
        steps = [
            Step(calls=[("t1", "Bash", {"command": "rm -rf build"})]),
            Step(text="OK, I will not."),
        ]
        h = Harness(tmp_path, steps)
        await h.send(msg("m1"))
        await h.until("tool_request")
        await h.send({"type": "tool_deny", "call_id": "t1", "reason": "Not allowed"})
        rest = await h.until("stream_end")
        assert types(rest)[0] == "tool_cancelled"
        cancelled = rest[0]
        assert isinstance(cancelled, p.ToolCancelledEvent)
        assert cancelled.reason == "Not allowed" and cancelled.call_id == "t1"
        assert "text_delta" in types(rest)
        fed_back = h.provider.requests[1].messages[-1].content[0]
        assert isinstance(fed_back, ToolResultBlock) and fed_back.is_error
        assert "Not allowed" in fed_back.content[0].text  # type: ignore[union-attr]

    run(body())


def test_scope_always_remembers_the_tool_and_category_not_the_whole_category(
    tmp_path: Path,
) -> None:
    """Spec 002 line 271 ("this tool+category"); issue 13 item 4: never wider."""

    async def body() -> None:
        steps = [
            Step(calls=[("t1", "Write", {"file_path": "a.txt", "content": "a"})]),
            Step(text="one"),
            Step(calls=[("t2", "Write", {"file_path": "b.txt", "content": "b"})]),
            Step(text="two"),
            Step(
                calls=[("t3", "Edit", {"file_path": "a.txt", "old_string": "a", "new_string": "b"})]
            ),
            Step(text="three"),
        ]
        h = Harness(tmp_path, steps)
        await h.send(msg("m1"))
        await h.until("tool_request")
        await h.send({"type": "tool_approve", "call_id": "t1", "scope": "always"})
        await h.until("stream_end")
        await h.send(msg("m2"))
        second = await h.until("stream_end")
        assert "tool_request" not in types(second)  # Write is now allowed
        assert types(second)[1:3] == ["tool_running", "tool_result"]
        await h.send(msg("m3"))
        third = await h.until("tool_request")  # Edit, same category, still asks
        assert isinstance(third[-1], p.ToolRequestEvent) and third[-1].tool.name == "Edit"
        await h.send({"type": "tool_deny", "call_id": "t3"})
        await h.until("stream_end")

    run(body())


@pytest.mark.parametrize(
    ("mode", "asked"),
    [
        ("default", {"Read", "Write", "Bash"}),
        ("auto_edit", {"Bash"}),
        ("yolo", set()),
    ],
)
def test_spec_2_6_set_mode_decides_which_categories_need_approval(
    tmp_path: Path, mode: str, asked: set[str]
) -> None:
    async def body() -> None:
        (tmp_path / "r.txt").write_text("x")
        calls = [
            ("t1", "Read", {"file_path": "r.txt"}),
            ("t2", "Write", {"file_path": "w.txt", "content": "w"}),
            ("t3", "Bash", {"command": "true"}),
        ]
        h = Harness(tmp_path, [Step(calls=calls), Step(text="ok")])
        await h.send({"type": "set_mode", "mode": mode})
        await h.send(msg("m1"))
        requested: set[str] = set()
        while True:
            event = await h.next()
            if isinstance(event, p.ToolRequestEvent):
                requested.add(event.tool.name)
                await h.send({"type": "tool_approve", "call_id": event.call_id})
            if event.type == "stream_end":
                break
        assert requested == asked

    run(body())


def test_allow_list_by_category_or_tool_name_skips_request(tmp_path: Path) -> None:
    async def body() -> None:
        (tmp_path / "r.txt").write_text("x")
        calls = [("t1", "Read", {"file_path": "r.txt"}), ("t2", "Bash", {"command": "true"})]
        h = Harness(tmp_path, [Step(calls=calls)], allow_list=("info", "Bash"))
        await h.send(msg("m1"))
        events = await h.until("stream_end")
        assert "tool_request" not in types(events)
        assert types(events).count("tool_running") == 2

    run(body())


def test_drift_stop_during_stream_emits_stream_end_and_stays_ready(tmp_path: Path) -> None:
    async def body() -> None:
        h = Harness(tmp_path, [Step(text="partial", hang=True), Step(text="again")])
        await h.send(msg("m1"))
        await h.until("text_delta")
        await h.send({"type": "stop"})
        events = await h.until("stream_end")
        assert events[-1].msg_id == "m1"  # type: ignore[union-attr]
        assert h.provider.cancelled == 1
        await h.send(msg("m2"))
        again = await h.until("stream_end")
        assert types(again)[0] == "stream_start" and again[-1].msg_id == "m2"  # type: ignore[union-attr]
        # the partial reply stayed in the conversation, roles still alternate
        roles = [m.role for m in h.provider.requests[-1].messages]
        assert roles == ["user", "assistant", "user"]

    run(body())


def test_stop_while_awaiting_approval_cancels_the_call(tmp_path: Path) -> None:
    async def body() -> None:
        h = Harness(tmp_path, [Step(calls=[("t1", "Bash", {"command": "true"})])])
        await h.send(msg("m1"))
        await h.until("tool_request")
        await h.send({"type": "stop"})
        events = await h.until("stream_end")
        assert types(events) == ["tool_cancelled", "stream_end"]
        await h.send({"type": "tool_approve", "call_id": "t1"})
        late = await h.next()
        assert isinstance(late, p.ErrorEvent) and late.error.code == "protocol_error"
        assert "t1" in late.error.message

    run(body())


def test_stop_kills_running_bash_process_group(tmp_path: Path) -> None:
    # The child is found by its command line: in Bash's sandbox it has a PID
    # of its own namespace, which means nothing out here.
    marker = f"60.{os.getpid() % 1000}{time.monotonic_ns() % 997}"

    async def body() -> None:
        script = f"sleep {marker} & wait"
        h = Harness(tmp_path, [Step(calls=[("t1", "Bash", {"command": script})])], mode="yolo")
        await h.send(msg("m1"))
        await h.until("tool_running")
        await _wait_for(lambda: _sleeping(marker))
        assert _sleeping(marker)
        await h.send({"type": "stop"})
        events = await h.until("stream_end")
        assert "tool_cancelled" in types(events)
        await _wait_for(lambda: not _sleeping(marker))
        assert not _sleeping(marker)

    run(body())


def _sleeping(marker: str) -> bool:
    """A live (not zombie) `sleep MARKER` process exists."""
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        if argv[:2] == [b"sleep", marker.encode()] and stat.split(") ")[1][0] != "Z":
            return True
    return False


async def _wait_for(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    """Poll until `condition` holds; the generous bound only matters when it never does."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition() and loop.time() < deadline:
        await asyncio.sleep(0.01)


def test_drift_init_history_before_first_message_becomes_context(tmp_path: Path) -> None:
    async def body() -> None:
        h = Harness(tmp_path, [Step(text="ok")])
        await h.send({"type": "init_history", "text": "User asked about X."})
        await h.send(msg("m1"))
        await h.until("stream_end")
        system = h.provider.requests[0].system or ""
        assert "User asked about X." in system

    run(body())


def test_init_history_after_a_message_is_context_for_the_next_turn(tmp_path: Path) -> None:
    """Issue 13: AionUi sends init_history before every stop; no error, and
    the text reaches the next request (spec 2.5 only covers the first)."""

    async def body() -> None:
        h = Harness(tmp_path, [Step(text="ok"), Step(text="ok2")])
        await h.send(msg("m1"))
        await h.until("stream_end")
        await h.send({"type": "init_history", "text": "late context"})
        await h.send({"type": "stop"})
        await h.send(msg("m2"))
        events = await h.until("stream_end")
        assert not [e for e in events if isinstance(e, p.ErrorEvent)]
        assert "late context" in (h.provider.requests[-1].system or "")
        assert "late context" not in (h.provider.requests[0].system or "")

    run(body())


def test_message_while_turn_running_is_queued_and_runs_next(tmp_path: Path) -> None:
    async def body() -> None:
        h = Harness(
            tmp_path,
            [Step(calls=[("t1", "Bash", {"command": "true"})]), Step(text="x"), Step(text="y")],
        )
        await h.send(msg("m1"))
        await h.until("tool_request")
        await h.send(msg("m2", "second"))
        event = await h.next()
        assert isinstance(event, p.InfoEvent) and event.msg_id == "m2"
        assert "queued" in event.message
        await h.send({"type": "tool_approve", "call_id": "t1"})
        rest = await h.until("stream_end")
        assert rest[-1].msg_id == "m1"  # type: ignore[union-attr]
        second = await h.until("stream_end")
        assert second[0] == p.StreamStartEvent(msg_id="m2")
        assert second[-1].msg_id == "m2"  # type: ignore[union-attr]
        last = h.provider.requests[-1].messages[-1]
        assert last.role == "user" and "second" in str(last.content)

    run(body())


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("{not json", "Malformed JSON"),
        ('{"type":"foo"}', "Unknown command type: foo"),
        ('{"type":"message","input":"x"}', "missing field msg_id"),
        ('{"type":"stop","extra":1}', "unknown field extra"),
        ('{"type":"tool_approve","call_id":"nope"}', "Unknown call_id: nope"),
        ('{"type":"set_mode","mode":"turbo"}', "mode"),
        ("[1,2]", "JSON object"),
    ],
)
def test_spec_4_1_invalid_command_is_protocol_error_and_process_continues(
    tmp_path: Path, line: str, needle: str
) -> None:
    async def body() -> None:
        h = Harness(tmp_path, [Step(text="still here")])
        await h.send(line)
        event = await h.next()
        assert isinstance(event, p.ErrorEvent)
        assert event.error.code == "protocol_error" and not event.error.retryable
        assert needle in event.error.message
        await h.send(msg("m1"))
        assert (await h.until("stream_end"))[-1].type == "stream_end"

    run(body())


def test_spec_4_2_transient_errors_retry_with_info_then_succeed(tmp_path: Path) -> None:
    async def body() -> None:
        steps = [
            Step(error=ProviderError("stream_interrupted", "cut", retryable=True)),
            Step(error=ProviderError("rate_limited", "429", retryable=True, status=429)),
            Step(text="recovered"),
        ]
        h = Harness(tmp_path, steps)
        await h.send(msg("m1"))
        events = await h.until("stream_end")
        infos = [e.message for e in events if isinstance(e, p.InfoEvent)]
        assert infos[0] == "Stream interrupted, retrying... (1/2)"
        assert infos[1].endswith("(2/2)")
        assert "error" not in types(events)
        assert "recovered" in "".join(e.text for e in events if isinstance(e, p.TextDeltaEvent))

    run(body())


def test_spec_4_2_final_provider_error_is_reported_and_conversation_continues(
    tmp_path: Path,
) -> None:
    async def body() -> None:
        fail = ProviderError("server_error", "overloaded", retryable=True, status=500)
        steps = [Step(error=fail), Step(error=fail), Step(error=fail), Step(text="back")]
        h = Harness(tmp_path, steps)
        await h.send(msg("m1"))
        events = await h.until("stream_end")
        errors = [e for e in events if isinstance(e, p.ErrorEvent)]
        assert len(errors) == 1 and errors[0].msg_id == "m1"
        assert errors[0].error.code == "provider_error" and errors[0].error.retryable
        await h.send(msg("m2"))
        assert "text_delta" in types(await h.until("stream_end"))

    run(body())


def test_non_retryable_provider_error_is_not_retried(tmp_path: Path) -> None:
    async def body() -> None:
        h = Harness(tmp_path, [Step(error=ProviderError("auth_error", "bad key", status=401))])
        await h.send(msg("m1"))
        events = await h.until("stream_end")
        error = next(e for e in events if isinstance(e, p.ErrorEvent))
        assert error.error.code == "provider_error" and not error.error.retryable
        assert len(h.provider.requests) == 1

    run(body())


class _Crash:
    name = "Crash"
    category = "info"
    description = "always fails"
    input_schema: ClassVar[dict[str, Any]] = {"type": "object"}

    def summary(self, args: dict[str, Any]) -> str:
        return "crash"

    async def run(self, args: dict[str, Any], ws: Workspace) -> ToolOutput:
        raise RuntimeError("boom")


def test_drift_distinct_error_codes(tmp_path: Path) -> None:
    """protocol_error, provider_error, tool_error and config_error are told apart."""

    async def body() -> None:
        steps = [
            Step(calls=[("t1", "Crash", {})]),
            Step(error=ProviderError("rate_limited", "slow down", status=429)),
            Step(error=ProviderError("config_error", "no key")),
        ]
        h = Harness(tmp_path, steps, tools=[_Crash()], mode="yolo")
        await h.send("garbage")
        await h.send(msg("m1"))
        await h.until("stream_end")
        await h.send(msg("m2"))
        await h.until("stream_end")
        codes = [e.error.code for e in h.seen if isinstance(e, p.ErrorEvent)]
        assert codes == ["protocol_error", "tool_error", "provider_error", "config_error"]

    run(body())


def test_max_turns_ends_runaway_loop_with_info_and_stream_end(tmp_path: Path) -> None:
    async def body() -> None:
        loop = [Step(calls=[(f"t{i}", "Glob", {"pattern": "*"})]) for i in range(5)]
        h = Harness(tmp_path, loop, mode="yolo", max_turns=2)
        await h.send(msg("m1"))
        events = await h.until("stream_end")
        assert types(events)[-2:] == ["info", "stream_end"]
        assert "2 turns" in events[-2].message  # type: ignore[union-attr]
        assert len(h.provider.requests) == 2

    run(body())


def test_thinking_is_emitted_as_thinking_event(tmp_path: Path) -> None:
    async def body() -> None:
        h = Harness(tmp_path, [Step(thinking="Let me analyze...", text="ok")], thinking_budget=2048)
        assert h.agent.ready_event().capabilities.thinking
        await h.send(msg("m1"))
        events = await h.until("stream_end")
        assert events[1] == p.ThinkingEvent(text="Let me analyze...", msg_id="m1")
        assert h.provider.requests[0].thinking_budget == 2048

    run(body())


def test_ready_event_is_honest(tmp_path: Path) -> None:
    h = Harness(tmp_path, [])
    ready = h.agent.ready_event()
    assert ready.version == "0.1.0" and ready.session_id is None
    assert ready.capabilities == p.Capabilities(tool_approval=True, thinking=False, mcp=False)
    assert "session_id" not in p.encode_event(ready)


def test_message_files_images_become_images_and_text_is_attached_with_path(
    tmp_path: Path,
) -> None:
    async def body() -> None:
        png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
        (tmp_path / "shot.png").write_bytes(png)
        (tmp_path / "notes.md").write_text("remember this")
        h = Harness(tmp_path, [Step(text="ok")])
        await h.send(msg("m1", "look", files=["shot.png", str(tmp_path / "notes.md")]))
        await h.until("stream_end")
        content = h.provider.requests[0].messages[0].content
        assert isinstance(content[0], ImageBlock) and content[0].media_type == "image/png"
        assert base64.b64decode(content[0].data_base64) == png
        assert isinstance(content[1], TextBlock) and "remember this" in content[1].text
        assert str(tmp_path / "notes.md") in content[1].text
        await h.send(msg("m2", "x", files=["missing.txt"]))
        error = await h.next()
        assert isinstance(error, p.ErrorEvent) and error.error.code == "protocol_error"
        assert "missing.txt" in error.error.message
        # a path that never ends is read up to the cap, not to the end
        await h.send(msg("m3", "x", files=["/dev/zero"]))
        error = await h.next()
        assert isinstance(error, p.ErrorEvent) and "too large: /dev/zero" in error.error.message

    run(body())


def test_unknown_tool_from_model_becomes_error_result(tmp_path: Path) -> None:
    async def body() -> None:
        h = Harness(tmp_path, [Step(calls=[("t1", "Nope", {})]), Step(text="ok")])
        await h.send(msg("m1"))
        events = await h.until("stream_end")
        result = next(e for e in events if isinstance(e, p.ToolResultEvent))
        assert result.status == "error" and "Unknown tool" in result.output

    run(body())


def test_drift_edit_result_is_a_diff_with_file_path(tmp_path: Path) -> None:
    async def body() -> None:
        (tmp_path / "main.rs").write_text("old line\nkeep\n")
        steps = [
            Step(calls=[("t1", "Read", {"file_path": "main.rs"})]),
            Step(
                calls=[
                    (
                        "t2",
                        "Edit",
                        {"file_path": "main.rs", "old_string": "old", "new_string": "new"},
                    )
                ]
            ),
            Step(text="done"),
        ]
        h = Harness(tmp_path, steps, mode="yolo")
        await h.send(msg("m1"))
        events = await h.until("stream_end")
        edit = [e for e in events if isinstance(e, p.ToolResultEvent)][1]
        assert edit.output_type == "diff" and edit.status == "success"
        assert edit.metadata == {"file_path": str(tmp_path / "main.rs")}
        assert "-old line\n+new line" in edit.output and edit.output.startswith("--- a/main.rs")

    run(body())
