from __future__ import annotations

import contextlib
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from flightdeck.launch import LaunchError, TransformContext, get_transform, register_transform
from flightdeck.launch.steps._transforms import _REGISTRY

from .conftest import Harness, write_plan

CTX = TransformContext("t", "2025-01-01T00:00:00Z")


def test_builtin_registry_is_closed_and_named() -> None:
    from flightdeck.launch import transform_names

    assert {"identity", "template", "csv", "json", "select"} <= set(transform_names())
    with pytest.raises(LaunchError) as caught:
        get_transform("shell")
    assert caught.value.code == "transform.unknown"


def test_identity_needs_one_binding() -> None:
    assert get_transform("identity")({"a": [1]}, CTX) == [1]
    with pytest.raises(LaunchError) as caught:
        get_transform("identity")({"a": 1, "b": 2}, CTX)
    assert caught.value.code == "transform.bindings"


def test_template_is_sandboxed_and_strict() -> None:
    render = get_transform("template")
    assert render({"template": "{{ n }} items", "n": 3}, CTX) == "3 items"
    with pytest.raises(LaunchError) as caught:
        render({"template": "{{ missing }}"}, CTX)
    assert caught.value.code == "transform.template"
    with pytest.raises(LaunchError) as unsafe:  # the sandbox refuses unsafe attribute access
        render({"template": "{{ x.__class__.__mro__ }}", "x": "s"}, CTX)
    assert unsafe.value.code == "transform.template" and "unsafe" in unsafe.value.message


def test_csv_columns_and_nested_values() -> None:
    rows = [{"a": 1, "b": {"z": 1, "y": 2}}, {"a": None, "c": True}]
    text = get_transform("csv")({"rows": rows}, CTX)
    assert text == 'a,b,c\n1,"{""y"":2,""z"":1}",\n,,true\n'
    assert get_transform("csv")({"rows": rows, "columns": ["c"]}, CTX) == 'c\n""\ntrue\n'
    with pytest.raises(LaunchError) as caught:
        get_transform("csv")({"rows": [1, 2]}, CTX)
    assert caught.value.code == "transform.csv"


def test_json_is_canonical() -> None:
    assert get_transform("json")({"v": {"b": 1, "a": [1.0]}}, CTX) == '{"a":[1],"b":1}'


def test_select_is_jsonpath() -> None:
    value = {"series": [{"name": "a"}, {"name": "b"}]}
    assert get_transform("select")({"value": value, "path": "$.series[*].name"}, CTX) == [
        "a",
        "b",
    ]
    with pytest.raises(LaunchError) as caught:
        get_transform("select")({"value": value, "path": "$$["}, CTX)
    assert caught.value.code == "transform.select"


def test_hosts_can_register_transforms(harness: Harness, tmp_path: Path) -> None:
    register_transform("upper_test", lambda b, ctx: str(b["s"]).upper())
    try:
        with pytest.raises(ValueError, match="already registered"):
            register_transform("upper_test", lambda b, ctx: None)
        plan = write_plan(
            tmp_path,
            inputs=[{"name": "s", "type": "string", "resolution": {"rule": "literal"}}],
            steps=[
                {
                    "id": "up",
                    "kind": "transform",
                    "transform": "upper_test",
                    "bindings": {"s": "inputs.s"},
                    "outputs": ["out"],
                }
            ],
        )
        result = harness.run(plan, inputs={"s": "abc"})
        assert result.status == "completed"
        assert harness.journal.steps(result.run_id)[0].result["outputs"] == {"out": "ABC"}
    finally:
        _REGISTRY.pop("upper_test", None)


def _impure_plan(tmp_path: Path, name: str) -> Path:
    return write_plan(
        tmp_path,
        steps=[{"id": "bad", "kind": "transform", "transform": name, "outputs": ["out"]}],
    )


@pytest.mark.parametrize(
    "action",
    [
        lambda: socket.getaddrinfo("example.com", 443),
        lambda: socket.create_connection(("192.0.2.1", 9), timeout=0.1),
        lambda: subprocess.run(["true"], check=False),
    ],
    ids=["dns", "connect", "subprocess"],
)
def test_transform_no_network_no_subprocess_enforced(
    harness: Harness, tmp_path: Path, action: Any
) -> None:
    """Issue 6: transforms have no network and no credentials: enforced, not only documented."""

    def impure(bindings: Any, ctx: TransformContext) -> Any:
        with contextlib.suppress(OSError):  # even a transform that swallows the refusal fails
            action()
        return 1

    register_transform("impure_test", impure, replace=True)
    try:
        result = harness.run(_impure_plan(tmp_path, "impure_test"))
    finally:
        _REGISTRY.pop("impure_test", None)
    assert result.status == "failed"
    assert result.error is not None and result.error.code == "transform.impure"
    assert result.error.step == "bad"


def test_transform_cannot_read_secrets_file(harness: Harness, tmp_path: Path) -> None:
    secrets = tmp_path / "secrets.toml"
    secrets.write_text('[secrets]\nx = "CANARY-secret-file"\n')
    secrets.chmod(0o600)

    def peek(bindings: Any, ctx: TransformContext) -> Any:
        return secrets.read_text()

    register_transform("peek_test", peek, replace=True)
    try:
        result = harness.run(_impure_plan(tmp_path, "peek_test"))
    finally:
        _REGISTRY.pop("peek_test", None)
    assert result.status == "failed"
    assert "CANARY" not in str(result.to_dict())


