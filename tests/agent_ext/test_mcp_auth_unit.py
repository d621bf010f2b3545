"""MCP sign-in parts in memory: the token file and the loopback callback.
The whole flow, against a real OAuth MCP server, is in
test_mcp_oauth_process.py."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx2
import pytest
from mcp.shared.auth import OAuthToken

from flightdeck.agent.mcp import parse_mcp_config
from flightdeck.agent.mcp._auth_callback import Callback, SignInError, free_port, redirect_uri
from flightdeck.agent.mcp._auth_store import TokenFile, token_path
from flightdeck.agent.terminal._slash import is_command


def test_the_token_file_is_private_per_url_and_a_damaged_one_is_ignored(fd_home: Path) -> None:
    url = "http://127.0.0.1:1/mcp"
    store = TokenFile(url)
    asyncio.run(store.set_tokens(OAuthToken(access_token="secret", expires_in=60)))
    path = token_path(url)
    assert path.parent == fd_home / "data" / "mcp-auth"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left
    assert token_path("http://127.0.0.1:2/mcp") != path
    again = TokenFile(url)
    assert asyncio.run(again.get_tokens()) == OAuthToken(access_token="secret", expires_in=60)
    assert again.expires_at is not None

    path.write_text("{not json")
    assert asyncio.run(TokenFile(url).get_tokens()) is None
    path.write_text(json.dumps({"server_url": "http://elsewhere/mcp", "tokens": {"x": 1}}))
    assert asyncio.run(TokenFile(url).get_tokens()) is None


def _sign_in(
    requests: list[str], state: str = "s1", timeout: float = 10.0
) -> tuple[list[int], Any]:
    """Start a callback expecting `state`, send `requests` (paths with
    queries) to it, and return their statuses and the outcome."""

    async def go() -> tuple[list[int], Any]:
        port = free_port()
        callback = Callback("demo", port)
        await callback.start(state)
        waiting = asyncio.create_task(callback.wait(timeout))
        statuses = []
        async with httpx2.AsyncClient() as http:
            for target in requests:
                try:
                    answer = await http.get(f"http://127.0.0.1:{port}{target}")
                    statuses.append(answer.status_code)
                except httpx2.TransportError:
                    statuses.append(0)  # the listener is gone
        try:
            return statuses, await waiting
        except SignInError as exc:
            return statuses, exc

    return asyncio.run(go())


def test_the_callback_takes_one_redirect_with_the_right_state() -> None:
    statuses, outcome = _sign_in(
        ["/favicon.ico", "/callback?code=c1&state=s1", "/callback?code=c2&state=s1"]
    )
    assert statuses == [404, 200, 0]  # other paths do not count; then it is closed
    assert outcome == ("c1", "s1", None)


@pytest.mark.parametrize(
    ("target", "code"),
    [
        ("/callback?code=c1&state=forged", "mcp.auth_state"),
        ("/callback?code=c1", "mcp.auth_state"),
        ("/callback?error=access_denied&state=s1", "mcp.auth_refused"),
        ("/callback?state=s1", "mcp.auth_refused"),
    ],
)
def test_a_bad_redirect_fails_the_sign_in_with_a_code(target: str, code: str) -> None:
    _, outcome = _sign_in([target])
    assert isinstance(outcome, SignInError) and outcome.code == code
    assert f"[{code}]" in str(outcome) and "demo" in str(outcome)


def test_nobody_signing_in_is_a_timeout_with_a_code() -> None:
    _, outcome = _sign_in([], timeout=0.05)
    assert isinstance(outcome, SignInError) and outcome.code == "mcp.auth_timeout"


def test_a_port_in_use_is_an_error_with_a_code() -> None:
    async def go() -> SignInError:
        port = free_port()
        first = Callback("demo", port)
        await first.start("s")
        try:
            with pytest.raises(SignInError) as caught:
                await Callback("demo", port).start("s")
        finally:
            await first.close()
        return caught.value

    assert asyncio.run(go()).code == "mcp.auth_callback"
    assert redirect_uri(8123) == "http://127.0.0.1:8123/callback"


def test_sign_in_timeout_is_read_and_checked() -> None:
    assert parse_mcp_config({"mcp": {"sign_in_timeout": 30}}).sign_in_timeout == 30.0
    bad = parse_mcp_config({"mcp": {"sign_in_timeout": 0}})
    assert bad.sign_in_timeout == 300.0
    assert bad.problems == ("[mcp] sign_in_timeout must be a positive number, got 0",)


def test_the_terminal_chat_passes_mcp_prompt_commands_on() -> None:
    agent: Any = SimpleNamespace(mcp_prompts={"mcp__live__review": object()})
    assert not is_command("/mcp__live__review a.py", agent)
    assert is_command("/help", agent) and is_command("/mcp__live__other", agent)
    assert not is_command("//not a command", agent)


def test_a_data_dir_that_cannot_hold_the_file_is_an_error_with_a_code(fd_home: Path) -> None:
    (fd_home / "data").write_text("not a folder")
    store = TokenFile("http://127.0.0.1:1/mcp")  # unreadable: as if absent
    with pytest.raises(SignInError) as caught:
        asyncio.run(store.set_tokens(OAuthToken(access_token="secret")))
    assert caught.value.code == "mcp.auth_store" and "FLIGHTDECK_HOME" in str(caught.value)


def test_only_a_get_redirect_settles_the_sign_in_and_a_late_refusal_changes_nothing() -> None:
    async def go() -> tuple[list[int], Any]:
        port = free_port()
        callback = Callback("demo", port)
        await callback.start("s1")
        waiting = asyncio.create_task(callback.wait(10.0))
        async with httpx2.AsyncClient() as http:
            url = f"http://127.0.0.1:{port}/callback?code=c1&state=s1"
            posted = await http.post(url)  # a page's form cannot stand in for the redirect
            got = await http.get(url)
        outcome = await waiting
        callback.refuse("too late")  # declined after the browser came back: no effect
        return [posted.status_code, got.status_code], outcome

    statuses, outcome = asyncio.run(go())
    assert statuses == [404, 200] and outcome == ("c1", "s1", None)
