"""Aileron's manifest validate tests, restated: schema verdicts compared.

The cases restate github.com/ALRubinger/aileron
internal/flightplan/manifest/validate_test.go (commit e864ee5; facts only:
each document's shape and whether Aileron's schema accepts it). Aileron's
test checks its schema alone, so this compares flightdeck's schema verdict
(`validate_data`) and the restated Aileron schema's with the recorded one.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from flightdeck.documents import DocumentKind, validate_data
from flightdeck.flightplan import lint_document
from tests.flightplan._plans import document

SCHEMA = Path(__file__).resolve().parents[1] / "data" / "aileron"
DIGEST = "sha256:" + "0123456789abcdef" * 4
ACTION = {
    "ref": "aileron:metrics.query_series",
    "trustContract": {
        "credential": {"kind": "none"},
        "hosts": ["api.example.com"],
        "effect": "read",
        "idempotency": {"safeToRetry": True},
        "audit": {"fields": ["result"]},
    },
}


def _base(**block: Any) -> dict[str, Any]:
    aileron = {
        "schemaVersion": "aileron.flightplan.v1",
        "requires": {"actions": [copy.deepcopy(ACTION)]},
        "inputs": [],
        "outputs": [],
        **block,
    }
    return {"name": "s", "description": "d", "aileron": aileron}


def _contract(hosts: list[str]) -> dict[str, Any]:
    return {**copy.deepcopy(ACTION["trustContract"]), "hosts": hosts}  # type: ignore[dict-item]


def _tool(**step: Any) -> dict[str, Any]:
    return _base(environment={"tools": ["aws-cli@2.x"]}, steps=[{"id": "fetch", **step}])


def _pin(**extra: Any) -> dict[str, Any]:
    return {"ref": "registry.example.com/runner:1.4", "digest": DIGEST, **extra}


CASES: list[tuple[str, dict[str, Any], bool]] = [
    # TestParseInvalidBlocks (those the current format still rejects)
    ("missing inputs", {"name": "s", "description": "d", "aileron": {"outputs": []}}, False),
    ("missing outputs", {"name": "s", "description": "d", "aileron": {"inputs": []}}, False),
    (
        "action missing ref",
        _base(requires={"actions": [{"trustContract": ACTION["trustContract"]}]}),
        False,
    ),
    (
        "action missing trustContract",
        _base(requires={"actions": [{"ref": "aileron:metrics.query_series"}]}),
        False,
    ),
    (
        "ref malformed",
        _base(requires={"actions": [{**ACTION, "ref": "not-a-valid-ref"}]}),
        False,
    ),
    # TestStrippedTopLevelStillValid
    ("stripped", {"name": "s", "description": "d"}, True),
    # TestLockResolvedImagesSinglePinShape
    ("pin ref and digest", _base(lock={"resolvedImages": [_pin()]}), True),
    ("pin with id", _base(lock={"resolvedImages": [_pin(id="extract")]}), False),
    ("pin with hosts", _base(lock={"resolvedImages": [_pin(hosts=["api.example.com"])]}), False),
    ("pin with stepId", _base(lock={"resolvedImages": [_pin(stepId="extract")]}), False),
    # TestLockStepTrust
    (
        "stepTrust single",
        _base(lock={"stepTrust": {"fetch": {"hosts": ["s3.amazonaws.com"]}}}),
        True,
    ),
    (
        "stepTrust ports",
        _base(
            lock={
                "stepTrust": {
                    "fetch": {"hosts": ["s3.amazonaws.com", "s3.amazonaws.com:443"]},
                    "file": {"hosts": ["tracker.example.com"]},
                }
            }
        ),
        True,
    ),
    (
        "stepTrust beside a pin",
        _base(
            lock={
                "resolvedImages": [_pin()],
                "stepTrust": {"fetch": {"hosts": ["api.example.com"]}},
            }
        ),
        True,
    ),
    ("stepTrust empty hosts", _base(lock={"stepTrust": {"fetch": {"hosts": []}}}), False),
    ("stepTrust missing hosts", _base(lock={"stepTrust": {"fetch": {}}}), False),
    (
        "stepTrust scheme",
        _base(lock={"stepTrust": {"fetch": {"hosts": ["https://api.example.com"]}}}),
        False,
    ),
    (
        "stepTrust unknown key",
        _base(lock={"stepTrust": {"fetch": {"hosts": ["api.example.com"], "effect": "read"}}}),
        False,
    ),
    ("stepTrust non-object", _base(lock={"stepTrust": {"fetch": "s3.amazonaws.com"}}), False),
    (
        "stepTrust key not a step id",
        _base(lock={"stepTrust": {"not a step id": {"hosts": ["api.example.com"]}}}),
        False,
    ),
    # TestEnvironmentValidity
    ("tools only", _base(environment={"tools": ["aws-cli@2.x"]}), True),
    ("multiple tools", _base(environment={"tools": ["aws-cli@2.x", "gh@2"]}), True),
    ("loose versions", _base(environment={"tools": ["aws-cli@2", "gh@2.19.1"]}), True),
    ("image only", _base(environment={"image": "registry.example.com/base:1.4"}), True),
    (
        "image and tools",
        _base(environment={"image": "registry.example.com/base:1.4", "tools": ["gh@2"]}),
        True,
    ),
    ("empty environment", _base(environment={}), False),
    ("unknown tool (flightdeck: lint)", _base(environment={"tools": ["nmap@7.1"]}), False),
    ("tool without version", _base(environment={"tools": ["aws-cli"]}), False),
    ("version without name", _base(environment={"tools": ["@2.x"]}), False),
    ("empty tool entry", _base(environment={"tools": [""]}), False),
    ("empty version", _base(environment={"tools": ["aws-cli@"]}), False),
    ("duplicate tools", _base(environment={"tools": ["gh@2", "gh@2"]}), False),
    ("empty image", _base(environment={"image": ""}), False),
    ("non-string image", _base(environment={"image": 7}), False),
    (
        "rung1Image under environment",
        _base(environment={"rung1Image": {"ref": "registry.example.com/runner:1.4"}}),
        False,
    ),
    # TestExecutionEnvironmentKeyRemoved
    (
        "requires.executionEnvironment",
        _base(requires={"actions": [ACTION], "executionEnvironment": {}}),
        False,
    ),
    # TestToolStepValidity
    (
        "tool with contract",
        _tool(
            kind="tool",
            command=["aws", "s3", "ls"],
            outputs=["listing"],
            trustContract=_contract(["s3.amazonaws.com"]),
        ),
        True,
    ),
    (
        "tool mount and collect",
        _tool(
            kind="tool",
            command=["aws", "s3", "cp", "/work/in", "/work/out"],
            mount={"path": "/work/in"},
            collect={"path": "/work/out"},
            outputs=["copied"],
        ),
        True,
    ),
    (
        "tool bindings and materializesOutput",
        _tool(
            kind="tool",
            command=["aws", "--version"],
            bindings={"window": "inputs.window_days"},
            outputs=["version"],
            materializesOutput="report.csv",
        ),
        True,
    ),
    ("tool missing command", _tool(kind="tool", outputs=["listing"]), False),
    ("tool empty command", _tool(kind="tool", command=[]), False),
    ("tool empty argv element", _tool(kind="tool", command=["aws", ""]), False),
    ("tool shell string", _tool(kind="tool", command="aws s3 ls"), False),
    ("tool empty mount path", _tool(kind="tool", command=["aws"], mount={"path": ""}), False),
    ("tool mount without path", _tool(kind="tool", command=["aws"], mount={}), False),
    ("tool empty collect path", _tool(kind="tool", command=["aws"], collect={"path": ""}), False),
    (
        "tool unknown key",
        _tool(kind="tool", command=["aws"], image="registry.example.com/tool:1"),
        False,
    ),
    (
        "tool contract empty hosts",
        _tool(kind="tool", command=["aws"], trustContract=_contract([])),
        False,
    ),
    ("command on transform", _tool(kind="transform", command=["aws"], outputs=["out"]), False),
    (
        "command on action-call",
        _tool(kind="action-call", actionRef="aileron:metrics.query_series", command=["aws"]),
        False,
    ),
    ("command on llm-seam", _tool(kind="llm-seam", command=["aws"], outputs=["out"]), False),
]


@pytest.mark.parametrize(("name", "data", "valid"), CASES, ids=[c[0] for c in CASES])
def test_schema_verdicts_match_aileron(name: str, data: dict[str, Any], valid: bool) -> None:
    schema = json.loads((SCHEMA / "flight-plan-manifest.facts.schema.json").read_text())
    aileron_errors = list(Draft202012Validator(schema).iter_errors(data))
    assert (aileron_errors == []) is valid, "the restated schema disagrees with the record"
    diags = list(validate_data(DocumentKind.SKILL, data))
    if "(flightdeck: lint)" in name:  # closed catalog: flightdeck checks it in lint, at validate
        diags += lint_document(document(data))
    errors = [(d.code, d.pointer) for d in diags if d.is_error]
    assert (errors == []) is valid, errors