def test_transform_clock_is_the_frozen_launch_time(harness: Harness, tmp_path: Path) -> None:
    """Issue 6: no clock in transforms: they see the run's one launch time."""
    seen: list[str] = []
    register_transform("clock_test", lambda b, ctx: seen.append(ctx.now) or ctx.now, replace=True)
    try:
        plan = write_plan(
            tmp_path,
            inputs=[
                {
                    "name": "t",
                    "type": "timestamp",
                    "resolution": {"rule": "dynamic", "value": "now"},
                }
            ],
            steps=[
                {"id": "a", "kind": "transform", "transform": "clock_test", "outputs": ["o"]},
                {"id": "b", "kind": "transform", "transform": "clock_test", "outputs": ["o"]},
                {"id": "c", "kind": "transform", "bindings": {"t": "inputs.t"}, "outputs": ["o"]},
            ],
        )
        result = harness.run(plan)
    finally:
        _REGISTRY.pop("clock_test", None)
    assert result.status == "completed"
    memo = {s.step_id: s.result["outputs"]["o"] for s in harness.journal.steps(result.run_id)}
    assert memo["a"] == memo["b"] == memo["c"] == seen[0]


def test_html_render_turns_markdown_into_sanitized_html() -> None:
    render = get_transform("html-render")
    html = render({"markdown": "# Digest\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n*ok*"}, CTX)
    assert "<h1>Digest</h1>" in html and "<td>1</td>" in html and "<em>ok</em>" in html
    assert render({"body": "plain"}, CTX) == "<p>plain</p>\n"  # the single binding


@pytest.mark.parametrize(
    "markdown",
    [
        "<script>alert(1)</script>",
        '<img src=x onerror="alert(1)">',
        "[x](javascript:alert(1))",
        '<a href="javascript:alert(1)">x</a>',
        "<style>body{}</style>",
        "[x](<javascript:alert(1)>)",
        "[x]: javascript:alert(1)\n\n[y][x]",
        "![x](data:text/html;base64,PHNjcmlwdD4=)",
    ],
)
def test_html_render_leaves_nothing_executable(markdown: str) -> None:
    from html.parser import HTMLParser

    found: list[tuple[str, list[tuple[str, str | None]]]] = []

    class Collect(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.append((tag, attrs))

    html = get_transform("html-render")({"markdown": markdown}, CTX)
    Collect().feed(html)
    for tag, attrs in found:
        assert tag not in ("script", "style", "iframe", "object"), html
        for name, value in attrs:
            assert not name.startswith("on"), html
            assert not (value or "").strip().lower().startswith(("javascript:", "data:")), html
    assert html.strip(), "the text is kept, as text"


def test_html_render_links_are_noopener_and_needs_text() -> None:
    render = get_transform("html-render")
    html = render({"markdown": "[site](https://example.com)"}, CTX)
    assert 'href="https://example.com"' in html and 'rel="noopener noreferrer"' in html
    with pytest.raises(LaunchError) as caught:
        render({"markdown": 7}, CTX)
    assert caught.value.code == "transform.bindings"


def test_lint_knows_every_builtin_transform() -> None:
    from flightdeck.flightplan import builtin_transforms
    from flightdeck.launch import transform_names

    assert set(builtin_transforms()) <= set(transform_names())
    assert {"identity", "template", "csv", "json", "select", "html-render"} == set(
        builtin_transforms()
    )


def test_html_render_runs_in_a_plan_under_the_deny_all_policy(
    harness: Harness, tmp_path: Path
) -> None:
    plan = write_plan(
        tmp_path,
        inputs=[{"name": "md", "type": "string", "resolution": {"rule": "literal"}}],
        steps=[
            {
                "id": "page",
                "kind": "transform",
                "transform": "html-render",
                "bindings": {"markdown": "inputs.md"},
                "outputs": ["html"],
            }
        ],
    )
    result = harness.run(plan, inputs={"md": "**hi** <b onclick=x>"})
    assert result.status == "completed", result.error
    html = harness.journal.steps(result.run_id)[0].result["outputs"]["html"]
    assert html == "<p><strong>hi</strong> &lt;b onclick=x&gt;</p>\n"


def test_a_transform_result_reaches_dependants_as_plain_json(
    harness: Harness, tmp_path: Path
) -> None:
    """A str subclass (an enum member) and a tuple leave a step as a plain
    str and a list: only JSON data crosses a step boundary."""
    import enum

    class Colour(enum.StrEnum):
        RED = "red"

    seen: list[tuple[type, type]] = []
    register_transform("enum_test", lambda b, ctx: Colour.RED)
    register_transform("tuple_test", lambda b, ctx: (1, 2))
    register_transform("seen_test", lambda b, ctx: seen.append((type(b["c"]), type(b["t"]))))
    try:
        plan = write_plan(
            tmp_path,
            steps=[
                {"id": "make", "kind": "transform", "transform": "enum_test", "outputs": ["c"]},
                {"id": "pair", "kind": "transform", "transform": "tuple_test", "outputs": ["t"]},
                {
                    "id": "look",
                    "kind": "transform",
                    "transform": "seen_test",
                    "bindings": {"c": "steps.make.c", "t": "steps.pair.t"},
                    "outputs": ["out"],
                },
            ],
        )
        assert harness.run(plan).status == "completed"
        assert seen == [(str, list)]
    finally:
        for name in ("enum_test", "tuple_test", "seen_test"):
            _REGISTRY.pop(name, None)
