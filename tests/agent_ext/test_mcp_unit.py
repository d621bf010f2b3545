"""MCP in memory: configuration problems, result mapping, start-up failures
and the timeout, each server independent of the others."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_types import CallToolResult, ImageContent, ResourceLink, TextContent

from flightdeck.agent.mcp import connect_servers, map_result, parse_mcp_config, tool_name
from tests.agent_ext._common import NOTES_SERVER


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        ({"mcp": []}, "[mcp] must be a table"),
        ({"mcp": {"servers": 3}}, "[mcp.servers] must be a table"),
        ({"mcp": {"servers": {"a": 1}}}, "MCP server a: [mcp.servers.a] must be a table"),
        ({"mcp": {"servers": {"a": {}}}}, "MCP server a: give exactly one of `command`"),
        (
            {"mcp": {"servers": {"a": {"command": "x", "url": "http://h"}}}},
            "MCP server a: give exactly one of `command`",
        ),
        ({"mcp": {"servers": {"a": {"url": "ftp://h"}}}}, "MCP server a: url must be an http(s)"),
        ({"mcp": {"servers": {"a": {"command": ""}}}}, "MCP server a: command must be a non-empty"),
        (
            {"mcp": {"servers": {"a": {"command": "x", "args": "y"}}}},
            "MCP server a: args must be a list of strings",
        ),
        (
            {"mcp": {"servers": {"a": {"command": "x", "env": {"K": 1}}}}},
            "MCP server a: env must be a table of strings",
        ),
        (
            {"mcp": {"servers": {"a": {"command": "x", "cwd": 1}}}},
            "MCP server a: cwd must be a string",
        ),
        (
            {"mcp": {"connect_timeout": -1, "servers": {}}},
            "[mcp] connect_timeout must be a positive number",
        ),
    ],
)
def test_bad_mcp_config_is_a_named_problem(config: dict[str, Any], problem: str) -> None:
    parsed = parse_mcp_config(config)
    assert len(parsed.problems) == 1 and parsed.problems[0].startswith(problem)


def test_one_bad_server_does_not_hide_the_others() -> None:
    parsed = parse_mcp_config(
        {
            "mcp": {
                "connect_timeout": 3,
                "servers": {
                    "bad": {"url": 5},
                    "good": {"command": "srv", "args": ["-v"], "env": {"K": "v"}},
                    "web": {"url": "https://example.test/mcp"},
                    "off": {"command": "srv", "enabled": False},
                },
            }
        }
    )
    assert [s.name for s in parsed.servers] == ["good", "web"]
    assert parsed.servers[0].where == "srv -v" and parsed.servers[1].transport == "http"
    assert parsed.connect_timeout == 3.0 and len(parsed.problems) == 1


def test_tool_names_are_stable_and_provider_safe() -> None:
    assert tool_name("notes", "remember") == "mcp__notes__remember"
    assert tool_name("my server", "do.it/now") == "mcp__my_server__do_it_now"
    assert len(tool_name("s" * 40, "t" * 40)) == 64


def test_results_map_text_image_and_errors() -> None:
    text = map_result(
        CallToolResult(
            content=[TextContent(type="text", text="a"), TextContent(type="text", text="b")]
        )
    )
    assert (text.status, text.output, text.output_type) == ("success", "a\nb", "text")
    image = map_result(
        CallToolResult(content=[ImageContent(type="image", data="QUJD", mime_type="image/png")])
    )
    assert (image.output_type, image.output, image.media_type) == ("image", "QUJD", "image/png")
    mixed = map_result(
        CallToolResult(
            content=[
                TextContent(type="text", text="see"),
                ImageContent(type="image", data="QUJD", mime_type="image/png"),
                ResourceLink(type="resource_link", uri="file:///x", name="x"),
            ]
        )
    )
    assert mixed.output_type == "text" and "[image: image/png" in mixed.output
    assert "[resource link: file:///x]" in mixed.output
    failed = map_result(
        CallToolResult(content=[TextContent(type="text", text="no")], is_error=True)
    )
    assert failed.status == "error" and failed.output == "no"
    structured = map_result(CallToolResult(content=[], structured_content={"n": 1}))
    assert structured.output == '{"n": 1}'


def test_missing_server_is_reported_while_a_good_one_connects(tmp_path: Path) -> None:
    """A server whose command is missing is reported; the good server's tools
    are available, and unavailable once the connections are closed."""
    config = parse_mcp_config(
        {
            "mcp": {
                "connect_timeout": 20,
                "servers": {
                    "good": {"command": sys.executable, "args": [str(NOTES_SERVER)]},
                    "missing": {"command": str(tmp_path / "no-such-server")},
                },
            }
        }
    )

    async def go() -> None:
        manager = await connect_servers(config, tmp_path)
        try:
            status = {s.name: s for s in manager.statuses}
            assert status["good"].connected and "mcp__good__add" in status["good"].tools
            assert not status["missing"].connected and status["missing"].error
            assert manager.available
            problems = manager.problems()
            assert problems == [f"MCP server missing unavailable: {status['missing'].error}"]
            add = next(t for t in manager.tools if t.name == "mcp__good__add")
            out = await add.run({"a": 1, "b": 2}, None)  # type: ignore[arg-type]
            assert out.output == "3"
        finally:
            await manager.close()
        after = await add.run({"a": 1, "b": 2}, None)  # type: ignore[arg-type]
        assert after.status == "error" and "not connected" in after.output

    asyncio.run(go())


def test_server_that_never_answers_times_out(tmp_path: Path) -> None:
    """`[mcp] connect_timeout` bounds start-up: a server that never speaks MCP
    is reported as timed out."""
    mute = {"command": sys.executable, "args": ["-c", "import time; time.sleep(60)"]}
    config = parse_mcp_config({"mcp": {"connect_timeout": 0.5, "servers": {"mute": mute}}})

    async def go() -> None:
        manager = await connect_servers(config, tmp_path)
        assert not manager.available and manager.tools == []
        assert [(s.name, s.connected, s.error) for s in manager.statuses] == [
            ("mute", False, "no answer within 0.5 s ([mcp] connect_timeout)")
        ]
        await manager.close()

    asyncio.run(go())


def test_http_headers_from_config_with_environment_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`headers` reach a streamable HTTP server (`${NAME}` from the environment);
    without them the same server refuses the connection, reported, not fatal."""
    import subprocess

    proc = subprocess.Popen(
        [sys.executable, str(NOTES_SERVER), "--http", "--token", "s3cret"],
        stdout=subprocess.PIPE,
        cwd=tmp_path,
    )
    try:
        assert proc.stdout is not None
        url = f"http://127.0.0.1:{int(proc.stdout.readline().split()[1])}/mcp"
        monkeypatch.setenv("NOTES_TOKEN", "s3cret")
        config = parse_mcp_config(
            {
                "mcp": {
                    "servers": {
                        "authed": {
                            "url": url,
                            "headers": {"Authorization": "Bearer ${NOTES_TOKEN}"},
                        },
                        "anonymous": {"url": url},
                    }
                }
            }
        )

        async def go() -> None:
            manager = await connect_servers(config, tmp_path)
            try:
                status = {s.name: s for s in manager.statuses}
                assert status["authed"].connected and not status["anonymous"].connected
                add = next(t for t in manager.tools if t.name == "mcp__authed__add")
                assert (await add.run({"a": 2, "b": 2}, None)).output == "4"  # type: ignore[arg-type]
            finally:
                await manager.close()

        asyncio.run(go())
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


