"""Conformance with Aileron's Flight Plan format (issue 15).

Aileron's schema is restated as facts in tests/data/aileron/ (provenance in its
README). Each case below is a variant of Aileron's worked example with the
verdict the seed or Aileron's schema gives; flightdeck (schema + lint) must
agree. Where the two implementations differ on purpose the case names the
clause that decides for flightdeck (also listed in docs/decisions.md).
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from flightdeck.documents import DocumentKind, parse_document, validate_data
from flightdeck.flightplan import KeyPair, freeze_plan, lint_document, verify_plan
from flightdeck.flightplan._emit import emit_skill
from tests.flightplan._code import FakeCode
from tests.flightplan._plans import document, example_body, example_data, example_path

SCHEMA = Path(__file__).resolve().parents[1] / "data" / "aileron"
Data = dict[str, Any]


def _aileron_valid(data: Data) -> bool:
    schema = json.loads((SCHEMA / "flight-plan-manifest.facts.schema.json").read_text())
    return not list(Draft202012Validator(schema).iter_errors(data))


def _flightdeck_valid(data: Data) -> bool:
    if any(d.is_error for d in validate_data(DocumentKind.SKILL, data)):
        return False
    return not any(d.is_error for d in lint_document(document(data)))


def _a(d: Data) -> Data:
    block = d["aileron"]
    assert isinstance(block, dict)
    return block


def _tool_step(command: list[str], hosts: list[str] | None = None) -> Callable[[Data], None]:
    def mutate(d: Data) -> None:
        _a(d)["inputs"].append(
            {
                "name": "region",
                "type": "string",
                "constraint": {"pattern": "[a-z]{2}-[a-z]+-[0-9]"},
                "resolution": {"rule": "literal", "default": "eu-west-1"},
            }
        )
        step: Data = {"id": "sync", "kind": "tool", "command": command, "outputs": ["out"]}
        if hosts is not None:
            step["trustContract"] = {
                "credential": {"kind": "none"},
                "hosts": hosts,
                "effect": "read",
                "idempotency": {"safeToRetry": True},
                "audit": {"fields": ["result"]},
            }
        _a(d)["steps"].append(step)

    return mutate


def _set(path: list[str | int], value: Any) -> Callable[[Data], None]:
    def mutate(d: Data) -> None:
        node: Any = d
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return mutate


def _digit_names(d: Data) -> None:
    _a(d)["inputs"][0]["name"] = "7days"
    _a(d)["steps"][0]["args"]["window_days"] = "inputs.7days"
    _a(d)["steps"][0]["id"] = "1query"
    _a(d)["steps"][1]["bindings"]["series"] = "steps.1query.series"
    _a(d)["steps"][2]["bindings"]["series"] = "steps.1query.series"


def _lock(entries: list[Any], images: list[Data] | None = None) -> Callable[[Data], None]:
    def mutate(d: Data) -> None:
        _a(d)["lock"] = {"resolvedCapabilitySet": entries, "resolvedImages": images or []}

    return mutate


SHA = "sha256:" + "a" * 64


@dataclass(frozen=True)
class Case:
    name: str
    mutate: Callable[[Data], None]
    valid: bool  # the verdict of the seed / Aileron
    decided_by: str  # "aileron-schema" (its keywords decide) or "seed" (a stated invariant)
    flightdeck: bool | None = None  # set only where flightdeck differs on purpose
    why: str = ""


CASES = [
    Case("worked-example", lambda d: None, True, "aileron-schema"),
    Case("empty-environment", _set(["aileron", "environment"], {}), False, "aileron-schema"),
    Case("environment-no-tools", _set(["aileron", "environment"], {"tools": []}), False, "seed"),
    Case("gh-2.19.1", _set(["aileron", "environment", "tools"], ["gh@2.19.1"]), True, "seed"),
    Case("aws-cli-2", _set(["aileron", "environment", "tools"], ["aws-cli@2"]), True, "seed"),
    Case(
        "aws-cli-latest",
        _set(["aileron", "environment", "tools"], ["aws-cli@latest"]),
        True,
        "aileron-schema",
        flightdeck=False,
        why="seed 003: freeze resolves the version against the catalog; 'latest' names none",
    ),
    Case(
        "jq-tool",
        _set(["aileron", "environment", "tools"], ["jq@1.7"]),
        False,
        "aileron-schema",
        flightdeck=True,
        why="seed 003: the name set is the curated catalog, and flightdeck's catalog has jq",
    ),
    Case("names-start-with-a-digit", _digit_names, True, "aileron-schema"),
    Case(
        "binding-is-a-value", _set(["aileron", "steps", 0, "args", "as_of"], "now"), False, "seed"
    ),
    Case(
        "undeclared-action",
        _set(["aileron", "steps", 3, "actionRef"], "aileron:tracker.close_issue"),
        False,
        "seed",
    ),
    Case(
        "constraint-enum",
        _set(["aileron", "inputs", 0, "constraint"], {"enum": ["7", "30"]}),
        True,
        "aileron-schema",
    ),
    Case(
        "constraint-enum-of-numbers",
        _set(["aileron", "inputs", 0, "constraint"], {"enum": [7, 30]}),
        False,
        "aileron-schema",
    ),
    Case(
        "constraint-default-outside-enum",
        _set(["aileron", "inputs", 0, "constraint"], {"enum": ["30"]}),
        False,
        "seed",
    ),
    Case(
        "constraint-enum-and-pattern",
        _set(["aileron", "inputs", 0, "constraint"], {"enum": ["7"], "pattern": "7"}),
        False,
        "aileron-schema",
    ),
    Case("argv-token", _tool_step(["aws", "--region", "{{ inputs.region }}"]), True, "seed"),
    Case(
        "step-host-token",
        _tool_step(["aws", "ls"], ["s3.{{ inputs.region }}.amazonaws.com"]),
        True,
        "aileron-schema",
    ),
    Case(
        "argv-token-unconstrained",
        _tool_step(["aws", "{{ inputs.window_days }}"]),
        False,
        "seed",
    ),
    Case(
        "action-host-token",
        _set(
            ["aileron", "requires", "actions", 0, "trustContract", "hosts"],
            ["{{ inputs.as_of }}.example.com"],
        ),
        False,
        "seed",  # Aileron's schema text: the token form is instantiated only on a tool step
    ),
    Case(
        "lock-strings-and-local-tag",
        _lock(["aws-cli@2.22.4"], [{"ref": "b", "digest": SHA, "localTag": "aileron/t:1"}]),
        True,
        "aileron-schema",
    ),
    Case(
        "lock-capability-objects",
        _lock([{"name": "aws-cli", "requested": "2.x", "version": "2.22.4"}]),
        False,
        "aileron-schema",
        flightdeck=True,
        why="flightdeck reads the lock form it wrote before, so plans frozen earlier verify",
    ),
    Case(
        "oauth2-without-oauth",
        lambda d: _a(d)["requires"]["actions"][1]["trustContract"].pop("oauth"),
        False,
        "aileron-schema",
    ),
    Case(
        "api-key-without-placement",
        _set(
            ["aileron", "requires", "actions", 0, "trustContract", "credential"],
            {"kind": "api-key"},
        ),
        False,
        "aileron-schema",
    ),
    Case(
        "file-publish-without-path",
        _set(["aileron", "outputs", 0, "publish"], {"target": "file"}),
        False,
        "aileron-schema",
    ),
    Case(
        "prompt-on-transform", _set(["aileron", "steps", 1, "prompt"], "x"), False, "aileron-schema"
    ),
    Case(
        "encoding-latin-1",
        _set(["aileron", "outputs", 0, "encoding"], "latin-1"),
        False,
        "aileron-schema",
    ),
    Case(
        "dynamic-yesterday",
        _set(["aileron", "inputs", 1, "resolution"], {"rule": "dynamic", "value": "yesterday"}),
        False,
        "aileron-schema",
    ),
    Case(
        "prompt-tokens",
        _set(
            ["aileron", "steps", 2, "prompt"], "{{ inputs.window_days }} {{ steps.render_csv.csv }}"
        ),
        True,
        "aileron-schema",
    ),
    Case(
        "prompt-jinja-binding-name",
        _set(["aileron", "steps", 2, "prompt"], "Summarize {{ series }} as {{ csv }}"),
        False,
        "seed",  # Aileron's prompt guard: a token is inputs.<name> or steps.<id>.<output>
        flightdeck=True,
        why="flightdeck renders prompts with Jinja over the seam's bindings; plans written"
        " that way keep working (a bare name must still be one of the seam's bindings)",
    ),
    Case(
        "program-token",
        _tool_step(["{{ inputs.region }}", "ls"]),
        True,
        "seed",  # Aileron's command guard checks every argv element alike
        flightdeck=False,
        why="seed 003: a tool step runs a declared tool; lint can only check a literal program",
    ),
    Case(
        "prompt-unknown-step",
        _set(["aileron", "steps", 2, "prompt"], "{{ steps.nope.csv }}"),
        False,
        "seed",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_flightdeck_agrees_with_aileron(case: Case) -> None:
    data = copy.deepcopy(example_data())
    case.mutate(data)
    if case.decided_by == "aileron-schema":
        assert _aileron_valid(data) is case.valid, "the restated Aileron schema disagrees"
    expected = case.valid if case.flightdeck is None else case.flightdeck
    assert _flightdeck_valid(data) is expected, case.why or "flightdeck disagrees"


def test_every_deliberate_disagreement_says_why() -> None:
    assert all(c.why for c in CASES if c.flightdeck is not None)


def test_the_worked_example_validates_in_both_and_lints_clean() -> None:
    data = example_data()
    assert _aileron_valid(data)
    loaded = parse_document(example_path().read_bytes(), path=example_path())
    assert loaded.document is not None and not loaded.diagnostics
    assert lint_document(loaded.document) == []


def test_a_plan_frozen_by_flightdeck_validates_against_aileron(
    example_file: Path, keys: KeyPair
) -> None:
    outcome = freeze_plan(example_file, signing_key=keys.private_path, version="1.0.0")
    frozen = parse_document((outcome.stored.path / "SKILL.md").read_bytes())
    assert frozen.document is not None
    assert frozen.document.data["aileron"]["lock"]["resolvedCapabilitySet"] == ["aws-cli@2.22.4"]
    assert _aileron_valid(frozen.document.data)


def test_a_plan_frozen_with_code_pins_validates_against_aileron(
    example_file: Path, keys: KeyPair
) -> None:
    outcome = freeze_plan(
        example_file, signing_key=keys.private_path, version="1.0.0", code=FakeCode()
    )
    folder = outcome.stored.path
    data = parse_document((folder / "SKILL.md").read_bytes()).document
    assert data is not None
    assert "codePins" not in data.data["aileron"]["lock"]  # Aileron's lock is closed
    pins = (folder / "code-pins.json").read_bytes()
    bound = data.data["metadata"]["flightdeck-code-pins"]
    assert bound == "sha256:" + hashlib.sha256(pins).hexdigest()
    assert [p["driver"] for p in json.loads(pins)["codePins"]] == ["metrics", "tracker"]
    assert _aileron_valid(data.data)
    # ... and flightdeck's own schema and lint accept the frozen file.
    assert _flightdeck_valid(data.data)
    verified = verify_plan(str(folder))
    assert [pin.driver for pin in verified.lock.code_pins] == ["metrics", "tracker"]
    assert (
        verified.plan.lock is not None and verified.plan.lock.code_pins == verified.lock.code_pins
    )


class _Registry:
    """Answers a tag with a digest, as a registry's HEAD would."""

    def resolve(self, ref: str) -> str:
        return "registry.example.com/base@sha256:" + "ab" * 32


def test_a_plan_frozen_with_an_image_validates_against_aileron(
    tmp_path: Path, keys: KeyPair
) -> None:
    data = example_data()
    data["aileron"]["environment"]["image"] = "registry.example.com/base:1.2"
    source = tmp_path / "SKILL.md"
    source.write_text(emit_skill(data, example_body()))
    outcome = freeze_plan(source, signing_key=keys.private_path, resolver=_Registry())
    frozen = parse_document((outcome.stored.path / "SKILL.md").read_bytes()).document
    assert frozen is not None
    [image] = frozen.data["aileron"]["lock"]["resolvedImages"]
    assert image == {"ref": "registry.example.com/base:1.2", "digest": "sha256:" + "ab" * 32}
    assert _aileron_valid(frozen.data)
    # The lock before this change is still flightdeck-valid (its pattern takes both).
    image["digest"] = "registry.example.com/base@" + image["digest"]
    assert _flightdeck_valid(frozen.data) and not _aileron_valid(frozen.data)
