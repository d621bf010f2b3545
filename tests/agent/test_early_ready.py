"""A plain `agent --json-stream` start writes `ready` before the engine is
loaded (agent/stream/_early.py). Through the real process: the same bytes as the
usual path for the same flags, environment and config; the same `error`
line and exit code for a setup failure; nothing a host sends meanwhile is
lost or reordered; a stop signal before the engine serves still ends the
session cleanly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent._process import FLIGHTDECK

KEY = {"ANTHROPIC_API_KEY": "test"}


def _run(
    args: list[str], ws: Path, home: Path, env: dict[str, str], send: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    full = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    full.update(FLIGHTDECK_HOME=str(home), **env)
    return subprocess.run(
        [FLIGHTDECK, "agent", "--json-stream", "--workspace", str(ws), *args],
        input=send,
        capture_output=True,
        env=full,
        timeout=60,
        check=False,
    )


def _both(
    tmp_path: Path,
    args: list[str],
    env: dict[str, str],
    config: str = "",
    data_file: bool = False,
    trusted: bool = True,
) -> tuple[subprocess.CompletedProcess[bytes], subprocess.CompletedProcess[bytes]]:
    """The same start, plain (early `ready`) and through the usual path (an
    empty AionUi compat file in the workspace, which changes no setting),
    each with a home of its own, whose config trusts the workspace when
    `trusted` (else its settings are screened: config/_screen.py)."""
    runs = []
    for name, usual in (("plain", False), ("usual", True)):
        ws, home = tmp_path / name / "ws", tmp_path / name / "home"
        ws.mkdir(parents=True)
        (home / "config").mkdir(parents=True)
        if trusted:
            (home / "config" / "config.toml").write_text(f"[trust]\nworkspaces = [{str(ws)!r}]\n")
        (ws / "flightdeck.toml").write_text(config)
        if usual:
            (ws / ".aionrs.toml").write_text("")
        if data_file:  # the session store cannot be created
            (home / "data").write_text("")
        runs.append(_run(args, ws, home, env, b'{"type":"ping"}\n'))
    return runs[0], runs[1]


@pytest.mark.parametrize(
    ("args", "config"),
    [
        (["--session-id", "s1"], ""),
        (["--session-id", "s1", "--auto-approve", "--provider", "openai"], ""),
        ([], "[agent]\nsessions = false\nthinking_budget = 2048\nmode = 'auto_edit'\n"),
        (["--session-id", "s1"], "[agent.sandbox]\nmode = 'off'\n"),
        (["--session-id", "s1"], "[agent]\nsandbox = 'required'\n"),
    ],
)
def test_the_early_lines_equal_the_usual_paths(
    tmp_path: Path, args: list[str], config: str
) -> None:
    env = {**KEY, "OPENAI_API_KEY": "test"}
    plain, usual = _both(tmp_path, args, env, config)
    assert plain.returncode == usual.returncode == 0
    assert plain.stdout.splitlines()[0].startswith(b'{"type":"ready"')
    # every line: `ready`, the sandbox notice when there is one, `pong`
    assert plain.stdout == usual.stdout
    assert b"differs" not in plain.stderr  # the engine's own check of the early line


def test_an_untrusted_workspaces_settings_are_screened_alike_on_both_paths(
    tmp_path: Path,
) -> None:
    """The plain start decides trust before `ready` as the usual path does:
    the same `ready` (the user's mode, not the workspace's yolo), the same
    notice after it."""
    config = "[agent]\nmode = 'yolo'\n[agent.sandbox]\nmode = 'off'\n"
    plain, usual = _both(tmp_path, ["--session-id", "s1"], KEY, config, trusted=False)
    assert plain.returncode == usual.returncode == 0
    assert plain.stdout == usual.stdout.replace(b"/usual/", b"/plain/")
    ready = json.loads(plain.stdout.splitlines()[0])
    assert ready["capabilities"]["current_mode"] == "default"
    assert b"[agent] mode; [agent.sandbox] mode" in plain.stdout
    assert b"differs" not in plain.stderr


@pytest.mark.parametrize(
    ("args", "env", "config"),
    [
        ([], {}, ""),  # no API key
        (["--session-id", "bad id"], KEY, ""),
        (["--session-id", "latest"], KEY, ""),
        (["--session-id", "s1"], KEY, "[agent]\nsessions = false\n"),
        (["--provider", "nope"], KEY, ""),
        ([], KEY, "[agent]\nmax_turns = 0\n"),
        ([], KEY, "[agent\n"),  # not TOML: the usual path reports it
    ],
)
def test_setup_errors_are_the_same_error_line_and_exit_code(
    tmp_path: Path, args: list[str], env: dict[str, str], config: str
) -> None:
    plain, usual = _both(tmp_path, args, env, config)
    assert plain.returncode == usual.returncode == 1
    assert plain.stdout == usual.stdout.replace(b"/usual/", b"/plain/")
    assert json.loads(plain.stdout)["error"]["code"] == "config_error"
    assert b'"type":"ready"' not in plain.stdout


def test_a_session_store_error_is_the_same_error_line(tmp_path: Path) -> None:
    plain, usual = _both(tmp_path, [], KEY, data_file=True)
    assert plain.returncode == usual.returncode == 1
    assert plain.stdout == usual.stdout.replace(b"/usual/", b"/plain/")
    assert b"cannot use the session store" in plain.stdout


def test_lines_sent_before_the_engine_is_loaded_keep_their_order(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    # all written at once, before `ready`: answered in order once the engine reads
    send = b"".join(
        [
            b'{"type":"ping"}\n',
            b'{"type":"set_mode","mode":"yolo"}\n',
            b"not json\n",
            b'{"type":"ping"}\n',
            b'{"type":"set_mode","mode":"default"}\n',
        ]
    )
    done = _run([], ws, home, KEY, send)
    assert done.returncode == 0
    events = [json.loads(line) for line in done.stdout.splitlines()]
    events = [e for e in events if e["type"] != "info"]  # the sandbox notice, if any
    assert [e["type"] for e in events] == [
        "ready",
        "pong",
        "config_changed",
        "error",
        "pong",
        "config_changed",
    ]
    assert events[2]["capabilities"]["current_mode"] == "yolo"
    assert events[5]["capabilities"]["current_mode"] == "default"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_right_after_ready_ends_the_session_cleanly(
    tmp_path: Path, sig: signal.Signals
) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    proc = subprocess.Popen(
        [FLIGHTDECK, "agent", "--json-stream", "--workspace", str(ws)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "FLIGHTDECK_HOME": str(home), **KEY},
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith(b'{"type":"ready"')
        proc.send_signal(sig)  # most likely while the engine is still loading
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)


def _probe_line(code: str, tmp_path: Path) -> str:
    """Run `code` (a probe that patches the agent, then starts a plain
    `agent --json-stream`) and return the first line it printed to stderr,
    once `ready` was written."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        cwd=tmp_path,
        env={**os.environ, "FLIGHTDECK_HOME": str(tmp_path), **KEY},
        timeout=60,
        check=False,
    )
    assert done.stdout.startswith(b'{"type":"ready"')
    return done.stderr.decode().splitlines()[0]


