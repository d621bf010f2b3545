"""Bash through the ACP client's terminals (`terminal/*`).

When the client advertises `terminal`, a Bash call runs in a terminal the
client creates, so the user watches it live in the editor (the bridge embeds
it in the tool call). What runs is decided here, not by the client: the same
command line the disk tool would start, so with bubblewrap the client starts
the sandbox (`--clearenv`, the workspace bind, the network rule), and with a
host allow-list the egress proxy serves it from this process for as long as
the command runs. The timeout and the "exit code" answer are the disk tool's;
a terminal merges stdout and stderr, so the output is one block.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from acp import Client
from acp.schema import EnvVariable

from flightdeck.agent.acp._standin import StandIn
from flightdeck.agent.tools import (
    Tool,
    ToolFailure,
    ToolOutput,
    Workspace,
    bash_call,
    bash_launch,
    truncate,
)

# What the client keeps of a command's output (it truncates from the start).
OUTPUT_BYTE_LIMIT = 256 * 1024

OnTerminal = Callable[[str, str], None]  # (command, terminal id)


class ClientBash(StandIn):
    def __init__(
        self, disk: Tool, client: Client, session_id: str, on_terminal: OnTerminal
    ) -> None:
        super().__init__(disk)
        self.client = client
        self.session_id = session_id
        self.on_terminal = on_terminal

    async def run(self, args: dict[str, Any], ws: Workspace) -> ToolOutput:
        command, timeout_ms = bash_call(args)
        sid = self.session_id
        async with bash_launch(ws, command) as launch:
            try:
                created = await self.client.create_terminal(
                    session_id=sid,
                    command=launch.argv[0],
                    args=launch.argv[1:],
                    env=[EnvVariable(name=k, value=v) for k, v in launch.env.items()],
                    cwd=str(ws.root),
                    output_byte_limit=OUTPUT_BYTE_LIMIT,
                )
            except Exception as exc:
                raise ToolFailure(f"the client could not start a terminal: {exc}") from None
            tid = created.terminal_id
            self.on_terminal(command, tid)
            try:
                try:
                    done = await asyncio.wait_for(
                        self.client.wait_for_terminal_exit(session_id=sid, terminal_id=tid),
                        timeout_ms / 1000,
                    )
                except TimeoutError:
                    await self.client.kill_terminal(session_id=sid, terminal_id=tid)
                    raise ToolFailure(
                        f"Command timed out after {timeout_ms} ms and was killed"
                    ) from None
                output = await self.client.terminal_output(session_id=sid, terminal_id=tid)
            except asyncio.CancelledError:  # stopped: the command goes too
                with contextlib.suppress(Exception):
                    await asyncio.shield(self.client.kill_terminal(session_id=sid, terminal_id=tid))
                raise
            except ToolFailure:
                raise
            except Exception as exc:
                raise ToolFailure(f"the client's terminal failed: {exc}") from None
            finally:
                with contextlib.suppress(Exception):
                    await asyncio.shield(
                        self.client.release_terminal(session_id=sid, terminal_id=tid)
                    )
        code = done.exit_code if done.exit_code is not None else -1
        text = f"exit code: {code}"
        if done.signal:
            text += f" (signal {done.signal})"
        if output.output:
            text += f"\noutput:\n{output.output.rstrip()}"
        if output.truncated:
            text += "\n(the start of the output was cut by the client)"
        if launch.proxy is not None and launch.proxy.denied:
            refused = ", ".join(sorted(set(launch.proxy.denied)))
            text += f"\nnetwork: refused {refused} (not in [agent.sandbox] network)"
        return ToolOutput(truncate(text), status="success" if code == 0 else "error")