def test_bad_headers_are_a_named_problem() -> None:
    parsed = parse_mcp_config({"mcp": {"servers": {"w": {"url": "http://h", "headers": {"A": 1}}}}})
    assert parsed.problems == ("MCP server w: headers must be a table of strings",)


def test_a_managers_tools_follow_the_server_and_unasked_elicitations_decline(
    tmp_path: Path,
) -> None:
    """Without a session: the manager's tools and status follow a changed
    list, the listener hears which went and came, and an elicitation with
    no one to ask is declined (the call still answers)."""
    live = Path(__file__).parent / "servers" / "live_server.py"
    config = parse_mcp_config(
        {"mcp": {"servers": {"live": {"command": sys.executable, "args": [str(live)]}}}}
    )
    heard: list[tuple[str, list[str], list[str]]] = []

    async def scenario() -> tuple[list[str], tuple[str, ...], str]:
        manager = await connect_servers(config, tmp_path)
        try:
            manager.follow(
                lambda server, old, new: heard.append(
                    (server, [t.name for t in old], [t.name for t in new])
                )
            )
            tools = {t.remote.name: t for t in manager.tools}
            declined = await tools["confirm"].connection.call("confirm", {"question": "?"})
            await tools["unlock"].connection.call("unlock", {})
            for _ in range(200):  # the listing runs in a task of its own
                if heard:
                    break
                await asyncio.sleep(0.02)
            text = declined.content[0]
            assert isinstance(text, TextContent)
            return [t.remote.name for t in manager.tools], manager.statuses[0].tools, text.text
        finally:
            await manager.close()

    names, status_tools, answer = asyncio.run(scenario())
    assert answer == "decline"
    assert "vault" in names and "unlock" not in names
    assert tool_name("live", "vault") in status_tools
    [(server, old, new)] = heard[:1]
    assert server == "live" and tool_name("live", "unlock") in old
    assert tool_name("live", "vault") in new and tool_name("live", "unlock") not in new
