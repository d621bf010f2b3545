"""Agent settings: CLI > environment > project flightdeck.toml > user config.toml."""

from __future__ import annotations

from pathlib import Path

import pytest

from flightdeck.agent import SettingsError, resolve_settings
from flightdeck.agent._app import SetupError, load_settings
from flightdeck.config import config_dir


def test_precedence_cli_env_project_user(fd_home: Path, tmp_path: Path) -> None:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "config.toml").write_text(
        '[agent]\nmodel = "user-model"\nmax_turns = 5\nmax_tokens = 100\n'
        '[providers.anthropic]\nbase_url = "http://user"\n'
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "flightdeck.toml").write_text('[agent]\nmodel = "project-model"\nmax_turns = 7\n')
    flags = {"workspace": str(ws)}
    settings = load_settings(flags, {})
    assert settings.model == "project-model" and settings.max_turns == 7
    assert settings.max_tokens == 100 and settings.base_url == "http://user"
    settings = load_settings(flags, {"ANTHROPIC_BASE_URL": "http://env"})
    assert settings.base_url == "http://env"
    settings = load_settings(
        {**flags, "model": "cli-model", "base_url": "http://cli", "max_turns": 2},
        {"ANTHROPIC_BASE_URL": "http://env"},
    )
    assert (settings.model, settings.base_url, settings.max_turns) == (
        "cli-model",
        "http://cli",
        2,
    )


def test_auto_approve_flag_is_yolo_and_allow_list_is_read() -> None:
    config = {"agent": {"mode": "auto_edit", "allow_list": ["info", "Bash"]}}
    settings = resolve_settings({"workspace": "."}, {}, config)
    assert settings.mode == "auto_edit" and settings.allow_list == ("info", "Bash")
    assert resolve_settings({"auto_approve": True}, {}, config).mode == "yolo"


def test_mcp_section_is_accepted() -> None:
    """An [mcp] section is not a settings error and changes no agent setting (the MCP
    layer reads it separately)."""
    config = {"mcp": {"servers": {"x": {"command": "srv"}}}}
    assert resolve_settings({}, {}, config) == resolve_settings({}, {}, {})


@pytest.mark.parametrize(
    ("config", "needle"),
    [
        ({"agent": {"provider": "acme"}}, "unknown provider 'acme'"),
        ({"agent": {"max_turns": "many"}}, "max_turns must be an integer"),
        ({"agent": {"max_tokens": 0}}, "max_tokens must be an integer >= 1"),
        ({"agent": {"thinking_budget": 10}}, "thinking_budget must be an integer >= 1024"),
        ({"agent": {"mode": "turbo"}}, "[agent] mode must be one of"),
        ({"agent": {"allow_list": "info"}}, "[agent] allow_list must be a list"),
        ({"agent": []}, "[agent] must be a table"),
        ({"providers": {"anthropic": "x"}}, "[providers.anthropic] must be a table"),
    ],
)
def test_bad_config_values_name_the_key(config: dict[str, object], needle: str) -> None:
    with pytest.raises(SettingsError) as info:
        resolve_settings({}, {}, config)
    assert needle in str(info.value)


def test_bad_toml_and_missing_workspace_are_setup_errors(tmp_path: Path) -> None:
    (tmp_path / "flightdeck.toml").write_text("[agent\n")
    with pytest.raises(SetupError, match=r"flightdeck\.toml"):
        load_settings({"workspace": str(tmp_path)}, {})
    with pytest.raises(SetupError, match="not a directory"):
        load_settings({"workspace": str(tmp_path / "nope")}, {})
