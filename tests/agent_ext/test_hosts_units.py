"""Small rules behind issue 13, through their functions: Bash root commands
for "always allow", the OpenAI-compatible base URL, `.aionrs.toml` mapping."""

from __future__ import annotations

from pathlib import Path

import pytest

from flightdeck.agent.engine._aionrs_compat import merge, read_compat
from flightdeck.agent.engine._approval import ApprovalPolicy, root_commands
from flightdeck.llm import ProviderError
from flightdeck.llm._openai import compatible_base_url


@pytest.mark.parametrize(
    ("command", "roots"),
    [
        ("echo one", {"echo"}),
        ("ls -l | wc -l", {"ls", "wc"}),
        ("make && ./run.sh; echo done", {"make", "./run.sh", "echo"}),
        ("echo 'a;b'", {"echo"}),
        ("echo $(rm -rf x)", None),
        ("echo `id`", None),
        ("FOO=1 ls", None),
        ("echo 'unbalanced", None),
        ("echo a ;; ls", {"echo", "ls"}),
        ("echo a\nrm x", {"echo", "rm"}),
        ("ls 2>&1", {"ls", "1"}),  # conservative: "1" is never approved, so this asks
        ("", None),
    ],
)
def test_root_commands(command: str, roots: set[str] | None) -> None:
    assert root_commands(command) == (None if roots is None else frozenset(roots))


def test_always_allow_never_widens() -> None:
    policy = ApprovalPolicy()
    policy.always_allow("Bash", "exec", {"command": "echo one"})
    assert policy.auto_approves("Bash", "exec", {"command": "echo two"})
    assert not policy.auto_approves("Bash", "exec", {"command": "ls"})
    assert not policy.auto_approves("Bash", "exec", {"command": "echo a && ls"})
    assert not policy.auto_approves("Bash", "exec", {"command": "echo $(ls)"})
    assert not policy.auto_approves("Spawn", "exec", {})
    policy.always_allow("Bash", "exec", {"command": "echo `id`"})  # hidden parts: nothing kept
    assert policy.commands == {"echo"}
    policy.always_allow("Write", "edit", {"file_path": "a"})
    assert policy.auto_approves("Write", "edit", {"file_path": "b"})
    assert not policy.auto_approves("Edit", "edit", {})


@pytest.mark.parametrize(
    ("given", "api_path", "expected"),
    [
        ("http://h:1", None, "http://h:1/v1"),
        ("http://h:1/", None, "http://h:1/v1"),
        ("https://api.openai.com", None, "https://api.openai.com/v1"),
        ("https://x.example/compatible-mode", None, "https://x.example/compatible-mode/v1"),
        ("http://h/v1", None, "http://h/v1"),
        ("http://h/api/paas/v4/", None, "http://h/api/paas/v4"),
        ("http://h/v1beta", None, "http://h/v1beta"),
        ("http://h", "/v1/chat/completions", "http://h/v1"),
        ("http://h/v1", "/chat/completions", "http://h/v1"),
        ("http://h/openai", "/chat/completions", "http://h/openai"),
    ],
)
def test_compatible_base_url(given: str, api_path: str | None, expected: str) -> None:
    assert compatible_base_url(given, api_path) == expected


def test_api_path_must_end_in_chat_completions() -> None:
    with pytest.raises(ProviderError, match="api_path"):
        compatible_base_url("http://h", "/v1/responses")


def test_aionrs_toml_maps_two_keys_and_names_the_rest(tmp_path: Path) -> None:
    (tmp_path / ".aionrs.toml").write_text(
        '[providers.openai.compat]\nmax_tokens_field = "max_completion_tokens"\n'
        'api_path = "/v1/chat/completions"\nmerge_same_role = true\n'
    )
    options, problems = read_compat(tmp_path)
    assert options == {
        "max_tokens_field": "max_completion_tokens",
        "api_path": "/v1/chat/completions",
    }
    assert len(problems) == 1 and "merge_same_role ignored" in problems[0]
    mine = {"providers": {"openai": {"max_tokens_field": "max_tokens"}}}
    merged = merge(mine, options)["providers"]["openai"]
    assert merged == {"max_tokens_field": "max_tokens", "api_path": "/v1/chat/completions"}
    (tmp_path / ".aionrs.toml").write_text("[providers\n")
    assert read_compat(tmp_path)[0] == {} and "cannot be read" in read_compat(tmp_path)[1][0]
