"""Bash: run a shell command in the workspace, in its own process group,
inside the sandbox (`_sandbox.py`) when bubblewrap works here.

The whole group is killed on timeout and when the call is cancelled (the
client sent `stop`), so children started by the command do not linger. In
the sandbox the command is also in its own PID namespace, which the kernel
empties when bubblewrap dies (`--die-with-parent`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec

from flightdeck.agent.tools._base import (
    Category,
    ToolFailure,
    ToolOutput,
    Workspace,
    arg_int,
    arg_str,
    truncate,
)
from flightdeck.agent.tools._sandbox import command_env, egress_proxy, sandbox_argv

if TYPE_CHECKING:
    from flightdeck.guard import EgressProxy

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
# Runs the egress relay inside the sandbox (network = [hosts]).
PYTHON = "/usr/bin/python3"
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        await proc.wait()


class _Launch(msgspec.Struct):
    argv: list[str]
    env: dict[str, str]
    proxy: EgressProxy | None = None


def _refuse_unconfined(ws: Workspace) -> None:
    settings = ws.sandbox
    if settings.mode == "required":
        raise ToolFailure(
            "Bash is refused: the configuration requires a sandbox "
            "([agent.sandbox] mode = required) and bubblewrap is not available here"
        )
    if settings.network != "allow":
        raise ToolFailure(
            "Bash is refused: [agent.sandbox] network limits the network, which needs "
            "bubblewrap, and it is not available here"
        )


@contextlib.asynccontextmanager
async def _launch(ws: Workspace, command: str) -> AsyncIterator[_Launch]:
    """How to run `command` per `[agent.sandbox]`; with a host allow-list, an
    egress proxy serves the sandbox for as long as the command runs."""
    settings = ws.sandbox
    shell = "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"
    bwrap = settings.bwrap()
    env = command_env(settings, os.environ, sandboxed=bwrap is not None)
    if bwrap is None:
        _refuse_unconfined(ws)
        yield _Launch([shell, "-c", command], env)
        return
    inner = [shell, "-c", command]
    if not isinstance(settings.network, tuple):
        net = settings.network == "allow"
        yield _Launch(sandbox_argv(bwrap, ws.root, inner, env=env, writable=True, network=net), env)
        return
    if not os.path.exists(PYTHON):
        raise ToolFailure(f"[agent.sandbox] network = [hosts] needs {PYTHON} for its relay")
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="flightdeck-egress-"))
    proxy = egress_proxy(settings.network)
    try:
        await proxy.start(folder / "egress.sock")
        url = f"http://127.0.0.1:{proxy.PORT}"
        env = {
            **env,
            **{k: url for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")},
        }
        argv = sandbox_argv(
            bwrap,
            ws.root,
            [PYTHON, "-c", proxy.FORWARDER, *inner],
            env=env,
            writable=True,
            network=False,
            binds=[(str(folder / "egress.sock"), proxy.SOCKET_IN_SANDBOX)],
        )
        yield _Launch(argv, env, proxy)
    finally:
        await proxy.close()
        shutil.rmtree(folder, ignore_errors=True)


async def _run(launch: _Launch, ws: Workspace, timeout_ms: int) -> tuple[int, bytes, bytes]:
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *launch.argv,
            cwd=ws.root,
            env=launch.env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # its own process group, killed as a whole
        )
    )
    try:
        proc = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        # Stopped while starting: the process exists, so its group must go too.
        await _kill_group(await spawn)
        raise
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout_ms / 1000)
    except TimeoutError:
        await _kill_group(proc)
        raise ToolFailure(f"Command timed out after {timeout_ms} ms and was killed") from None
    except BaseException:
        await _kill_group(proc)
        raise
    code = proc.returncode if proc.returncode is not None else -1
    # The shell exited; anything it left running in its group goes too.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    return code, out, err


def bash_call(args: dict[str, Any]) -> tuple[str, int]:
    """A Bash call's command and timeout (ms), checked and clamped."""
    command = arg_str(args, "command")
    timeout_ms = arg_int(args, "timeout", DEFAULT_TIMEOUT_MS) or DEFAULT_TIMEOUT_MS
    if "\x00" in command:
        raise ToolFailure("argument command contains a NUL byte")
    return command, min(max(timeout_ms, 1), MAX_TIMEOUT_MS)


# How a command is run (argv, environment, egress proxy) per `[agent.sandbox]`,
# for a party that runs it elsewhere (an ACP client's terminal).
bash_launch = _launch


class BashTool:
    name = "Bash"
    category: Category = "exec"
    description = (
        "Run a shell command (bash) in the workspace directory. `timeout` is in milliseconds "
        f"(default {DEFAULT_TIMEOUT_MS}, at most {MAX_TIMEOUT_MS}). Returns the exit code, "
        "stdout and stderr."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command to run"},
            "timeout": {"type": "integer", "description": "Timeout in milliseconds"},
        },
        "required": ["command"],
    }

    def summary(self, args: dict[str, Any]) -> str:
        return f"Run: {args.get('command', '?')}"

    async def run(self, args: dict[str, Any], ws: Workspace) -> ToolOutput:
        command, timeout_ms = bash_call(args)
        async with _launch(ws, command) as launch:
            code, out, err = await _run(launch, ws, timeout_ms)
        text = f"exit code: {code}"
        stdout = out.decode("utf-8", errors="replace")
        stderr = err.decode("utf-8", errors="replace")
        if stdout:
            text += f"\nstdout:\n{stdout.rstrip()}"
        if stderr:
            text += f"\nstderr:\n{stderr.rstrip()}"
        if launch.proxy is not None and launch.proxy.denied:
            refused = ", ".join(sorted(set(launch.proxy.denied)))
            text += f"\nnetwork: refused {refused} (not in [agent.sandbox] network)"
        return ToolOutput(truncate(text), status="success" if code == 0 else "error")
