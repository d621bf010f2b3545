"""Drive a real `flightdeck agent --acp` process with the `acp` library's
client side: the test's `Recorder` is the ACP client (it records every
`session/update` and answers permission requests from a script)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

FLIGHTDECK = str(Path(__file__).resolve().parents[2] / ".venv" / "bin" / "flightdeck")
T = TypeVar("T")


class Recorder:
    """The ACP client: updates as they arrive, permission requests answered
    with the next scripted option id (None: the client cancels the request)."""

    def __init__(self, answers: list[str | None] | None = None) -> None:
        self.updates: list[Any] = []
        self.asked: list[tuple[ToolCallUpdate, list[PermissionOption]]] = []
        self.answers = list(answers or [])
        self.hold: asyncio.Event | None = None  # set: permission answers wait for it

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kw: Any
    ) -> RequestPermissionResponse:
        self.asked.append((tool_call, options))
        if self.hold is not None:
            await self.hold.wait()
        answer = self.answers.pop(0) if self.answers else None
        if answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(option_id=answer, outcome="selected")
        )

    def kinds(self) -> list[str]:
        return [u.session_update for u in self.updates]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.updates if u.session_update == kind)

    def tool_updates(self) -> list[Any]:
        return [u for u in self.updates if u.session_update in ("tool_call", "tool_call_update")]

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


@asynccontextmanager
async def acp_agent(
    recorder: Recorder, *args: str, env: dict[str, str] | None = None
) -> AsyncIterator[tuple[ClientSideConnection, asyncio.subprocess.Process]]:
    full_env = dict(os.environ)
    full_env.update(env or {})
    async with spawn_agent_process(
        recorder,  # type: ignore[arg-type]  # the methods a test needs, not all
        FLIGHTDECK,
        "agent",
        "--acp",
        *args,
        env=full_env,
    ) as (conn, proc):
        await within(conn.initialize(protocol_version=PROTOCOL_VERSION))
        yield conn, proc


async def within(awaitable: Awaitable[T], seconds: float = 20.0) -> T:
    """A hang fails the test instead of blocking it."""
    return await asyncio.wait_for(awaitable, seconds)


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 60))
