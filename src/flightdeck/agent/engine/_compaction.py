"""Long conversations: keep the request inside the model's context window.

Before each model call (`fit_context`), when `[agent] context_window` is set
and the estimated request size passes 80% of the usable window (the window
minus `max_tokens` kept for the reply):

1. older tool results are cleared (every tool-result message but the latest
   is replaced by a short marker; the calls themselves stay);
2. if that is not enough, the oldest turns (everything before a user turn
   boundary) are summarised by the model into one message;
3. if the request still does not fit the usable window, the turn ends with an
   `error` whose code is `context_overflow` instead of a provider 400.

Each step that changes the history is announced with `info`. Sizes are
estimated cheaply, at four characters per token (images count a fixed
amount). Each compaction is recorded in the session file (a `compacted`
record holding the history as compacted); a resumed session continues from
the last one instead of compacting the full transcript again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from flightdeck.agent.engine._state import TurnHost, TurnState
from flightdeck.agent.protocol import _models as p
from flightdeck.agent.tools import truncate
from flightdeck.llm import (
    ImageBlock,
    Message,
    ProviderError,
    Request,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    complete,
)

CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 1_600
TRIGGER = 0.8  # compact past this share of the usable window
CLEARED = "[older tool result cleared to save context]"
SUMMARY_SYSTEM = (
    "You summarise a coding agent's conversation so it can continue without the full "
    "transcript. Keep the user's goals and instructions, decisions made, files touched and "
    "their state, commands run and what they showed, and any open questions. Be concise."
)


def normalize(history: Sequence[Message]) -> list[Message]:
    """Merge consecutive messages of the same role (left by a stopped or
    interrupted turn) so every provider accepts the conversation."""
    out: list[Message] = []
    for message in history:
        if out and out[-1].role == message.role:
            out[-1] = Message(message.role, [*out[-1].content, *message.content])
        else:
            out.append(message)
    return out


def estimate_tokens(request: Request) -> int:
    chars = len(request.system or "")
    for spec in request.tools:
        chars += len(spec.name) + len(spec.description) + len(json.dumps(spec.input_schema))
    images = 0
    for message in request.messages:
        for block in message.content:
            size, pics = _block_size(block)
            chars += size
            images += pics
    return chars // CHARS_PER_TOKEN + images * IMAGE_TOKENS


def _block_size(block: object) -> tuple[int, int]:
    if isinstance(block, TextBlock | ThinkingBlock):
        return len(block.text), 0
    if isinstance(block, ImageBlock):
        return 0, 1
    if isinstance(block, ToolUseBlock):
        return len(block.name) + len(json.dumps(block.input)), 0
    if isinstance(block, ToolResultBlock):
        parts = [_block_size(b) for b in block.content]
        return sum(s for s, _ in parts), sum(i for _, i in parts)
    return 0, 0


def usable_window(window: int, max_tokens: int) -> int:
    """The tokens the request may take: the window less the reply's room."""
    room = window - max_tokens
    return room if room > 0 else window


async def fit_context(session: TurnHost, state: TurnState) -> bool:
    """Compact the session's history if needed. False when it cannot fit
    (a `context_overflow` error has then been emitted)."""
    window = session.settings.context_window
    if not window:
        return True
    budget = usable_window(window, session.settings.max_tokens)
    trigger = int(budget * TRIGGER)
    used = estimate_tokens(session.build_request())
    if used <= trigger:
        return True
    cleared = clear_tool_results(session.history)
    if cleared:
        after = estimate_tokens(session.build_request())
        _info(
            session,
            state,
            f"Context near its limit (~{used} of {budget} tokens): cleared "
            f"{cleared} older tool result(s), now ~{after} tokens.",
        )
        used = after
        session.persist_compaction()
    if used > trigger:
        done = await summarise_oldest(session, state, budget)
        if done:
            after = estimate_tokens(session.build_request())
            _info(
                session,
                state,
                f"Context near its limit (~{used} of {budget} tokens): "
                f"summarised {done} older message(s) into one, now ~{after} tokens.",
            )
            used = after
            session.persist_compaction()
    if used <= budget:
        return True
    session.error(
        state.msg_id,
        "context_overflow",
        f"The conversation needs ~{used} tokens but the model's context window leaves "
        f"{budget} (context_window {window} minus max_tokens {session.settings.max_tokens}); "
        "start a new session or raise [agent] context_window.",
    )
    return False


