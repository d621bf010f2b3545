"""`flightdeck agent --acp`, driven by the `acp` library's client, against the
real llama.cpp server: a prompt answered in streamed message chunks."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest

from tests.agent_acp._harness import Agent
from tests.local_model.conftest import LocalServer, local_env


@pytest.fixture(scope="module")
def acp_agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Agent]:
    home = tmp_path_factory.mktemp("acphome")
    running = Agent({**local_env(), "FLIGHTDECK_HOME": str(home)}, "--provider", "local")
    try:
        yield running
    finally:
        running.close()


def trusted_workspace(root: Path, server: LocalServer, home: Path) -> Path:
    """The server's address is a widening setting: the user trusts the folder."""
    from flightdeck.config import set_trust

    root.mkdir(parents=True)
    (root / "flightdeck.toml").write_text(
        f'[agent]\nmax_tokens = 24\n[providers.local]\nbase_url = "{server.v1}"\n'
    )
    with mock.patch.dict(os.environ, {"FLIGHTDECK_HOME": str(home)}):
        set_trust(root)
    return root


def test_a_prompt_is_answered_in_streamed_chunks(
    acp_agent: Agent, llama: LocalServer, tmp_path: Path
) -> None:
    ws = trusted_workspace(tmp_path / "ws", llama, acp_agent.home)
    session = acp_agent.call(acp_agent.conn.new_session(cwd=str(ws), mcp_servers=[]))
    reply = acp_agent.call(
        acp_agent.conn.prompt(
            session_id=session.session_id,
            prompt=[{"type": "text", "text": "Write one sentence about the moon."}],
        ),
        120,
    )
    assert reply.stop_reason in ("end_turn", "max_tokens")
    log = acp_agent.client.log(session.session_id)
    chunks = [u for u in log.updates if u.session_update == "agent_message_chunk"]
    assert len(chunks) >= 2 and log.text().strip()


def test_cancel_mid_stream_ends_the_prompt_as_cancelled(
    acp_agent: Agent, llama: LocalServer, tmp_path: Path
) -> None:
    ws = trusted_workspace(tmp_path / "ws", llama, acp_agent.home)
    (ws / "flightdeck.toml").write_text(
        (ws / "flightdeck.toml").read_text().replace("max_tokens = 24", "max_tokens = 400")
    )
    session = acp_agent.call(acp_agent.conn.new_session(cwd=str(ws), mcp_servers=[]))
    sid = session.session_id
    log = acp_agent.client.log(sid)
    ask = [{"type": "text", "text": "Tell a long story about a lighthouse."}]

    async def go() -> str:
        running = asyncio.create_task(acp_agent.conn.prompt(session_id=sid, prompt=ask))
        while "agent_message_chunk" not in log.kinds():
            await asyncio.sleep(0.02)
        await acp_agent.conn.cancel(session_id=sid)
        return str((await running).stop_reason)

    assert acp_agent.call(go(), 120) == "cancelled"
    chunks = len(log.updates)
    assert chunks < 400  # cut short, not run to its limit
