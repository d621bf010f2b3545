"""One turn: the model loop for a single `message`.

A turn streams a model reply, runs the tool calls it asks for (approval
first, then concurrently), feeds results back, and repeats until the model
stops asking for tools or `max_turns` model calls have been made. Transient
provider failures are retried with backoff and announced with `info`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from flightdeck.agent.engine._approval import CLOSED_INPUT, Decision
from flightdeck.agent.engine._compaction import fit_context
from flightdeck.agent.engine._state import TurnHost, TurnState
from flightdeck.agent.protocol import _models as p
from flightdeck.agent.tools import Tool, ToolFailure, ToolOutput, tool_progress
from flightdeck.llm import (
    ImageBlock,
    Message,
    ProviderError,
    Response,
    StreamDone,
    TextBlock,
    TextDelta,
    ThinkingDelta,
    ToolResultBlock,
    ToolUseBlock,
)

STOPPED = "Stopped by the client"


def _retry_message(exc: ProviderError, attempt: int, tries: int) -> str:
    if exc.code == "stream_interrupted":
        return f"Stream interrupted, retrying... ({attempt}/{tries})"
    what = {"rate_limited": "Rate limited", "server_error": "Provider server error"}
    return f"{what.get(exc.code, exc.message)}, retrying... ({attempt}/{tries})"


class Turn:
    def __init__(self, session: TurnHost, state: TurnState) -> None:
        self.s = session
        self.state = state
        self.emit: Callable[[p.Event], None] = session.emit
        self._opened_at = -1  # the history's length once the turn's message is in

    async def run(self, pending: Message | None = None) -> None:
        """The model loop. Raises CancelledError when stopped. `pending` is a
        reply (from a resumed session) whose tools are settled first."""
        settings = self.s.settings
        self._opened_at = len(self.s.history)
        for _ in range(settings.max_turns):
            if pending is not None:
                reply, pending = pending, None
            else:
                if not await fit_context(self.s, self.state):  # long conversations
                    return
                response = await self._call_model()
                if response is None:
                    return
                self.state.usage = self.state.usage + response.usage
                self.state.stop_reason = response.stop_reason
                reply = Message("assistant", list(response.content))
            calls = [b for b in reply.content if isinstance(b, ToolUseBlock)]
            if not calls:
                self.s.commit([reply])
                return
            self.state.reply = reply
            await self._settle_all(calls)
            self.s.commit([reply, self._results_message(calls)])
            self.state.reply = None
            self.state.results = {}
        self.state.stop_reason = "max_turns"
        self.emit(
            p.InfoEvent(
                msg_id=self.state.msg_id,
                message=f"Reached the maximum of {settings.max_turns} turns; stopping.",
            )
        )

    def interrupted(self) -> list[Message]:
        """What to keep in history when the turn is stopped half-way."""
        if self.state.reply is not None:
            calls = [b for b in self.state.reply.content if isinstance(b, ToolUseBlock)]
            return [self.state.reply, self._results_message(calls)]
        text = "".join(self.state.partial_text)
        return [Message("assistant", [TextBlock(text)])] if text else []

    def _results_message(self, calls: list[ToolUseBlock]) -> Message:
        stopped = [TextBlock(STOPPED)]
        blocks = [
            self.state.results.get(c.id) or ToolResultBlock(c.id, list(stopped), is_error=True)
            for c in calls
        ]
        return Message("user", list(blocks))

    # ---- the model call -----------------------------------------------------

    async def _call_model(self) -> Response | None:
        settings = self.s.settings
        tries = settings.max_retries
        for attempt in range(tries + 1):
            self.state.partial_text = []
            try:
                return await self._stream_once()
            except ProviderError as exc:
                if exc.code == "config_error":
                    self.s.error(self.state.msg_id, "config_error", exc.message)
                    return None
                if exc.retryable and attempt < tries:
                    message = _retry_message(exc, attempt + 1, tries)
                    self.emit(p.InfoEvent(msg_id=self.state.msg_id, message=message))
                    await asyncio.sleep(settings.retry_delay * (2**attempt))
                    continue
                message = (
                    f"{exc.message} ({exc.code})" if exc.code not in exc.message else exc.message
                )
                if exc.code == "context_too_long" and self._drop_new_message():
                    message += "; the message was not kept, so the conversation can go on"
                self.s.error(self.state.msg_id, "provider_error", message, retryable=exc.retryable)
                return None
        return None  # pragma: no cover - the loop always returns

    def _drop_new_message(self) -> bool:
        """Take back the message that opened this turn when the model refused
        it as too long before anything else happened: kept, it would make
        every later call of the session fail the same way."""
        history = self.s.history
        if len(history) != self._opened_at or not history or history[-1].role != "user":
            return False
        del history[-1]
        self.s.persist_compaction()
        return True

    async def _stream_once(self) -> Response:
        msg_id = self.state.msg_id
        stream = self.s.provider.stream(self.s.build_request())
        closer: Any = stream if hasattr(stream, "aclose") else None
        async with contextlib.AsyncExitStack() as stack:
            if closer is not None:
                stack.push_async_callback(closer.aclose)
            async for event in stream:
                if isinstance(event, TextDelta):
                    self.state.partial_text.append(event.text)
                    self.emit(p.TextDeltaEvent(text=event.text, msg_id=msg_id))
                elif isinstance(event, ThinkingDelta):
                    self.emit(p.ThinkingEvent(text=event.text, msg_id=msg_id))
                elif isinstance(event, StreamDone):
                    return event.response
        raise ProviderError("stream_interrupted", "stream ended early", retryable=True)

    # ---- tools --------------------------------------------------------------

    async def _settle_all(self, calls: list[ToolUseBlock]) -> None:
        """Ask for every approval first, then run each call as its decision arrives."""
        loop = asyncio.get_running_loop()
        waits: list[asyncio.Future[Decision] | None] = []
        for call in calls:
            tool = self.s.tools.get(call.name)
            # A tool may insist on asking every time (a manifest action's `approval`).
            always_ask = bool(getattr(tool, "always_ask", False))
            if tool is None or (
                not always_ask and self.s.policy.auto_approves(tool.name, tool.category, call.input)
            ):
                waits.append(None)
                continue
            future: asyncio.Future[Decision] = loop.create_future()
            self.s.pending[call.id] = (future, tool, call.input)
            waits.append(future)
            info = p.ToolInfo(
                name=tool.name,
                category=tool.category,
                args=call.input,
                description=tool.summary(call.input),
            )
            self.emit(p.ToolRequestEvent(msg_id=self.state.msg_id, call_id=call.id, tool=info))
            _approval_waiting(tool.name, tool.category, call.id)
            if self.s.input_closed():  # nobody is left to answer
                future.set_result(Decision(False, CLOSED_INPUT))
        if self.state.reply is not None and any(w is not None for w in waits):
            self.s.persist_pending(self.state.msg_id, self.state.reply)
        try:
            await asyncio.gather(*(self._settle(c, w) for c, w in zip(calls, waits, strict=True)))
        finally:
            for call in calls:
                self.s.pending.pop(call.id, None)

    async def _settle(self, call: ToolUseBlock, wait: asyncio.Future[Decision] | None) -> None:
        msg_id = self.state.msg_id
        tool = self.s.tools.get(call.name)
        if tool is None:
            out = ToolOutput(f"Unknown tool: {call.name}", status="error")
            self._finish(call, call.name, out)
            return
        try:
            if wait is not None:
                decision = await wait
                if not decision.approved:
                    reason = decision.reason or "User denied"
                    self.emit(p.ToolCancelledEvent(msg_id=msg_id, call_id=call.id, reason=reason))
                    text = f"The user denied this tool call. Reason: {reason}"
                    self.state.results[call.id] = ToolResultBlock(
                        call.id, [TextBlock(text)], is_error=True
                    )
                    return
            self.emit(p.ToolRunningEvent(msg_id=msg_id, call_id=call.id, tool_name=tool.name))
            out = await self._execute(tool, call)
        except asyncio.CancelledError:
            self.emit(p.ToolCancelledEvent(msg_id=msg_id, call_id=call.id, reason=STOPPED))
            raise
        self._finish(call, tool.name, out)

    async def _execute(self, tool: Tool, call: ToolUseBlock) -> ToolOutput:
        msg_id = self.state.msg_id

        running = True  # progress that arrives after the result is dropped

        def report(progress: float, total: float | None, message: str | None) -> None:
            if not running:
                return
            self.emit(
                p.ToolProgressEvent(
                    msg_id=msg_id,
                    call_id=call.id,
                    tool_name=tool.name,
                    progress=progress,
                    total=total,
                    message=message,
                )
            )

        token = tool_progress.set(report)
        try:
            return await tool.run(call.input, self.s.workspace)
        except ToolFailure as exc:
            return ToolOutput(str(exc), status="error")
        except Exception as exc:  # a bug in a tool must not end the conversation
            message = f"{tool.name} failed unexpectedly: {type(exc).__name__}: {exc}"
            self.s.error(self.state.msg_id, "tool_error", message)
            return ToolOutput(message, status="error")
        finally:
            running = False
            tool_progress.reset(token)

    def _finish(self, call: ToolUseBlock, name: str, out: ToolOutput) -> None:
        self.emit(
            p.ToolResultEvent(
                msg_id=self.state.msg_id,
                call_id=call.id,
                tool_name=name,
                status=out.status,
                output=out.output,
                output_type=out.output_type,
                metadata=out.metadata,
            )
        )
        if out.output_type == "image" and out.media_type:
            content: list[TextBlock | ImageBlock] = [ImageBlock(out.media_type, out.output)]
        else:
            content = [TextBlock(out.output or "(no output)")]
        self.state.results[call.id] = ToolResultBlock(
            call.id, content, is_error=out.status == "error"
        )


def _approval_waiting(tool: str, category: str, call_id: str) -> None:
    """The lifecycle event a team wires notifications to (delivered to
    subscribers; the agent's own audit records the tool call when it runs)."""
    from flightdeck.audit import fire

    fire(
        "approval.waiting",
        source="agent",
        fields={"tool": tool, "category": category, "call_id": call_id},
    )