def clear_tool_results(history: list[Message]) -> int:
    """Replace the content of every tool result but the latest message's; the
    number of results cleared."""
    holders = [i for i, m in enumerate(history) if _has_results(m)]
    cleared = 0
    for i in holders[:-1]:
        blocks = []
        for block in history[i].content:
            if isinstance(block, ToolResultBlock) and _worth_clearing(block):
                block = ToolResultBlock(block.tool_use_id, [TextBlock(CLEARED)], block.is_error)
                cleared += 1
            blocks.append(block)
        history[i] = Message(history[i].role, blocks)
    return cleared


def _worth_clearing(block: ToolResultBlock) -> bool:
    size, images = _block_size(block)
    return images > 0 or size > len(CLEARED)


def _has_results(message: Message) -> bool:
    return any(isinstance(b, ToolResultBlock) for b in message.content)


def _turn_starts(history: list[Message]) -> list[int]:
    """Indexes where a user turn begins (user text, no tool results): the only
    places the history can be cut without orphaning a tool call."""
    return [
        i
        for i, m in enumerate(history)
        if i > 0
        and m.role == "user"
        and not _has_results(m)
        and any(isinstance(b, TextBlock) for b in m.content)
    ]


async def summarise_oldest(session: TurnHost, state: TurnState, budget: int) -> int:
    """Summarise the history before a turn boundary into one message; the
    number of messages replaced (0 when there is nothing to summarise)."""
    starts = _turn_starts(session.history)
    if not starts:
        return 0
    cut = starts[-1]
    for start in starts:  # keep as much recent history as fits in half the budget
        tail = Request(model="", messages=session.history[start:])
        if estimate_tokens(tail) <= budget // 2:
            cut = start
            break
    head = session.history[:cut]
    transcript = truncate(render(head), max(2_000, budget * CHARS_PER_TOKEN // 2))
    request = Request(
        model=session.settings.model or "",
        messages=[Message("user", [TextBlock(f"Summarise this conversation:\n\n{transcript}")])],
        system=SUMMARY_SYSTEM,
        max_tokens=min(session.settings.max_tokens, 2_048),
    )
    try:
        response = await complete(session.provider, request)
    except ProviderError as exc:
        _info(session, state, f"Could not summarise older messages: {exc.message}")
        return 0
    state.usage = state.usage + response.usage
    summary = "".join(b.text for b in response.content if isinstance(b, TextBlock)).strip()
    if not summary:
        return 0
    note = f"<conversation_summary>\n{summary}\n</conversation_summary>"
    session.history[:cut] = [Message("user", [TextBlock(note)])]
    return len(head)


def render(messages: list[Message]) -> str:
    """A plain transcript of messages, each part capped, for the summariser."""
    lines: list[str] = []
    for message in messages:
        who = "User" if message.role == "user" else "Assistant"
        for block in message.content:
            if isinstance(block, TextBlock):
                lines.append(f"{who}: {truncate(block.text, 4_000)}")
            elif isinstance(block, ToolUseBlock):
                lines.append(
                    f"Assistant called {block.name} {truncate(json.dumps(block.input), 1_000)}"
                )
            elif isinstance(block, ToolResultBlock):
                text = " ".join(b.text for b in block.content if isinstance(b, TextBlock))
                lines.append(f"Tool result: {truncate(text, 1_000)}")
            elif isinstance(block, ImageBlock):
                lines.append(f"{who}: [image]")
    return "\n".join(lines)


def _info(session: TurnHost, state: TurnState, message: str) -> None:
    session.emit(p.InfoEvent(msg_id=state.msg_id, message=message))
