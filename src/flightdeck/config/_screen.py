"""What an untrusted workspace's files may set: one table, judged key by key.

A workspace's `flightdeck.toml` (and AionUi's `.aionrs.toml`) hold whatever
the repository's author wrote. Most of what the agent reads from them is the
repository's business (which model, how many turns), but some keys decide
what runs without asking, what Bash may reach, and where requests carrying
the user's credentials go. Until the user trusts the workspace
(`decide_trust`), each key of its files is judged by `KEYS`:

- harmless: taken as written;
- narrowing: taken only when it is no looser than the user's own value (their
  `config.toml`, else the default): a stricter mode, a smaller allow list, a
  tighter sandbox. A value that cannot be compared is not shown to be
  narrower, and is ignored;
- widening: ignored, so the user's value (or the default) applies: endpoints,
  headers, and the account or credential requests are made with.

A key the table does not list, inside the tables the agent's settings are
read from (`[agent]`, `[agent.sandbox]`, `[providers.*]`), is widening: a
setting added later is held back from untrusted workspaces until it is
classified here. Other tables are not the agent's settings and pass
unchanged (the extension loader holds a workspace's `[mcp.servers]`; `[trust]`
and `[[hooks]]` count only in the user's file).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

import msgspec

Kind = Literal["harmless", "narrowing", "widening"]
# (the workspace's value, the user's) -> whether the workspace's is no looser
Narrower = Callable[[Any, Any], bool]
Path = tuple[str, ...]


class Rule(msgspec.Struct, frozen=True):
    kind: Kind
    why: str
    narrower: Narrower | None = None
    # The user's value when their file sets none: the setting's default.
    default: Any = None

    def allows(self, value: Any, user: Any) -> bool:
        if self.kind == "harmless":
            return True
        if self.narrower is None:
            return False
        return self.narrower(value, user)


def _ranked(*order: str) -> Narrower:
    """A setting whose values run from the strictest to the loosest."""

    def narrower(value: Any, user: Any) -> bool:
        if not isinstance(value, str) or value not in order:
            return False
        mine = order.index(user) if isinstance(user, str) and user in order else 0
        return order.index(value) <= mine

    return narrower


def _names(value: Any) -> frozenset[str] | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    return frozenset(value)


def _subset(value: Any, user: Any) -> bool:
    """A list that names only what the user's list names."""
    names = _names(value)
    return names is not None and names <= (_names(user) or frozenset())


def _hosts(value: Any) -> frozenset[str] | None:
    names = _names(value)  # compared as `parse_sandbox` keeps them
    return None if names is None else frozenset(h.lower().rstrip(".") for h in names)


def _network(value: Any, user: Any) -> bool:
    """`deny` < a list of hosts < `allow`; a list no wider than the user's."""
    anywhere = isinstance(user, str) and user == "allow"
    if value == "deny":
        return True
    if value == "allow":
        return anywhere
    hosts = _hosts(value)
    if hosts is None:
        return False
    if anywhere:
        return True
    theirs = _hosts(user)
    return theirs is not None and hosts <= theirs


def _harmless(why: str) -> Rule:
    return Rule("harmless", why)


def _widening(why: str) -> Rule:
    return Rule("widening", why)


