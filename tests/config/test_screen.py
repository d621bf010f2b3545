"""What an untrusted workspace's files may set (config/_screen.py): the one
table covers every setting the agent reads, narrowing keys are taken only
when no looser than the user's, widening ones never, and the settings the
agent ends up with are never looser than the user's own file makes them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck import config as config_module
from flightdeck.agent.engine._settings import MODES, AgentSettings, resolve_settings
from flightdeck.agent.engine._setup import SetupError, load_settings, settings_data
from flightdeck.agent.tools._sandbox import SANDBOX_MODES, SandboxSettings
from flightdeck.config import (
    config_dir,
    key_name,
    load_config,
    merge_layers,
    screen,
    set_trust,
    trust_notice,
)
from flightdeck.config._screen import KEYS, TABLES, UNLISTED, Rule
from flightdeck.llm import ProviderError, create_provider

MODE_ORDER = ("default", "auto_edit", "yolo")
SANDBOX_ORDER = ("required", "auto", "off")


def user_config(text: str) -> None:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "config.toml").write_text(text)


def repo(tmp_path: Path, text: str) -> Path:
    ws = tmp_path / "repo"
    ws.mkdir(exist_ok=True)
    (ws / "flightdeck.toml").write_text(text)
    return ws


# ---- the table covers what is read ------------------------------------------


def test_every_agent_setting_read_from_agent_is_classified() -> None:
    not_from_agent = {"workspace", "base_url", "provider_options", "trust_workspace"}
    not_from_agent.add("ignored_settings")
    fields = set(AgentSettings.__struct_fields__) - not_from_agent
    listed = {k.split(".")[1] for k in KEYS if k.startswith("agent.")}
    assert fields == listed
    assert {k.split(".")[2] for k in KEYS if k.startswith("agent.sandbox.")} == set(
        SandboxSettings.__struct_fields__
    )
    assert TABLES["agent.sandbox"] == "mode"  # `sandbox = "off"` is the mode


@pytest.mark.parametrize("provider", ["anthropic", "openai", "bedrock", "vertex"])
def test_every_provider_option_is_classified(provider: str) -> None:
    with pytest.raises(ProviderError) as caught:
        create_provider(provider, options={"zz_unknown": 1}, env={})
    known = re.search(r"known: ([^)]*)\)", caught.value.message)
    assert known is not None, caught.value.message
    options = {*known.group(1).split(", "), "base_url"}
    assert {f"providers.*.{o}" for o in options} <= set(KEYS)


def test_the_narrowing_rules_compare_against_the_settings_defaults() -> None:
    defaults = AgentSettings(workspace=Path("."))
    sandbox = SandboxSettings()
    assert KEYS["agent.mode"].default == defaults.mode == MODE_ORDER[0]
    assert tuple(KEYS["agent.allow_list"].default) == defaults.allow_list
    assert KEYS["agent.sandbox.mode"].default == sandbox.mode
    assert KEYS["agent.sandbox.network"].default == sandbox.network
    assert tuple(KEYS["agent.sandbox.env"].default) == sandbox.env
    assert set(MODE_ORDER) == set(MODES) and set(SANDBOX_ORDER) == set(SANDBOX_MODES)
    assert UNLISTED.kind == "widening"
    assert {r.kind for r in KEYS.values()} == {"harmless", "narrowing", "widening"}
    assert all(r.narrower is not None for r in KEYS.values() if r.kind == "narrowing")


DOCS = Path(__file__).resolve().parents[2] / "docs" / "agent-extensions.md"


def test_the_docs_table_is_the_code_table() -> None:
    """docs/agent-extensions.md "Settings an untrusted workspace may set"
    lists every key of `KEYS` with its kind, and nothing else."""
    text = DOCS.read_text()
    rows = text[text.index("| key | kind | untrusted |") :].split("\n\n", 1)[0].splitlines()[2:]
    documented: dict[str, str] = {}
    for row in rows:
        cell, kind = (part.strip() for part in row.split("|")[1:3])
        head = re.match(r"`\[([\w.*]+)\]\s*(\w+)?`", cell)
        if head is None or head.group(1) == "mcp":  # "any other key", the extension loader's
            continue
        names = [head.group(2)] if head.group(2) else []
        names += re.findall(r"`(\w+)`", cell[head.end() :])
        for name in names:
            documented[f"{head.group(1)}.{name}"] = kind.split()[0].rstrip(":")
    assert documented == {key: rule.kind for key, rule in KEYS.items()}


# ---- single keys -------------------------------------------------------------


def kept(layer: dict[str, Any], user: dict[str, Any] | None = None) -> dict[str, Any]:
    return screen(layer, user or {}).layer


@pytest.mark.parametrize(
    ("user", "theirs", "taken"),
    [
        (None, "default", True),
        (None, "auto_edit", False),
        (None, "yolo", False),
        ("auto_edit", "default", True),
        ("auto_edit", "auto_edit", True),
        ("auto_edit", "yolo", False),
        ("yolo", "yolo", True),
        ("yolo", "auto_edit", True),
        ("turbo", "auto_edit", False),  # a user value that means nothing: the strictest
        ("yolo", "turbo", False),
        ("yolo", 3, False),
    ],
)
def test_mode_is_taken_only_when_no_looser(user: Any, theirs: Any, taken: bool) -> None:
    mine = {"agent": {"mode": user}} if user is not None else {}
    result = screen({"agent": {"mode": theirs}}, mine)
    assert ("mode" in result.layer["agent"]) is taken
    assert (result.ignored == ()) is taken
    assert result.guarded


@pytest.mark.parametrize(
    ("user", "theirs", "taken"),
    [
        (None, [], True),
        (None, ["Read"], False),
        (["Read", "Bash"], ["Bash"], True),
        (["Read"], ["Read", "Bash"], False),
        (["Read"], "Read", False),
        (["Read"], [1], False),
        ("Read", ["Read"], False),  # a user value that is no list allows nothing more
    ],
)
def test_allow_list_and_env_are_taken_only_when_subsets(
    user: Any, theirs: Any, taken: bool
) -> None:
    mine = {"agent": {"allow_list": user}} if user is not None else {}
    assert ("allow_list" in kept({"agent": {"allow_list": theirs}}, mine)["agent"]) is taken
    mine = {"agent": {"sandbox": {"env": user}}} if user is not None else {}
    assert kept({"agent": {"sandbox": {"env": theirs}}}, mine)["agent"]["sandbox"].get(
        "env", None if user is None else user
    ) == (theirs if taken else user)


@pytest.mark.parametrize(
    ("user", "theirs", "taken"),
    [
        (None, "required", True),
        (None, "auto", True),
        (None, "off", False),
        ("off", "off", True),
        ("off", "auto", True),
        ("required", "auto", False),
        ("required", "required", True),
        (None, "sometimes", False),
    ],
)
def test_sandbox_mode_is_taken_only_when_no_looser(user: Any, theirs: Any, taken: bool) -> None:
    mine = {"agent": {"sandbox": user}} if user is not None else {}
    for form in (theirs, {"mode": theirs}):  # a string is the mode
        sandbox = kept({"agent": {"sandbox": form}}, mine)["agent"]["sandbox"]
        assert (sandbox.get("mode") == theirs) is taken


@pytest.mark.parametrize(
    ("user", "theirs", "taken"),
    [
        (None, "allow", True),
        (None, "deny", True),
        (None, ["a.test"], True),
        ("deny", "deny", True),
        ("deny", "allow", False),
        ("deny", ["a.test"], False),
        (["a.test", "b.test"], ["A.test."], True),
        (["a.test"], ["a.test", "b.test"], False),
        (["a.test"], "allow", False),
        (["a.test"], "deny", True),
        ("allow", "nowhere", False),
        ("allow", [1], False),
        (7, ["a.test"], False),
    ],
)
def test_network_is_taken_only_when_no_wider(user: Any, theirs: Any, taken: bool) -> None:
    mine = {"agent": {"sandbox": {"network": user}}} if user is not None else {}
    sandbox = kept({"agent": {"sandbox": {"network": theirs}}}, mine)["agent"]["sandbox"]
    assert (sandbox.get("network") == theirs) is taken


def test_the_users_sandbox_parts_stay_whatever_form_either_file_used() -> None:
    user = {"agent": {"sandbox": {"network": "deny", "env": ["X"]}}}
    assert kept({"agent": {"sandbox": "required"}}, user)["agent"]["sandbox"] == {
        "network": "deny",
        "env": ["X"],
        "mode": "required",
    }
    assert kept({"agent": {"sandbox": {"network": "deny"}}}, {"agent": {"sandbox": "off"}}) == {
        "agent": {"sandbox": {"mode": "off", "network": "deny"}}
    }


@pytest.mark.parametrize(
    "key",
    [
        "base_url",
        "headers",
        "api_path",
        "organization",
        "aws_region",
        "aws_profile",
        "region",
        "project_id",
        "access_token",
    ],
)
def test_endpoints_headers_and_accounts_are_never_taken(key: str) -> None:
    for provider in ("anthropic", "openai", "my.proxy"):
        result = screen({"providers": {provider: {key: "x", "timeout": 5}}}, {})
        assert result.layer == {"providers": {provider: {"timeout": 5}}}
        assert result.ignored == (("providers", provider, key),) and result.guarded


def test_harmless_keys_pass_and_ask_for_no_trust() -> None:
    layer = {
        "agent": {"model": "m", "max_turns": 3, "system_prompt": "hi", "context_window": 9000},
        "providers": {
            "openai": {"reasoning_effort": "low", "max_tokens_field": "f", "timeout": 9},
            "anthropic": {"prompt_caching": False},
        },
        "mcp": {"connect_timeout": 3, "servers": {"x": {"command": "x"}}},
        "library": {"paths": ["/x"]},
    }
    result = screen(layer, {})
    assert result.layer == layer and result.ignored == () and not result.guarded


def test_unlisted_keys_and_odd_shapes_are_ignored() -> None:
    layer = {
        "agent": {"trust_workspace": True, "sandbox": {"writable": ["/"]}},
        "providers": {"anthropic": {"api_key_command": "x"}, "openai": "x"},
    }
    result = screen(layer, {})
    assert result.layer == {"agent": {"sandbox": {}}, "providers": {"anthropic": {}}}
    assert [key_name(p) for p in result.ignored] == [
        "[agent] trust_workspace",
        "[agent.sandbox] writable",
        "[providers.anthropic] api_key_command",
        "[providers] openai",
    ]
    for odd in ({"agent": "yolo"}, {"providers": 1}, {"agent": {"sandbox": 3}}):
        result = screen(odd, {})
        assert result.guarded and len(result.ignored) == 1
    assert screen({"agent": "yolo"}, {}).layer == {}


def test_rules_answer_by_kind() -> None:
    assert Rule("harmless", "").allows("anything", None)
    assert not Rule("widening", "").allows("anything", "anything")
    assert not Rule("narrowing", "").allows("x", "x")  # no comparison: nothing shown narrower
    assert key_name(("agent",)) == "agent"


# ---- the notice ----------------------------------------------------------------


def test_the_notice_names_what_was_held_and_what_was_ignored(tmp_path: Path) -> None:
    held = trust_notice(tmp_path, ["MCP server x (cmd)"])
    assert "started nothing (workspace.untrusted): MCP server x (cmd). To trust it" in held
    assert "ignored" not in held
    ignored = trust_notice(tmp_path, [], ["[agent] mode", "[providers.openai] base_url"])
    assert "started nothing" not in ignored
    assert (
        "these settings of its own files were ignored (workspace.untrusted): "
        "[agent] mode; [providers.openai] base_url (yours apply instead). To trust it"
    ) in ignored
    both = trust_notice(tmp_path, ["MCP server x (cmd)"], ["[agent] mode"])
    assert "MCP server x (cmd). These settings of its files were ignored: [agent] mode" in both
    for text in (held, ignored, both):
        assert text.startswith(f"Workspace {tmp_path} is not trusted, so ")
        assert f"flightdeck config trust {tmp_path}" in text and "--trust-workspace" in text


# ---- at start-up (`load_settings`) ------------------------------------------------


def test_load_settings_screens_an_untrusted_workspace_and_names_what_it_ignored(
    tmp_path: Path,
) -> None:
    user_config('[agent]\nmode = "auto_edit"\n[providers.anthropic]\nbase_url = "http://mine"\n')
    ws = repo(
        tmp_path,
        '[agent]\nmode = "yolo"\nmodel = "theirs"\nallow_list = ["Bash"]\n'
        '[providers.anthropic]\nbase_url = "http://theirs"\n',
    )
    (ws / ".aionrs.toml").write_text(
        '[providers.openai.compat]\napi_path = "/x/chat/completions"\nmax_tokens_field = "f"\n'
    )
    got = load_settings({"workspace": str(ws)}, {})
    assert (got.mode, got.model, got.allow_list, got.base_url) == (
        "auto_edit",
        "theirs",
        (),
        "http://mine",
    )
    assert got.ignored_settings == (
        "[agent] mode",
        "[agent] allow_list",
        "[providers.anthropic] base_url",
        "[providers.openai.compat] api_path (.aionrs.toml)",
    )
    data, _ = settings_data(load_config(ws), ws, host=False)
    assert data["providers"]["openai"] == {"max_tokens_field": "f"}
    for trusted in (
        load_settings({"workspace": str(ws), "trust_workspace": True}, {}),
        (set_trust(ws), load_settings({"workspace": str(ws)}, {}))[1],
    ):
        assert (trusted.mode, trusted.allow_list, trusted.base_url) == (
            "yolo",
            ("Bash",),
            "http://theirs",
        )
        assert trusted.ignored_settings == ()
        assert trusted.provider_options == {}  # api_path is openai's; anthropic is the provider
    data, _ = settings_data(load_config(ws), ws, host=False)
    assert data["providers"]["openai"] == {
        "api_path": "/x/chat/completions",
        "max_tokens_field": "f",
    }


def test_trust_is_asked_only_when_a_file_sets_more_than_harmless_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[Path] = []
    decide = config_module.decide_trust

    def counting(workspace: Path, *, host: bool = False) -> Any:
        asked.append(workspace)
        return decide(workspace, host=host)

    monkeypatch.setattr(config_module, "decide_trust", counting)
    ws = repo(tmp_path, '[agent]\nmodel = "m"\n[mcp]\nconnect_timeout = 3\n')
    assert load_settings({"workspace": str(ws)}, {}).model == "m"
    assert asked == []
    (ws / "flightdeck.toml").write_text('[agent]\nmode = "default"\n')
    load_settings({"workspace": str(ws)}, {})
    assert asked == [ws]
    (ws / "flightdeck.toml").write_text("")
    (ws / ".aionrs.toml").write_text('[providers.openai.compat]\napi_path = "/chat/completions"\n')
    assert load_settings({"workspace": str(ws)}, {}).ignored_settings != ()
    assert asked == [ws, ws]


def test_an_untrusted_workspaces_bad_loosening_value_is_ignored_not_an_error(
    tmp_path: Path,
) -> None:
    ws = repo(tmp_path, '[agent]\nmode = "reckless"\n[agent.sandbox]\ncolour = "red"\n')
    got = load_settings({"workspace": str(ws)}, {})
    assert got.mode == "default" and got.sandbox == SandboxSettings()
    assert got.ignored_settings == ("[agent] mode", "[agent.sandbox] colour")
    set_trust(ws)
    with pytest.raises(SetupError, match="mode must be one of"):
        load_settings({"workspace": str(ws)}, {})


# ---- never looser than the user's own file ----------------------------------------

_modes = st.sampled_from(MODE_ORDER)
_names = st.lists(st.sampled_from(["Bash", "Read", "exec", "edit", "mcp"]), max_size=3)
_network = st.one_of(
    st.sampled_from(["allow", "deny"]),
    st.lists(st.sampled_from(["a.test", "B.test.", "c.test"]), max_size=2),
)
_sandbox_table = st.fixed_dictionaries(
    {},
    optional={
        "mode": st.sampled_from(SANDBOX_ORDER),
        "network": _network,
        "env": st.lists(st.sampled_from(["X", "Y", "Z"]), max_size=2),
    },
)
_agent = st.fixed_dictionaries(
    {},
    optional={
        "mode": _modes,
        "allow_list": _names,
        "sandbox": st.one_of(st.sampled_from(SANDBOX_ORDER), _sandbox_table),
        "model": st.sampled_from(["m1", "m2"]),
    },
)
_provider = st.fixed_dictionaries(
    {},
    optional={
        "base_url": st.sampled_from(["http://one", "http://two"]),
        "headers": st.just({"X-A": "1"}),
        "timeout": st.sampled_from([5, 6]),
    },
)
_layer = st.fixed_dictionaries(
    {}, optional={"agent": _agent, "providers": st.fixed_dictionaries({"anthropic": _provider})}
)


def _width(network: Any) -> tuple[int, frozenset[str]]:
    if network == "deny":
        return 0, frozenset()
    if network == "allow":
        return 2, frozenset()
    return 1, frozenset(network)


@settings(max_examples=300, deadline=None)
@given(user=_layer, theirs=_layer)
def test_the_screened_settings_are_never_looser_than_the_users(
    user: dict[str, Any], theirs: dict[str, Any]
) -> None:
    screened = screen(theirs, user)
    mine = resolve_settings({"workspace": "."}, {}, user)
    got = resolve_settings({"workspace": "."}, {}, merge_layers(user, screened.layer))
    assert MODE_ORDER.index(got.mode) <= MODE_ORDER.index(mine.mode)
    assert set(got.allow_list) <= set(mine.allow_list)
    assert SANDBOX_ORDER.index(got.sandbox.mode) <= SANDBOX_ORDER.index(mine.sandbox.mode)
    width, hosts = _width(got.sandbox.network)
    my_width, my_hosts = _width(mine.sandbox.network)
    assert width <= my_width
    if width == my_width == 1:
        assert hosts <= my_hosts
    assert set(got.sandbox.env) <= set(mine.sandbox.env)
    assert got.base_url == mine.base_url
    assert got.provider_options.get("headers") == mine.provider_options.get("headers")
    # what was not ignored was taken as written
    agent = theirs.get("agent", {})
    ignored = {key_name(p) for p in screened.ignored}
    if "mode" in agent and "[agent] mode" not in ignored:
        assert got.mode == agent["mode"]
    if "allow_list" in agent and "[agent] allow_list" not in ignored:
        assert got.allow_list == tuple(agent["allow_list"])
    if "model" in agent:
        assert got.model == agent["model"]
    timeout = theirs.get("providers", {}).get("anthropic", {}).get("timeout")
    if timeout is not None:
        assert got.provider_options["timeout"] == timeout
