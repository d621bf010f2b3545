"""`Spawn`: sub-agents that work on tasks concurrently, category `exec`.

Each sub-agent is a session of its own (its own history and system prompt)
with the parent's provider and the built-in tools only, so it cannot spawn
further. It shares the parent's approval policy, allow-list, pending
approvals and workspace: its tool calls follow the parent's mode, a call
that needs approval is a `tool_request` on the parent's stream, and the
client's `tool_approve`/`tool_deny` reach it through the parent's dispatch.

On the wire a sub-agent's tool events carry the parent's `msg_id`, a
`call_id` of `<task name>/<model call id>`, and a description starting with
`[sub-agent <task name>]`. Its text is not streamed; its final answer is the
Spawn tool's result. `stop` cancels the parent's turn, which cancels every
sub-agent with it.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any, ClassVar

import msgspec
from msgspec.structs import replace

from flightdeck.agent.engine._session import AgentSession
from flightdeck.agent.engine._state import TurnState
from flightdeck.agent.engine._turn import Turn
from flightdeck.agent.protocol import _models as p
from flightdeck.agent.tools import Category, ToolFailure, ToolOutput, Workspace, builtin_tools
from flightdeck.llm import (
    ContentBlock,
    Message,
    Provider,
    Request,
    StreamDone,
    StreamEvent,
    TextBlock,
    ToolCallReady,
    ToolResultBlock,
    ToolUseBlock,
)

MAX_TASKS = 4
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")

SUB_SYSTEM_PROMPT = (
    "You are a sub-agent of flightdeck named {name}, working in the directory {workspace}. "
    "Complete the task you are given using the tools, then reply with a concise final "
    "answer: it is all the parent agent will see."
)

# Events a sub-agent forwards to the client: the tool flow (approval must be
# visible), errors and notices. Its streamed text stays private.
_FORWARDED = (
    p.ToolRequestEvent,
    p.ToolRunningEvent,
    p.ToolResultEvent,
    p.ToolCancelledEvent,
    p.InfoEvent,
    p.ErrorEvent,
)


class SpawnTool:
    name = "Spawn"
    category: Category = "exec"
    description = (
        "Run up to 4 sub-agents concurrently, each on its own task with the built-in tools "
        "(Read, Write, Edit, Bash, Glob, Grep). Each returns its final answer. Use it for "
        "independent pieces of work; give every task a short unique name and a complete prompt."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "tasks": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_TASKS,
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "Short unique name"},
                        "prompt": {"type": "string", "description": "The task, self-contained"},
                    },
                    "required": ["name", "prompt"],
                },
            }
        },
        "required": ["tasks"],
    }

    def __init__(self, parent: AgentSession) -> None:
        self.parent = parent

    def summary(self, args: dict[str, Any]) -> str:
        tasks = args.get("tasks")
        names = (
            [str(t.get("name")) for t in tasks if isinstance(t, dict)]
            if isinstance(tasks, list)
            else []
        )
        return f"Spawn {len(names)} sub-agent(s): {', '.join(names)}"

    async def run(self, args: dict[str, Any], ws: Workspace) -> ToolOutput:
        tasks = parse_tasks(args)
        msg_id = self.parent.current_msg_id or ""
        agents = [SubAgent(self.parent, name, msg_id) for name, _ in tasks]
        answers = await asyncio.gather(
            *(agent.work(prompt) for agent, (_, prompt) in zip(agents, tasks, strict=True))
        )
        failed = all(not ok for ok, _ in answers)
        parts = [
            f"## {name}\n{answer}" for (name, _), (_, answer) in zip(tasks, answers, strict=True)
        ]
        return ToolOutput("\n\n".join(parts), status="error" if failed else "success")


def parse_tasks(args: dict[str, Any]) -> list[tuple[str, str]]:
    """The (name, prompt) pairs, or `ToolFailure` saying what is wrong."""
    tasks = args.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        raise ToolFailure("tasks must be a non-empty list of {name, prompt}")
    if len(tasks) > MAX_TASKS:
        raise ToolFailure(f"at most {MAX_TASKS} tasks per Spawn, got {len(tasks)}")
    out: list[tuple[str, str]] = []
    for i, task in enumerate(tasks):
        if not isinstance(task, dict):
            raise ToolFailure(f"tasks[{i}] must be an object with name and prompt")
        name, prompt = task.get("name"), task.get("prompt")
        if not isinstance(name, str) or not _NAME.match(name):
            raise ToolFailure(
                f"tasks[{i}].name must be 1-40 letters, digits, '_', '.', '-', got {name!r}"
            )
        if not isinstance(prompt, str) or not prompt.strip():
            raise ToolFailure(f"tasks[{i}].prompt must be a non-empty string")
        if any(name == seen for seen, _ in out):
            raise ToolFailure(f"task names must be unique; {name!r} is repeated")
        out.append((name, prompt))
    return out


class SubAgent(AgentSession):
    """A session whose tool flow goes through its parent's policy and stream."""

    def __init__(self, parent: AgentSession, name: str, msg_id: str) -> None:
        settings = replace(
            parent.settings,
            system_prompt=SUB_SYSTEM_PROMPT.format(name=name, workspace=parent.settings.workspace),
            sessions=False,
        )
        self.task_name = name
        self.parent = parent
        self.msg_id = msg_id
        self.problems: list[str] = []
        provider = Relabeled(parent.provider, f"{name}/")
        super().__init__(settings, provider, self._forward, tools=builtin_tools())
        # shared with the parent: mode and allow-list, pending approvals, files read
        self.policy = parent.policy
        self.pending = parent.pending
        self.workspace = parent.workspace

    def input_closed(self) -> bool:
        return self.parent.input_closed()

    async def work(self, prompt: str) -> tuple[bool, str]:
        """Run the task to the end: (succeeded, final answer or what went wrong).
        Its model usage counts in the parent turn's `stream_end.usage`."""
        self.commit([Message("user", [TextBlock(prompt)])])
        state = TurnState(self.msg_id)
        try:
            await Turn(self, state).run()
        finally:
            parent = self.parent.current_state
            if parent is not None:
                parent.usage = parent.usage + state.usage
        answer = _last_answer(self.history)
        if answer:
            # The sub-agent's own text reaches the client too, not only the model.
            message = f"[sub-agent {self.task_name}] {answer}"
            self.parent.emit(p.InfoEvent(msg_id=self.msg_id, message=message))
            return True, answer
        reason = "; ".join(self.problems) or "it gave no answer"
        return False, f"(sub-agent {self.task_name} failed: {reason})"

    def error(
        self, msg_id: str | None, code: p.ErrorCode, message: str, *, retryable: bool = False
    ) -> None:
        self.problems.append(message)
        super().error(msg_id, code, f"[sub-agent {self.task_name}] {message}", retryable=retryable)

    def _forward(self, event: p.Event) -> None:
        if not isinstance(event, _FORWARDED):
            return
        if isinstance(event, p.ToolRequestEvent):
            label = f"[sub-agent {self.task_name}] {event.tool.description}"
            event = msgspec.structs.replace(
                event, tool=msgspec.structs.replace(event.tool, description=label)
            )
        elif isinstance(event, p.InfoEvent):
            event = msgspec.structs.replace(
                event, message=f"[sub-agent {self.task_name}] {event.message}"
            )
        self.parent.emit(event)


