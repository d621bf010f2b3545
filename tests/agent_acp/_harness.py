"""Drive a real `flightdeck agent --acp` process with the `acp` library's
client side. `Client` is the ACP client: it keeps each session's updates
and answers its permission requests from a script.

The library alone takes seconds to import (its schema module), so one agent
process serves a whole test module: each test opens its own sessions in its
own workspace, whose `flightdeck.toml` points the provider at that test's
fake model server. The process's event loop runs on a thread; `Agent.call`
runs a coroutine there.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    AllowedOutcome,
    CreateTerminalResponse,
    DeniedOutcome,
    EnvVariable,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from tests.fakes import FakeLLMServer

FLIGHTDECK = str(Path(__file__).resolve().parents[2] / ".venv" / "bin" / "flightdeck")
T = TypeVar("T")


@dataclass
class Log:
    """One session as the client saw it. `answers`: option ids for the next
    permission requests (None: the client cancels the request)."""

    updates: list[Any] = field(default_factory=list)
    asked: list[tuple[ToolCallUpdate, list[PermissionOption]]] = field(default_factory=list)
    answers: list[str | None] = field(default_factory=list)
    hold: asyncio.Event | None = None  # set: permission answers wait for it

    def kinds(self) -> list[str]:
        return [u.session_update for u in self.updates]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.updates if u.session_update == kind)

    def tools(self) -> list[Any]:
        return [u for u in self.updates if u.session_update in ("tool_call", "tool_call_update")]


class Client:
    def __init__(self) -> None:
        self.logs: dict[str, Log] = {}
        self.incoming: list[dict[str, Any]] = []  # every JSON-RPC message received
        # the editor's buffers for fs/read_text_file and fs/write_text_file
        self.buffers: dict[str, str] = {}
        self.fs_calls: list[tuple[str, str]] = []
        # terminals run for the agent: id -> (argv, the process, its output so far)
        self.terminals: dict[str, tuple[list[str], asyncio.subprocess.Process, bytearray]] = {}
        self.terminal_calls: list[tuple[str, str]] = []
        self._pumps: list[asyncio.Task[None]] = []
        # URL elicitations asked of the person: (message, mode)
        self.elicitations: list[tuple[str, Any]] = []
        self.elicitation_answer = "accept"  # or "decline", "cancel"
        self.completed: list[str] = []  # elicitation ids the agent said are complete

    def log(self, session_id: str) -> Log:
        return self.logs.setdefault(session_id, Log())

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.log(session_id).updates.append(update)

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kw: Any
    ) -> RequestPermissionResponse:
        log = self.log(session_id)
        log.asked.append((tool_call, options))
        if log.hold is not None:
            await log.hold.wait()
        answer = log.answers.pop(0) if log.answers else None
        if answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(option_id=answer, outcome="selected")
        )

    async def read_text_file(self, session_id: str, path: str, **kw: Any) -> ReadTextFileResponse:
        self.fs_calls.append(("read", path))
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        try:
            return ReadTextFileResponse(content=Path(path).read_text())
        except OSError:
            raise RequestError.resource_not_found(path) from None

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kw: Any
    ) -> WriteTextFileResponse:
        self.fs_calls.append(("write", path))
        self.buffers[path] = content
        return WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        **kw: Any,
    ) -> CreateTerminalResponse:
        argv = [command, *(args or [])]
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env={v.name: v.value for v in env or []},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        tid = f"term-{len(self.terminals) + 1}"
        output = bytearray()
        self.terminals[tid] = (argv, proc, output)
        self.terminal_calls.append(("create", tid))

        async def pump() -> None:
            assert proc.stdout is not None
            while chunk := await proc.stdout.read(4096):
                output.extend(chunk)

        self._pumps.append(asyncio.create_task(pump()))
        return CreateTerminalResponse(terminal_id=tid)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kw: Any
    ) -> WaitForTerminalExitResponse:
        proc = self.terminals[terminal_id][1]
        code = await proc.wait()
        await asyncio.gather(*self._pumps)
        return WaitForTerminalExitResponse(exit_code=code if code >= 0 else None)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kw: Any
    ) -> TerminalOutputResponse:
        output = self.terminals[terminal_id][2]
        return TerminalOutputResponse(output=output.decode(errors="replace"), truncated=False)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kw: Any) -> None:
        self.terminal_calls.append(("kill", terminal_id))
        self.terminals[terminal_id][1].kill()

    async def release_terminal(self, session_id: str, terminal_id: str, **kw: Any) -> None:
        self.terminal_calls.append(("release", terminal_id))
        proc = self.terminals[terminal_id][1]
        if proc.returncode is None:
            proc.kill()

    async def create_elicitation(self, message: str, mode: Any, **kw: Any) -> Any:
        """The person is shown the URL (the test opens it) and accepts, or
        answers `elicitation_answer`."""
        from acp.schema import (
            AcceptElicitationResponse,
            CancelElicitationResponse,
            DeclineElicitationResponse,
        )

        self.elicitations.append((message, mode))
        if self.elicitation_answer == "decline":
            return DeclineElicitationResponse(action="decline")
        if self.elicitation_answer == "cancel":
            return CancelElicitationResponse(action="cancel")
        return AcceptElicitationResponse(action="accept")

    async def complete_elicitation(self, elicitation_id: str, **kw: Any) -> None:
        self.completed.append(elicitation_id)

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def observe(self, event: StreamEvent) -> None:
        if event.direction == StreamDirection.INCOMING:
            self.incoming.append(event.message)


def spawn(
    client: Client, *args: str, env: dict[str, str] | None = None
) -> AbstractAsyncContextManager[tuple[ClientSideConnection, asyncio.subprocess.Process]]:
    full_env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_BASE_URL"}
    full_env.update(env or {})
    return spawn_agent_process(
        client,  # type: ignore[arg-type]  # the methods the agent calls, not all
        FLIGHTDECK,
        "agent",
        "--acp",
        *args,
        env=full_env,
        observers=[client.observe],
        use_unstable_protocol=True,  # URL elicitations (MCP sign-in) are still unstable
    )


class Agent:
    """A running `flightdeck agent --acp` and its client, on a loop thread."""

    def __init__(self, env: dict[str, str], *args: str) -> None:
        self.home = Path(env["FLIGHTDECK_HOME"])  # its user config: `workspace(home=)`
        self.client = Client()
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self._stop = asyncio.Event()
        self._ready: asyncio.Future[Any] = self.loop.create_future()
        self._task = asyncio.run_coroutine_threadsafe(self._serve(env, args), self.loop)
        self.conn, self.proc = self.call(self._started())

    async def _started(self) -> Any:
        return await asyncio.wait_for(asyncio.shield(self._ready), 60)

    async def _serve(self, env: dict[str, str], args: tuple[str, ...]) -> None:
        async with spawn(self.client, *args, env=env) as (conn, proc):
            self._stop = asyncio.Event()
            await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), 60)
            self._ready.set_result((conn, proc))
            await self._stop.wait()

    def call(self, coroutine: Coroutine[Any, Any, T], seconds: float = 30.0) -> T:
        """Run on the agent's loop; a hang fails the test instead of blocking it."""
        wrapped = asyncio.wait_for(coroutine, seconds)
        return asyncio.run_coroutine_threadsafe(wrapped, self.loop).result(seconds + 5)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self._stop.set)
        self._task.result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


def workspace(root: Path, server: FakeLLMServer, toml: str = "", *, home: Path | None) -> Path:
    """A workspace whose config sends the agent to `server`; the user config
    in `home` (the agent's FLIGHTDECK_HOME) trusts it, or else its provider
    URL (and any loosening setting) is ignored: config/_screen.py."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "flightdeck.toml").write_text(
        "[agent]\nretry_delay = 0.01\nmax_retries = 0\n"
        + toml
        + f'\n[providers.anthropic]\nbase_url = "{server.base_url}"\n'
    )
    if home is not None:
        from unittest import mock

        from flightdeck.config import set_trust

        with mock.patch.dict(os.environ, {"FLIGHTDECK_HOME": str(home)}):
            set_trust(root)
    return root


@asynccontextmanager
async def separate(
    client: Client, *args: str, env: dict[str, str] | None = None
) -> AsyncIterator[ClientSideConnection]:
    """An agent process of its own (for what the shared one cannot show)."""
    async with spawn(client, *args, env=env) as (conn, _proc):
        await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), 60)
        yield conn


def run(test: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        await asyncio.wait_for(test(), 90)

    asyncio.run(bounded())
