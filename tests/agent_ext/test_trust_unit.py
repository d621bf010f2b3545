"""The trust rule applied at start-up (`load_extensions`), without a process:
which servers are the workspace's, what is held, what the notice says."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from flightdeck.agent.engine._settings import AgentSettings
from flightdeck.agent.extensions._load import load_extensions, workspace_starts
from flightdeck.agent.mcp import parse_mcp_config
from flightdeck.config import Trust, config_dir, load_config, set_trust
from tests.agent_ext.test_workspace_trust_process import probe_toml


def test_servers_named_or_changed_by_the_workspace_file_are_the_workspaces(
    tmp_path: Path,
) -> None:
    user = {"mcp": {"servers": {"mine": {"command": "a"}, "shared": {"command": "b"}}}}
    layer = {"mcp": {"servers": {"shared": {"args": ["x"]}, "theirs": {"command": "c"}}}}
    merged = {
        "mcp": {
            "servers": {
                "mine": {"command": "a"},
                "shared": {"command": "b", "args": ["x"]},
                "theirs": {"command": "c"},
            }
        }
    }
    origins = {s.name: s.origin for s in parse_mcp_config(merged, layer).servers}
    assert origins == {"mine": "user", "shared": "workspace", "theirs": "workspace"}
    assert {s.origin for s in parse_mcp_config(user).servers} == {"user"}
    for odd in ({"mcp": 1}, {"mcp": {"servers": 1}}, {}):
        assert {s.origin for s in parse_mcp_config(user, odd).servers} == {"user"}


def loaded(ws: Path, trust: Trust | None = None, host: bool = False) -> tuple[list[str], dict]:  # type: ignore[type-arg]
    settings = AgentSettings(workspace=ws, trust_workspace=host)
    config = load_config(ws)

    async def go() -> tuple[list[str], dict]:  # type: ignore[type-arg]
        ext = await load_extensions(
            settings, config.data, workspace_layer=config.project, trust=trust
        )
        try:
            statuses = {s.name: s for s in ext.mcp.statuses} if ext.mcp else {}
            return list(ext.problems), statuses
        finally:
            await ext.close()

    return asyncio.run(go())


def repo(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "repo"
    (ws / ".drivers").mkdir(parents=True)
    ran = tmp_path / "ran"
    (ws / "flightdeck.toml").write_text(probe_toml("probe", ran))
    return ws, ran


def test_an_untrusted_workspace_holds_its_servers_and_drivers(tmp_path: Path) -> None:
    ws, ran = repo(tmp_path)
    mine = tmp_path / "mine-ran"
    config_dir().mkdir(parents=True)
    (config_dir() / "config.toml").write_text(probe_toml("mine", mine))
    assert workspace_starts(ws) == (
        [
            f"MCP server probe ({sys.executable} -c {probe_command(ran)})",
            f"the SDK drivers in {ws / '.drivers'} (Python code)",
        ],
        [],
    )
    problems, statuses = loaded(ws)
    assert not ran.exists() and mine.exists()
    assert statuses["probe"].code == "workspace.untrusted" and not statuses["probe"].connected
    assert statuses["mine"].code != "workspace.untrusted"
    notices = [p for p in problems if "is not trusted" in p]
    assert len(notices) == 1 and "MCP server probe" in notices[0] and ".drivers" in notices[0]
    assert not any(p.startswith("MCP server probe unavailable") for p in problems)


def probe_command(marker: Path) -> str:
    return f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')"


def test_trusted_by_any_of_the_three_ways_starts_them(tmp_path: Path) -> None:
    for how in ("person", "host", "config"):
        ws, ran = repo(tmp_path / how)
        if how == "config":
            set_trust(ws)
        trust = Trust(True, "person") if how == "person" else None
        problems, statuses = loaded(ws, trust, host=how == "host")
        assert ran.exists(), how
        assert statuses["probe"].code != "workspace.untrusted"
        assert not any("is not trusted" in p for p in problems)
        assert workspace_starts(ws, host=how == "host") == (
            ([], []) if how != "person" else workspace_starts(ws)
        )


def test_a_workspace_with_nothing_to_start_says_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    ws.mkdir()
    (ws / "flightdeck.toml").write_text("[mcp]\nconnect_timeout = 3\n")
    problems, statuses = loaded(ws)
    assert problems == [] and statuses == {}
    assert workspace_starts(ws) == ([], [])


def test_an_unreadable_user_config_trusts_nothing_and_says_why(tmp_path: Path) -> None:
    ws, ran = repo(tmp_path)
    config_dir().mkdir(parents=True)
    (config_dir() / "config.toml").write_text("[trust]\nworkspaces = 'all'\n")
    problems, _ = loaded(ws)
    assert not ran.exists()
    assert any("workspace trust not read" in p for p in problems)


def test_servers_alone_or_drivers_alone_are_decided_the_same_way(tmp_path: Path) -> None:
    servers_only = tmp_path / "servers"
    servers_only.mkdir()
    ran = tmp_path / "servers-ran"
    (servers_only / "flightdeck.toml").write_text(probe_toml("probe", ran))
    drivers_only = tmp_path / "drivers"
    (drivers_only / ".drivers").mkdir(parents=True)
    problems, statuses = loaded(drivers_only)
    assert statuses == {}
    [notice] = [p for p in problems if "is not trusted" in p]
    assert ".drivers" in notice and "MCP server" not in notice
    problems, statuses = loaded(servers_only)
    assert not ran.exists() and statuses["probe"].code == "workspace.untrusted"
    set_trust(servers_only)
    problems, statuses = loaded(servers_only)
    assert ran.exists() and not any("is not trusted" in p for p in problems)


def test_a_workspace_file_that_does_not_read_asks_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "broken"
    ws.mkdir()
    (ws / "flightdeck.toml").write_text("[mcp.servers.x\n")
    assert workspace_starts(ws) == ([], [])


def test_ignored_settings_alone_are_named_with_how_to_trust(tmp_path: Path) -> None:
    """Settings the screening ignored (config/_screen.py) are named in the
    one notice, with no server or driver held; an unreadable trust table is
    said too."""
    ws = tmp_path / "settings-only"
    ws.mkdir()
    settings = AgentSettings(workspace=ws, ignored_settings=("[agent] mode",))

    async def problems() -> list[str]:
        ext = await load_extensions(settings, {})
        return list(ext.problems)

    [notice] = asyncio.run(problems())
    assert "these settings of its own files were ignored" in notice and "[agent] mode" in notice
    assert "started nothing" not in notice
    config_dir().mkdir(parents=True)
    (config_dir() / "config.toml").write_text("[trust]\nworkspaces = 'all'\n")
    found = asyncio.run(problems())
    assert any("workspace trust not read" in p for p in found)
    assert any("[agent] mode" in p for p in found)
    plain = AgentSettings(workspace=ws)  # nothing to decide: the trust table is not read
    assert asyncio.run(load_extensions(plain, {})).problems == []
