"""Aileron's tokens at launch: a constrained `{{ inputs.x }}` is checked, then
substituted into one argv element (no shell) or a step host; prompt tokens in
Aileron's grammar render beside flightdeck's Jinja binding names."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from flightdeck.launch import LaunchError, StepSettings, bwrap_path
from flightdeck.llm import ScriptedProvider

from .conftest import Harness, write_plan

ARGV = "import sys, pathlib; pathlib.Path('/flightdeck/out/r.txt').write_text(repr(sys.argv[1:]))"


def _plan(tmp_path: Path, command: list[str], hosts: list[str] | None = None) -> Path:
    step: dict[str, Any] = {
        "id": "run",
        "kind": "tool",
        "command": command,
        "collect": {"path": "/flightdeck/out"},
        "outputs": ["files"],
        "materializesOutput": "r.txt",
    }
    if hosts is not None:
        step["trustContract"] = {
            "credential": {"kind": "none"},
            "hosts": hosts,
            "effect": "read",
            "idempotency": {"safeToRetry": True},
            "audit": {"fields": ["result"]},
        }
    return write_plan(
        tmp_path,
        environment={"tools": ["python@3.x"]},
        inputs=[
            {
                "name": "region",
                "type": "string",
                "constraint": {"pattern": "[a-z]{2}-[a-z]+-[0-9]"},
                "resolution": {"rule": "literal", "default": "eu-west-1"},
            }
        ],
        outputs=[
            {
                "name": "r.txt",
                "mimeType": "text/plain",
                "encoding": "utf-8",
                "publish": {"target": "file", "path": "r.txt"},
            }
        ],
        steps=[step],
    )


def test_a_value_breaking_the_constraint_stops_the_launch(harness: Harness, tmp_path: Path) -> None:
    plan = _plan(tmp_path, ["python3", "-c", ARGV, "{{ inputs.region }}"])
    with pytest.raises(LaunchError) as caught:
        harness.run(plan, inputs={"region": "eu-west-1; rm -rf /"})
    assert caught.value.code == "input.constraint"
    assert not (tmp_path / "out" / "r.txt").exists()


@pytest.mark.skipif(
    bwrap_path() is None or shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") is None,
    reason="needs bubblewrap and a system python3",
)
def test_a_checked_value_is_one_argv_element(harness: Harness, tmp_path: Path) -> None:
    plan = _plan(tmp_path, ["python3", "-c", ARGV, "--region={{ inputs.region }}", "x y"])
    result = harness.run(plan, inputs={"region": "us-east-2"})
    assert result.status == "completed", result.error
    assert (tmp_path / "out" / "r.txt").read_text() == "['--region=us-east-2', 'x y']"


def test_hosts_are_substituted_and_checked(
    harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[list[str]] = []

    async def fake_run_tool(task: Any, services: Any) -> Any:
        from flightdeck.launch.core._task import StepOutcome

        seen.append(list(task.step_hosts or []))
        seen.append(list(task.step["command"]))
        return StepOutcome("completed", result={}, outputs={"files": {"r.txt": "x"}})

    monkeypatch.setattr("flightdeck.launch.engine._executor.run_tool", fake_run_tool)
    plan = _plan(tmp_path, ["python3", "{{ inputs.region }}"], ["s3.{{ inputs.region }}.aws.com"])
    harness.run(plan, settings=StepSettings(no_sandbox=True))
    assert seen[0] == ["s3.eu-west-1.aws.com"]
    assert seen[1] == ["python3", "eu-west-1"]


def test_prompt_tokens_in_aileron_grammar_render(harness: Harness, tmp_path: Path) -> None:
    provider = ScriptedProvider(["done"])
    harness.provider = provider
    plan = write_plan(
        tmp_path,
        inputs=[
            {
                "name": "topic",
                "type": "string",
                "resolution": {"rule": "literal", "default": "cats"},
            },
            {"name": "2nd", "type": "number", "resolution": {"rule": "literal", "default": 2}},
        ],
        steps=[
            {
                "id": "up",
                "kind": "transform",
                "transform": "template",
                "bindings": {"template": "inputs.topic"},
                "outputs": ["out"],
            },
            {
                "id": "write",
                "kind": "llm-seam",
                "bindings": {"topic": "inputs.topic"},
                "prompt": "{{ topic }} / {{ inputs.topic }} / {{ steps.up.out }}"
                " / {{ inputs['2nd'] }}",
                "outputs": ["text"],
            },
        ],
    )
    result = harness.run(plan)
    assert result.status == "completed", result.error
    text = provider.requests[0].messages[0].content[0].text  # type: ignore[union-attr]
    assert text == "cats / cats / cats / 2"
