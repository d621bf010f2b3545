"""Starting the egress relay from the host inside a sandbox's network namespace.

A step that runs in an image cannot count on a python3 in it for the relay
that gives the tool `127.0.0.1:3128`. Instead bubblewrap is started with
`--info-fd` (it reports the sandbox's pid once the namespaces exist) and
`--block-fd` (it waits before running the tool); the host's own interpreter
then joins only that network namespace (util-linux `nsenter`, through the
sandbox's user namespace when it has its own), listens there and relays to
the proxy's socket on the host; once it says "ready" the tool is released.
The relay sees the host's files but runs flightdeck's code only.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path

from flightdeck._json import read_json
from flightdeck.guard import EgressProxy
from flightdeck.launch.core._errors import LaunchError


def nsenter_path() -> str | None:
    return shutil.which("nsenter", path="/usr/bin:/bin:/usr/sbin:/sbin")


class Relay:
    """One relay for one bubblewrap run: `wrap` its argv, pass `pass_fds`
    when starting it, await `started()`, and `stop()` afterwards."""

    def __init__(self, socket_path: Path) -> None:
        nsenter = nsenter_path()
        if nsenter is None:
            raise LaunchError(
                "tool.no_relay",
                "this step's sealed hosts need util-linux nsenter on the host for the relay",
                hint="apt-get install -y util-linux",
            )
        self.nsenter, self.socket_path = nsenter, socket_path
        self._info_r, self._info_w = os.pipe()
        self._block_r, self._block_w = os.pipe()
        self.process: asyncio.subprocess.Process | None = None
        self._open = {self._info_r, self._info_w, self._block_r, self._block_w}

    def _close(self, fd: int) -> None:
        # Once only: a number closed twice may by then be another step's pipe.
        if fd in self._open:
            self._open.discard(fd)
            os.close(fd)

    @property
    def pass_fds(self) -> tuple[int, int]:
        return (self._info_w, self._block_r)

    def wrap(self, argv: list[str]) -> list[str]:
        info, block = str(self._info_w), str(self._block_r)
        return [argv[0], "--info-fd", info, "--block-fd", block, *argv[1:]]

    async def started(self) -> None:
        """Bubblewrap is running: read its pid, start the relay in its network
        namespace, wait for "ready", then let the tool run. If bubblewrap
        failed before reporting, nothing starts and its own error stands."""
        for fd in self.pass_fds:  # the child has its copies; EOF once it closes them
            self._close(fd)
        raw = await asyncio.to_thread(_read_pid_report, self._info_r)
        try:
            pid = int(read_json(raw.split(b"}", 1)[0] + b"}")["child-pid"])
        except (ValueError, KeyError, TypeError):
            return
        namespaces = ["-n"]
        if os.stat(f"/proc/{pid}/ns/user").st_ino != os.stat("/proc/self/ns/user").st_ino:
            namespaces = ["-U", "--preserve-credentials", "-n"]
        self.process = await asyncio.create_subprocess_exec(
            self.nsenter,
            "-t",
            str(pid),
            *namespaces,
            "--",
            sys.executable,
            "-c",
            EgressProxy.RELAY,
            str(self.socket_path),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        assert self.process.stdout is not None
        try:
            line = await asyncio.wait_for(self.process.stdout.readline(), 20)
        except TimeoutError:
            line = b""
        if line.strip() != b"ready":
            raise LaunchError(
                "tool.no_relay",
                "the egress relay could not start in the sandbox's network namespace",
                hint="nsenter must be able to join the sandbox's user and network namespaces",
            )
        os.write(self._block_w, b"go")

    async def stop(self) -> None:
        for fd in list(self._open):
            self._close(fd)
        if self.process is not None and self.process.returncode is None:
            self.process.kill()
            await self.process.wait()


def _read_pid_report(fd: int) -> bytes:
    data = b""
    while b"}" not in data:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
    return data


__all__ = ["Relay", "nsenter_path"]
