"""Spawn in memory: sub-agents follow the parent's approval mode, are named on
the wire, cannot spawn, return their answers, and stop cancels them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from flightdeck.agent import protocol as p
from flightdeck.agent.extensions._spawn import MAX_TASKS, SpawnTool
from flightdeck.llm import TextBlock, ToolResultBlock
from tests.agent._harness import Harness, Step
from tests.agent_ext._routed import RoutedProvider


def spawn_harness(ws: Path, scripts: dict[str, list[Step]], **settings: Any) -> Harness:
    h = Harness(ws, [], **settings)
    h.provider = RoutedProvider(scripts)  # type: ignore[assignment]
    h.agent.provider = h.provider  # type: ignore[assignment]
    h.agent.tools["Spawn"] = SpawnTool(h.agent)
    return h


def spawn_call(*tasks: tuple[str, str], call_id: str = "s1") -> Step:
    args = {"tasks": [{"name": n, "prompt": t} for n, t in tasks]}
    return Step(calls=[(call_id, "Spawn", args)])


def msg(msg_id: str = "m1", text: str = "go") -> dict[str, Any]:
    return {"type": "message", "msg_id": msg_id, "input": text}


def last_result_text(h: Harness) -> str:
    request = h.provider.of("parent")[-1]  # type: ignore[attr-defined]
    block = request.messages[-1].content[-1]
    assert isinstance(block, ToolResultBlock)
    return "".join(b.text for b in block.content if isinstance(b, TextBlock))


def test_spawn_subagent_write_raises_named_tool_request_in_default_mode(tmp_path: Path) -> None:
    """In default mode a sub-agent's Write is a tool_request on the parent's
    stream, named by call_id `<task>/<id>` and a `[sub-agent <task>]` description;
    approving it writes the file and the sub-agent's answer is Spawn's result."""

    async def go() -> None:
        h = spawn_harness(
            tmp_path,
            {
                "parent": [spawn_call(("writer", "write a.txt")), Step(text="All done.")],
                "writer": [
                    Step(calls=[("w1", "Write", {"file_path": "a.txt", "content": "A\n"})]),
                    Step(text="I wrote a.txt."),
                ],
            },
        )
        await h.send(msg())
        events = await h.until("tool_request")
        assert isinstance(events[-1], p.ToolRequestEvent)
        assert events[-1].tool.name == "Spawn" and events[-1].tool.category == "exec"
        await h.send({"type": "tool_approve", "call_id": "s1"})
        events = await h.until("tool_request")
        sub = events[-1]
        assert isinstance(sub, p.ToolRequestEvent)
        assert sub.call_id == "writer/w1" and sub.msg_id == "m1"
        assert sub.tool.name == "Write" and sub.tool.category == "edit"
        assert sub.tool.description.startswith("[sub-agent writer] ")
        assert not (tmp_path / "a.txt").exists()
        await h.send({"type": "tool_approve", "call_id": "writer/w1"})
        events = await h.until("stream_end")
        results = [e for e in events if isinstance(e, p.ToolResultEvent)]
        assert [r.call_id for r in results] == ["writer/w1", "s1"]
        assert results[1].output == "## writer\nI wrote a.txt."
        # the sub-agent's text reaches the client, not only the model (issue 13)
        infos = [e.message for e in events if isinstance(e, p.InfoEvent)]
        assert "[sub-agent writer] I wrote a.txt." in infos
        assert (tmp_path / "a.txt").read_text() == "A\n"
        assert last_result_text(h) == "## writer\nI wrote a.txt."
        end = events[-1]  # usage: two parent calls and two sub-agent calls
        assert isinstance(end, p.StreamEndEvent) and end.usage.input_tokens == 40
        # the sub-agent's model saw its own ids, not the relabelled ones
        sub_second = h.provider.of("writer")[1]  # type: ignore[attr-defined]
        result = sub_second.messages[-1].content[0]
        assert isinstance(result, ToolResultBlock) and result.tool_use_id == "w1"

    asyncio.run(go())


def test_spawn_subagent_denied_write_feeds_reason_back(tmp_path: Path) -> None:
    async def go() -> None:
        h = spawn_harness(
            tmp_path,
            {
                "parent": [spawn_call(("w", "write")), Step(text="ok")],
                "w": [
                    Step(calls=[("w1", "Write", {"file_path": "x.txt", "content": "x"})]),
                    Step(text="The user refused."),
                ],
            },
            mode="default",
        )
        await h.send(msg())
        await h.until("tool_request")
        await h.send({"type": "tool_approve", "call_id": "s1"})
        await h.until("tool_request")
        await h.send({"type": "tool_deny", "call_id": "w/w1", "reason": "not there"})
        events = await h.until("stream_end")
        cancelled = [e for e in events if isinstance(e, p.ToolCancelledEvent)]
        assert cancelled[0].call_id == "w/w1" and cancelled[0].reason == "not there"
        assert not (tmp_path / "x.txt").exists()
        sub_second = h.provider.of("w")[1]  # type: ignore[attr-defined]
        denied = sub_second.messages[-1].content[0]
        assert isinstance(denied, ToolResultBlock) and denied.is_error
        assert "not there" in "".join(b.text for b in denied.content if isinstance(b, TextBlock))
        assert last_result_text(h) == "## w\nThe user refused."

    asyncio.run(go())


def test_spawn_subagents_follow_parent_mode_and_cannot_spawn(tmp_path: Path) -> None:
    """auto_edit: Spawn (exec) still asks, the sub-agents' Writes (edit) do not;
    two sub-agents run concurrently; their tools do not include Spawn."""

    async def go() -> None:
        h = spawn_harness(
            tmp_path,
            {
                "parent": [spawn_call(("a", "write a"), ("b", "write b")), Step(text="ok")],
                "a": [
                    Step(calls=[("1", "Write", {"file_path": "a.txt", "content": "a"})]),
                    Step(text="a done"),
                ],
                "b": [
                    Step(calls=[("1", "Write", {"file_path": "b.txt", "content": "b"})]),
                    Step(text="b done"),
                ],
            },
            mode="auto_edit",
        )
        await h.send(msg())
        await h.until("tool_request")
        await h.send({"type": "tool_approve", "call_id": "s1"})
        events = await h.until("stream_end")
        assert not [e for e in events if isinstance(e, p.ToolRequestEvent)]
        running = {e.call_id for e in events if isinstance(e, p.ToolRunningEvent)}
        assert running == {"s1", "a/1", "b/1"}
        assert last_result_text(h) == "## a\na done\n\n## b\nb done"
        assert (tmp_path / "a.txt").read_text() == "a" and (tmp_path / "b.txt").read_text() == "b"
        # Concurrently: both sub-agents asked the model before either asked a second time
        # (run one after the other, the order would be parent, a, a, b, b, parent).
        order = [key for key, _ in h.provider.requests]  # type: ignore[attr-defined]
        assert order[0] == "parent" and sorted(order[1:3]) == ["a", "b"]
        assert sorted(order[3:5]) == ["a", "b"] and order[5:] == ["parent"]
        for key in ("a", "b"):
            for request in h.provider.of(key):  # type: ignore[attr-defined]
                names = {t.name for t in request.tools}
                assert "Spawn" not in names and {"Read", "Write", "Bash"} <= names

    asyncio.run(go())


def test_spawn_always_scope_from_subagent_request_applies_to_session(tmp_path: Path) -> None:
    """`scope: always` on a sub-agent's request adds the category to the
    parent's session allow-list (one policy for both)."""

    async def go() -> None:
        h = spawn_harness(
            tmp_path,
            {
                "parent": [
                    spawn_call(("w", "write")),
                    Step(calls=[("p1", "Write", {"file_path": "p.txt", "content": "p"})]),
                    Step(text="ok"),
                ],
                "w": [
                    Step(calls=[("1", "Write", {"file_path": "w.txt", "content": "w"})]),
                    Step(text="done"),
                ],
            },
        )
        await h.send(msg())
        await h.until("tool_request")
        await h.send({"type": "tool_approve", "call_id": "s1"})
        await h.until("tool_request")
        await h.send({"type": "tool_approve", "call_id": "w/1", "scope": "always"})
        events = await h.until("stream_end")
        assert not [e for e in events if isinstance(e, p.ToolRequestEvent)]
        assert (tmp_path / "p.txt").read_text() == "p"

    asyncio.run(go())


