"""Sessions on disk: append + fsync per step, torn tails, latest, the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from flightdeck.agent import SessionError, SessionStore
from flightdeck.agent.engine._codec import message_from_json, message_to_json
from flightdeck.llm import (
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

FD = str(Path(__file__).resolve().parents[2] / ".venv" / "bin" / "flightdeck")


def sample() -> list[Message]:
    return [
        Message("user", [TextBlock("hi"), ImageBlock("image/png", "AAAA")]),
        Message(
            "assistant",
            [
                ThinkingBlock("hmm", "sig"),
                ThinkingBlock("opaque", "", redacted=True),
                TextBlock("ok"),
                ToolUseBlock("t1", "Read", {"a": 1}),
            ],
        ),
        Message("user", [ToolResultBlock("t1", [TextBlock("out")], is_error=True)]),
    ]


def test_messages_round_trip_through_json() -> None:
    for message in sample():
        assert message_from_json(json.loads(json.dumps(message_to_json(message)))) == message


def test_steps_append_and_load(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create("s1", provider="anthropic")
    session.append_context("earlier")
    session.append_messages(sample()[:1])
    session.append_messages(sample()[1:])
    loaded = store.open("s1").load()
    assert loaded.history == sample() and loaded.context == ["earlier"] and not loaded.problems


def test_torn_last_line_is_ignored_reported_and_cut(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create("s1")
    session.append_messages(sample()[:1])
    with open(session.messages_file, "ab") as handle:
        handle.write(b'{"kind":"messages","messages":[{"role":"assis')
    loaded = session.load(repair=True)
    assert loaded.history == sample()[:1]
    assert len(loaded.problems) == 1 and "torn" in loaded.problems[0]
    assert session.messages_file.read_bytes().endswith(b"}\n")
    assert not session.load().problems


def test_session_id_that_exists_is_an_error(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    store.create("mine")
    with pytest.raises(SessionError, match="already exists"):
        store.create("mine")
    with pytest.raises(SessionError, match="invalid session id"):
        store.create("../escape")
    with pytest.raises(SessionError, match="not found"):
        store.open("nope")


def test_latest_is_the_most_recently_updated(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    a, b = store.create("a"), store.create("b")
    b.append_messages(sample()[:1])
    a.append_messages(sample()[:1])
    os.utime(b.messages_file, (time.time() - 100, time.time() - 100))
    assert store.open("latest").id == "a"
    with pytest.raises(SessionError, match="no session"):
        SessionStore(tmp_path / "empty").open("latest")


def test_sessions_cli_list_show_rm(fd_home: Path) -> None:
    store = SessionStore(fd_home / "data" / "sessions")
    session = store.create("conv-1", provider="openai", model="gpt-4o")
    session.write_meta(title="first question")
    session.append_messages(sample())
    env = dict(os.environ)

    def fd(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([FD, "sessions", *args], capture_output=True, text=True, env=env)

    listed = json.loads(fd("list", "--format", "json").stdout)
    assert [s["id"] for s in listed] == ["conv-1"] and listed[0]["model"] == "gpt-4o"
    assert "first question" in fd("list").stdout
    shown = json.loads(fd("show", "latest", "--format", "json").stdout)
    assert shown["messages"] == [message_to_json(m) for m in sample()]
    assert "-> Read" in fd("show", "conv-1").stdout
    missing = fd("show", "nope")
    assert missing.returncode == 1 and "not found" in missing.stderr
    assert fd("rm", "conv-1").returncode == 0
    assert json.loads(fd("list", "--format", "json").stdout) == []