# The one classification. Keys are dotted paths; `providers.*` is any provider.
KEYS: dict[str, Rule] = {
    "agent.provider": _harmless("one of the user's providers, at the endpoint the user set"),
    "agent.model": _harmless("which model answers"),
    "agent.max_tokens": _harmless("the length of one answer"),
    "agent.max_turns": _harmless("how many model requests one message may take"),
    "agent.system_prompt": _harmless(
        "what the model is told, not what it may do: tool calls are approved by the user's rules"
    ),
    "agent.thinking_budget": _harmless("how long the model thinks"),
    "agent.sessions": _harmless("whether the conversation is saved in the user's data folder"),
    "agent.max_retries": _harmless("how often a failed request is retried"),
    "agent.retry_delay": _harmless("the wait between retries"),
    "agent.context_window": _harmless("when the conversation is compacted"),
    "agent.mode": Rule(
        "narrowing",
        "which tool calls run without asking",
        _ranked("default", "auto_edit", "yolo"),
        "default",
    ),
    "agent.allow_list": Rule("narrowing", "tools that run without asking", _subset, []),
    "agent.sandbox.mode": Rule(
        "narrowing", "whether Bash is confined", _ranked("required", "auto", "off"), "auto"
    ),
    "agent.sandbox.network": Rule("narrowing", "what Bash can reach", _network, "allow"),
    "agent.sandbox.env": Rule("narrowing", "the user's variables Bash sees", _subset, []),
    "providers.*.base_url": _widening("where requests, and the API key, are sent"),
    "providers.*.headers": _widening("sent with every request"),
    "providers.*.api_path": _widening("the path requests, and the API key, are sent to"),
    "providers.*.organization": _widening("the account the API key is used for"),
    "providers.*.aws_region": _widening("part of the endpoint's host name"),
    "providers.*.aws_profile": _widening("which of the user's credentials are used"),
    "providers.*.region": _widening("part of the endpoint's host name"),
    "providers.*.project_id": _widening("the project the user's credentials are used for"),
    "providers.*.access_token": _widening("whose account receives the requests (and the code)"),
    "providers.*.timeout": _harmless("how long a request may take"),
    "providers.*.prompt_caching": _harmless("whether the prompt is cached"),
    "providers.*.reasoning_effort": _harmless("how hard the model reasons"),
    "providers.*.max_tokens_field": _harmless("the name of one field of the request body"),
    "providers.*.tool_choice": _harmless(
        "whether the model must call a tool first: each call is still approved by the user's rules"
    ),
    "providers.*.parallel_tool_calls": _harmless("whether one answer may hold several tool calls"),
}
UNLISTED = _widening("not classified: held back until it is")
# The tables walked into. A value is the key a plain string stands for
# (`[agent] sandbox = "off"` is `[agent.sandbox] mode = "off"`).
TABLES: dict[str, str | None] = {
    "agent": None,
    "agent.sandbox": "mode",
    "providers": None,
    "providers.*": None,
}


class Screened(msgspec.Struct, frozen=True):
    """A workspace layer as an untrusted workspace may set it: `layer` to
    merge over the user's data, the `ignored` keys, and whether it sets
    anything but harmless keys (`guarded`: only then does trust matter)."""

    layer: dict[str, Any]
    ignored: tuple[Path, ...] = ()
    guarded: bool = False


def _pattern(path: Path) -> str:
    if path[0] == "providers" and len(path) > 1:
        path = (path[0], "*", *path[2:])
    return ".".join(path)


def _expand(value: Any, shorthand: str | None) -> Any:
    return {shorthand: value} if shorthand is not None and isinstance(value, str) else value


def screen(layer: Mapping[str, Any], user: Mapping[str, Any]) -> Screened:
    """`layer` (a workspace file's data) judged against `user` (the user's
    file's data) by `KEYS`."""
    ignored: list[Path] = []
    kept, guarded = _walk(layer, user, (), ignored)
    return Screened(kept, tuple(ignored), guarded)


def _walk(
    layer: Mapping[str, Any], user: Any, path: Path, ignored: list[Path]
) -> tuple[dict[str, Any], bool]:
    mine: Mapping[str, Any] = user if isinstance(user, Mapping) else {}
    kept: dict[str, Any] = {}
    guarded = False
    for key, value in layer.items():
        here = (*path, key)
        pattern = _pattern(here)
        if pattern in TABLES:
            shorthand = TABLES[pattern]
            value, theirs = _expand(value, shorthand), _expand(mine.get(key), shorthand)
            if not isinstance(value, Mapping):
                ignored.append(here)
                guarded = True
                continue
            table, inner = _walk(value, theirs, here, ignored)
            if shorthand is not None:
                # One setting in parts: the user's parts stay where the
                # workspace's are not taken, whatever form each file used.
                table = {**(theirs if isinstance(theirs, Mapping) else {}), **table}
                inner = True
            kept[key] = table
            guarded = guarded or inner
        elif not path:
            kept[key] = value  # not a table of the agent's settings
        else:
            rule = KEYS.get(pattern, UNLISTED)
            if rule.kind != "harmless":
                guarded = True
            if rule.allows(value, mine.get(key, rule.default)):
                kept[key] = value
            else:
                ignored.append(here)
    return kept, guarded


def key_name(path: Path) -> str:
    """A key as the notice names it: `[agent.sandbox] network`."""
    if len(path) == 1:
        return path[0]
    return f"[{'.'.join(path[:-1])}] {path[-1]}"


__all__ = ["KEYS", "TABLES", "Rule", "Screened", "key_name", "screen"]