def _last_answer(history: list[Message]) -> str:
    for message in reversed(history):
        if message.role == "assistant":
            text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
            if text.strip():
                return text.strip()
    return ""


class Relabeled:
    """The parent's provider, with the sub-agent's tool call ids prefixed on the
    way out (so they are unique on the shared stream and pending table) and
    restored on the way in (so the model sees its own ids)."""

    def __init__(self, inner: Provider, prefix: str) -> None:
        self.inner = inner
        self.prefix = prefix
        self.name = inner.name

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        messages = [
            Message(m.role, [self._restore(b) for b in m.content]) for m in request.messages
        ]
        inner = self.inner.stream(replace(request, messages=messages))
        try:
            async for event in inner:
                if isinstance(event, ToolCallReady):
                    yield ToolCallReady(self._label(event.call))
                elif isinstance(event, StreamDone):
                    content = [
                        self._label(b) if isinstance(b, ToolUseBlock) else b
                        for b in event.response.content
                    ]
                    yield StreamDone(replace(event.response, content=content))
                else:
                    yield event
        finally:
            closer = getattr(inner, "aclose", None)
            if closer is not None:
                await closer()

    def _label(self, block: ToolUseBlock) -> ToolUseBlock:
        return replace(block, id=self.prefix + block.id)

    def _restore(self, block: ContentBlock) -> ContentBlock:
        if isinstance(block, ToolUseBlock):
            return replace(block, id=block.id.removeprefix(self.prefix))
        if isinstance(block, ToolResultBlock):
            return replace(block, tool_use_id=block.tool_use_id.removeprefix(self.prefix))
        return block