def test_spawn_stop_cancels_every_subagent(tmp_path: Path) -> None:
    async def go() -> None:
        h = spawn_harness(
            tmp_path,
            {
                "parent": [spawn_call(("a", "x"), ("b", "y"))],
                "a": [Step(hang=True)],
                "b": [Step(hang=True)],
            },
            mode="yolo",
        )
        await h.send(msg())
        await h.until("tool_running")
        while len(h.provider.requests) < 3:  # type: ignore[attr-defined]
            await asyncio.sleep(0.01)
        await h.send({"type": "stop"})
        events = await h.until("stream_end")
        cancelled = [e for e in events if isinstance(e, p.ToolCancelledEvent)]
        assert [c.call_id for c in cancelled] == ["s1"]
        subs = h.provider.providers  # type: ignore[attr-defined]
        assert subs["a"].cancelled == 1 and subs["b"].cancelled == 1
        assert not h.agent.busy

    asyncio.run(go())


def test_spawn_bad_tasks_are_tool_errors(tmp_path: Path) -> None:
    """Bounded count, unique names, non-empty prompts: each refused with a reason."""
    too_many = [(f"t{i}", "p") for i in range(MAX_TASKS + 1)]
    cases = [
        (spawn_call(*too_many), f"at most {MAX_TASKS} tasks"),
        (spawn_call(("same", "a"), ("same", "b")), "unique"),
        (spawn_call(("bad name!", "a")), "tasks[0].name"),
        (spawn_call(("ok", "  ")), "tasks[0].prompt"),
        (Step(calls=[("s1", "Spawn", {"tasks": []})]), "non-empty list"),
    ]
    for step, expected in cases:

        async def go(step: Step = step, expected: str = expected) -> None:
            h = spawn_harness(tmp_path, {"parent": [step, Step(text="ok")]}, mode="yolo")
            await h.send(msg())
            events = await h.until("stream_end")
            result = next(e for e in events if isinstance(e, p.ToolResultEvent))
            assert result.status == "error" and expected in result.output
            assert len(h.provider.requests) == 2  # type: ignore[attr-defined]

        asyncio.run(go())


