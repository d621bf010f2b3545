"""The terminal chat through a pseudo-terminal (issue 13 item 7): slash
commands are handled locally, Ctrl-C cancels a reply and at the prompt
leaves, a resumed session shows its history."""

from __future__ import annotations

import contextlib
import os
import pty
import re
import select
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent._process import FLIGHTDECK
from tests.fakes import FakeLLMServer, Turn

_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


class Terminal:
    """`flightdeck agent` (no --json-stream) on a pty, read with a deadline."""

    def __init__(self, ws: Path, server: FakeLLMServer, *extra: str) -> None:
        argv = [FLIGHTDECK, "agent", "--base-url", server.base_url, "--workspace", str(ws)]
        env = {**os.environ, "ANTHROPIC_API_KEY": "k", "TERM": "xterm", "COLUMNS": "120"}
        pid, fd = pty.fork()
        if pid == 0:  # the child: the pty is its controlling terminal
            os.execve(argv[0], [*argv, *extra], env)
        self.pid, self.fd = pid, fd
        self.seen = b""
        self.pos = 0  # where the next expect starts looking

    def text(self) -> str:
        return _ANSI.sub(b"", self.seen).decode(errors="replace")

    def expect(self, needle: str, timeout: float = 30.0) -> str:
        """Read until `needle` appears after the previous match; return the
        text from there up to and including it."""
        start = self.pos
        deadline = time.monotonic() + timeout
        while (found := self.text().find(needle, start)) < 0:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{needle!r} not shown; got:\n{self.text()[start:]}")
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:  # the child exited
                    chunk = b""
                if not chunk:
                    raise AssertionError(f"exited before {needle!r}:\n{self.text()[start:]}")
                self.seen += chunk
        self.pos = found + len(needle)
        return self.text()[start : self.pos]

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def wait(self, timeout: float = 30.0) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            with_data, _, _ = select.select([self.fd], [], [], 0.1)
            if with_data:
                with contextlib.suppress(OSError):
                    self.seen += os.read(self.fd, 4096)
        raise AssertionError("the chat did not exit")

    def close(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(self.fd)


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def test_slash_commands_are_local_and_ctrl_c_cancels_then_leaves(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.add(Turn(text="z" * 300, delta_size=1, delta_delay=0.05), Turn(text="short answer"))
    term = Terminal(tmp_path, server, "--session-id", "chat1")
    try:
        term.expect("you ›")
        term.type("/help\n")
        assert "/resume" in term.expect("you ›")
        term.type("/model claude-other\n")
        assert "claude-other" in term.expect("you ›")
        term.type("/nope\n")
        assert "unknown command" in term.expect("you ›")
        assert server.requests == []  # nothing was sent to the model
        term.type("write a lot\n")
        term.expect("zzz")
        term.type("\x03")  # Ctrl-C during the reply: cancel it, keep the chat
        assert "cancelled" in term.expect("you ›")
        term.type("again\n")
        term.expect("short answer")
        term.expect("you ›")
        assert server.requests[-1]["model"] == "claude-other"
        term.type("\x03")  # Ctrl-C at the prompt: leave
        assert term.wait() == 0
    finally:
        term.close()


def test_a_resumed_session_shows_its_history(server: FakeLLMServer, tmp_path: Path) -> None:
    server.add(Turn(text="The capital is Paris."))
    term = Terminal(tmp_path, server, "--session-id", "geo")
    try:
        term.expect("you ›")
        term.type("capital of France?\n")
        term.expect("Paris")
        term.expect("you ›")
        term.type("/exit\n")
        assert term.wait() == 0
    finally:
        term.close()
    term = Terminal(tmp_path, server, "--resume", "latest")
    try:
        shown = term.expect("you ›")
        assert "capital of France?" in shown and "The capital is Paris." in shown
        term.type("/sessions\n")
        assert "geo" in term.expect("you ›")
        term.type("/clear\n")
        assert "new conversation" in term.expect("you ›")
        term.type("\x04")  # Ctrl-D
        assert term.wait() == 0
    finally:
        term.close()