def test_the_plain_path_needs_neither_the_engine_nor_pydantic(tmp_path: Path) -> None:
    """Nor tomllib when there is no config file to read, nor platformdirs when
    FLIGHTDECK_HOME says where the user directories are."""
    code = (
        "import sys\n"
        "from flightdeck.agent.stream import _early\n"
        "write = _early.write_line\n"
        "def first(out, line):\n"
        "    print(sorted(m for m in ('pydantic', 'asyncio', 'click',"
        " 'flightdeck.agent.engine._session', 'flightdeck.agent.protocol._models',"
        " 'tomllib', 'platformdirs') if m in sys.modules),"
        " file=sys.stderr, flush=True)\n"
        "    write(out, line)\n"
        "_early.write_line = first\n"
        "from flightdeck.cli import main\n"
        "main(['agent', '--json-stream'])\n"
    )
    assert _probe_line(code, tmp_path) == "[]"


def test_only_a_plain_start_is_prepared_early(tmp_path: Path) -> None:
    from flightdeck.agent.stream._early import is_plain

    ws = tmp_path / "ws"
    ws.mkdir()
    assert is_plain({"workspace": str(ws)})
    assert is_plain({"workspace": str(ws), "session_id": "s"})
    assert not is_plain({"workspace": str(ws), "resume": "latest"})
    assert not is_plain({"workspace": str(tmp_path / "missing")})
    (ws / "flightdeck.toml").write_text("[mcp.servers.x]\ncommand = 'x'\n")
    assert not is_plain({"workspace": str(ws)})
    (ws / "flightdeck.toml").write_text("[agent\n")
    assert not is_plain({"workspace": str(ws)})
    (ws / "flightdeck.toml").write_text("")
    for name in (".drivers", ".aionrs.toml"):
        (ws / name).mkdir()
        assert not is_plain({"workspace": str(ws)})
        (ws / name).rmdir()
    assert is_plain({"workspace": str(ws)})


def test_the_provider_client_is_prepared_beside_the_engine_import(tmp_path: Path) -> None:
    """The warm-up (httpx2, the express client and its TLS context) starts as
    soon as `ready` is out, before the engine is imported, so the trust
    store is read on another core while the engine loads."""
    code = (
        "import sys, threading\n"
        "from flightdeck.agent.stream import _early\n"
        "real = _early.early_ready\n"
        "def early(*args):\n"
        "    done = real(*args)\n"
        "    names = [t.name for t in threading.enumerate()]\n"
        "    print('flightdeck-llm-warm' in names,"
        " 'flightdeck.agent.engine._session' in sys.modules, file=sys.stderr, flush=True)\n"
        "    return done\n"
        "_early.early_ready = early\n"
        "from flightdeck.cli import main\n"
        "main(['agent', '--json-stream'])\n"
    )
    assert _probe_line(code, tmp_path) == "True False"