def test_spawn_subagent_provider_failure_is_reported_as_its_result(tmp_path: Path) -> None:
    from flightdeck.llm import ProviderError

    async def go() -> None:
        boom = ProviderError("auth_error", "bad key", retryable=False)
        h = spawn_harness(
            tmp_path,
            {"parent": [spawn_call(("a", "x")), Step(text="ok")], "a": [Step(error=boom)]},
            mode="yolo",
        )
        await h.send(msg())
        events = await h.until("stream_end")
        errors = [e for e in events if isinstance(e, p.ErrorEvent)]
        assert errors and errors[0].error.message.startswith("[sub-agent a] ")
        result = next(e for e in events if isinstance(e, p.ToolResultEvent))
        assert result.status == "error" and "sub-agent a failed" in result.output

    asyncio.run(go())


def test_set_mode_during_spawn_applies_to_running_subagents(tmp_path: Path) -> None:
    """The sub-agents read the parent's policy live: after `set_mode yolo`, the
    sub-agent's next write runs without a tool_request."""

    async def go() -> None:
        h = spawn_harness(
            tmp_path,
            {
                "parent": [spawn_call(("w", "write twice")), Step(text="ok")],
                "w": [
                    Step(calls=[("1", "Write", {"file_path": "one.txt", "content": "1"})]),
                    Step(calls=[("2", "Write", {"file_path": "two.txt", "content": "2"})]),
                    Step(text="both written"),
                ],
            },
        )
        await h.send(msg())
        await h.until("tool_request")
        await h.send({"type": "tool_approve", "call_id": "s1"})
        await h.until("tool_request")
        await h.send({"type": "set_mode", "mode": "yolo"})
        await h.send({"type": "tool_approve", "call_id": "w/1"})
        events = await h.until("stream_end")
        assert not [e for e in events if isinstance(e, p.ToolRequestEvent)]
        assert (tmp_path / "two.txt").read_text() == "2"
        assert last_result_text(h) == "## w\nboth written"

    asyncio.run(go())
