"""OAuth sign-in to a streamable-HTTP MCP server, through the real
`flightdeck agent --json-stream` process and a real loopback MCP server with
the SDK's server-side auth (`servers/oauth_server.py`). The test plays the
browser: it follows the surfaced sign-in URL with httpx; the authorization
server approves at once and redirects to the agent's loopback callback."""

from __future__ import annotations

import json
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
import pytest

from tests.agent._process import FLIGHTDECK, AgentProcess
from tests.agent_ext._common import anthropic, authorize, make_ws, msg, oauth_server, of_type
from tests.fakes import FakeLLMServer, ToolCall, Turn


@pytest.fixture
def guarded() -> Iterator[str]:
    with oauth_server() as url:
        yield url


@pytest.fixture
def llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def toml(url: str) -> str:
    return f"[mcp.servers.guarded]\nurl = {url!r}\n"


def with_query(url: str, **changes: str) -> str:
    split = urlsplit(url)
    query = {k: v[0] for k, v in parse_qs(split.query).items()}
    query.update(changes)
    for key in [k for k, v in query.items() if v == ""]:
        del query[key]
    return split._replace(query=urlencode(query)).geturl()


def stats_call(llm: FakeLLMServer, call_id: str) -> None:
    llm.add(Turn(tool_calls=[ToolCall("mcp__guarded__stats", {}, id=call_id)]), Turn(text="ok"))


def run_stats(agent: AgentProcess, msg_id: str) -> str:
    agent.send(msg(msg_id, "stats"))
    result = of_type(agent.until("stream_end"), "tool_result")[0]
    assert result["status"] == "success", result
    return str(result["output"])


def token_files(home: Path) -> list[Path]:
    return sorted((home / "data" / "mcp-auth").glob("*.json"))


def test_sign_in_once_then_the_token_is_reused_and_refreshed(
    guarded: str, llm: FakeLLMServer, tmp_path: Path, fd_home: Path
) -> None:
    """First start: `mcp_auth_required` with the URL before `ready`; after the
    browser's round trip the server's tools work. The token file is 0600 in
    a 0700 folder, and no other file under the home holds the tokens. The
    second start reuses the token without a sign-in; after the token
    expires, the third refreshes it, again without a sign-in (the server
    counts one sign-in in all)."""
    ws = make_ws(tmp_path / "ws", toml(guarded))
    stats_call(llm, "s1")
    stats_call(llm, "s3")
    with anthropic(llm, ws, "--auto-approve") as agent:
        event = agent.next()
        assert event["type"] == "mcp_auth_required"
        assert event["name"] == "guarded"
        url = event["url"]
        assert parse_qs(urlsplit(url).query)["code_challenge_method"] == ["S256"]
        answer = httpx2.get(authorize(url), timeout=10)
        assert answer.status_code == 200 and "Signed in" in answer.text
        ready = agent.until("ready")[-1]
        server = ready["capabilities"]["mcp_servers"]["guarded"]
        assert server["connected"] is True and "mcp__guarded__stats" in server["tools"]
        assert run_stats(agent, "m1") == "refreshes=0 registrations=1 sign_ins=1"
        # single use: the listener is gone once the sign-in is done
        with pytest.raises(httpx2.TransportError):
            httpx2.get(authorize(url), timeout=5)

    [path] = token_files(fd_home)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    saved = json.loads(path.read_text())
    assert saved["server_url"] == guarded
    secrets = [saved["tokens"]["access_token"], saved["tokens"]["refresh_token"]]
    secrets += [saved["client_info"]["client_id"]]
    for other in fd_home.rglob("*"):
        if other.is_file() and other != path:
            data = other.read_bytes()
            assert not any(s.encode() in data for s in secrets), other

    with anthropic(llm, ws, "--auto-approve") as agent:
        ready = agent.next()
        assert ready["type"] == "ready"  # no sign-in asked
        assert ready["capabilities"]["mcp_servers"]["guarded"]["connected"] is True
    assert json.loads(path.read_text()) == saved  # the same token, not a new one

    saved["expires_at"] = time.time() - 60  # the access token has expired
    path.write_text(json.dumps(saved))
    with anthropic(llm, ws, "--auto-approve") as agent:
        assert agent.next()["type"] == "ready"
        assert run_stats(agent, "m3") == "refreshes=1 registrations=1 sign_ins=1"
    refreshed = json.loads(path.read_text())
    assert refreshed["tokens"]["access_token"] != saved["tokens"]["access_token"]
    assert refreshed["expires_at"] > time.time()


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"state": "forged"}, "mcp.auth_state"),
        ({"code": "", "error": "access_denied"}, "mcp.auth_refused"),
    ],
)
def test_a_mismatched_state_or_a_refusal_is_an_error_with_a_code(
    change: dict[str, str], code: str, guarded: str, llm: FakeLLMServer, tmp_path: Path
) -> None:
    """The agent still starts; the server is reported unavailable with the
    code, in `ready` and in an `info`; no tools of it are offered."""
    ws = make_ws(tmp_path / "ws", toml(guarded))
    with anthropic(llm, ws) as agent:
        event = agent.next()
        assert event["type"] == "mcp_auth_required"
        answer = httpx2.get(with_query(authorize(event["url"]), **change), timeout=10)
        assert answer.status_code in (200, 400)
        events = agent.until("ready")
        server = events[-1]["capabilities"]["mcp_servers"]["guarded"]
        assert server["connected"] is False and server["error_code"] == code
        assert f"[{code}]" in server["error"] and "guarded" in server["error"]
        info = agent.next()
        assert info["type"] == "info" and f"[{code}]" in info["message"]
        agent.close_stdin()
        assert agent.wait() == 0
        assert "Traceback" not in agent.stderr()


def test_no_client_to_sign_in_is_an_error_with_a_code(guarded: str, tmp_path: Path) -> None:
    """`--list-tools` has no host to show a URL to: the server is reported
    with `mcp.auth_required`, never a traceback."""
    ws = make_ws(tmp_path / "ws", toml(guarded))
    done = subprocess.run(
        [FLIGHTDECK, "agent", "--list-tools", "--workspace", str(ws), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    report = json.loads(done.stdout)
    assert report["mcp_servers"]["guarded"]["connected"] is False
    assert report["mcp_servers"]["guarded"]["error_code"] == "mcp.auth_required"
    assert any("[mcp.auth_required]" in p for p in report["problems"])
