"""Spec clauses the shipped schemas encode, one test per rule.

Goes through the public `flightdeck.documents.validate_data(kind, data)`, so
each assertion is about the diagnostic a user would see (code and pointer).
"""

from __future__ import annotations

import copy
import functools
import re
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from flightdeck.documents import load_document, load_schema, schema_names, validate_data

CORPUS = Path(__file__).resolve().parent.parent / "data" / "corpus"
WORKED_EXAMPLE = CORPUS / "valid/skill/weekly-metrics-digest/weekly-metrics-digest.example.skill.md"


def problems(kind: str, data: Any) -> list[tuple[str, str]]:
    return [(d.code, d.pointer) for d in validate_data(kind, data)]


def corpus_data(relative: str) -> dict[str, Any]:
    result = load_document(CORPUS / relative)
    assert result.document is not None
    return copy.deepcopy(result.document.data)


# ---- TOOL (AIP-14) -----------------------------------------------------------

TOOL: dict[str, Any] = {
    "name": "Echo",
    "id": "echo",
    "description": "Returns its input.",
    "version": "1.0.0",
    "inputs": {"type": "object"},
    "outputs": {"type": "object"},
}


def test_aip14_canonical_example_with_auto_approval_and_mutates_is_valid() -> None:
    """Upstream's 'approval auto => mutates empty' rule rejected AIP-14's own example."""
    data = corpus_data("valid/tool/aip14-pricing-snapshot/TOOL.md")
    assert data["approval"] == "auto" and data["mutates"] == ["network:*"]
    assert problems("tool", data) == []
    del data["approval"]
    assert problems("tool", data) == []


@pytest.mark.parametrize(
    "implements",
    [
        "storage:commit",
        "@agentik/actions/standard/storage-commit",
        "./actions/storage-commit/ACTION.md",
        {"ref": "@agentik/actions/standard/storage-commit"},
        {"file": "./actions/storage-commit"},
        {"inline": {"id": "my.local-action", "description": "Local.", "mutates": ["storage:x"]}},
        None,
    ],
)
def test_aip14_aip39_implements_accepts_shorthand_ref_file_inline_and_null(
    implements: Any,
) -> None:
    assert problems("tool", {**TOOL, "implements": implements}) == []


@pytest.mark.parametrize("field", ["code", "run", "runner", "secrets", "network", "entry"])
def test_aip14_fields_moved_to_driver_are_rejected_on_tool(field: str) -> None:
    assert problems("tool", {**TOOL, field: "x"}) == [("schema.unknown_field", f"/{field}")]


def test_aip14_tool_accepts_aip16_file_contract_blocks() -> None:
    data = {**TOOL, "inputsFiles": {"src": {"path": "a.pdf"}}, "outputsFiles": {}}
    assert problems("tool", data) == []


# ---- IO (AIP-16) -------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [{}, {"inputs": True}, {"outputsFiles": {"out": {"path": "reports/<runId>.md"}}}],
)
def test_aip16_io_accepts_any_subset_of_the_four_blocks(data: dict[str, Any]) -> None:
    assert problems("io", data) == []


@pytest.mark.parametrize(
    ("inputs", "files", "missing_at"),
    [
        ({"type": "object", "additionalProperties": False}, {"src": {"path": "a"}}, "/inputs"),
        (
            {"type": "object", "properties": {}, "additionalProperties": False},
            {"src": {"path": "a"}},
            "/inputs/properties",
        ),
        (
            {
                "type": "object",
                "properties": {"_workflowFsRoot": {"type": "string"}},
                "additionalProperties": False,
            },
            {"src": {"path": "a"}},
            None,
        ),
        ({"type": "object"}, {"src": {"path": "a"}}, None),
        ({"type": "object", "additionalProperties": False}, {}, None),
    ],
)
def test_aip16_must_allow_injected_workflow_fs_root_when_files_are_declared(
    inputs: dict[str, Any], files: dict[str, Any], missing_at: str | None
) -> None:
    found = problems("io", {"inputs": inputs, "inputsFiles": files})
    assert found == ([] if missing_at is None else [("schema.required", missing_at)])


# ---- RUNNER (AIP-17) ---------------------------------------------------------


@pytest.mark.parametrize(
    "runner",
    [
        {"engine": "sandbox", "image": "mcp-node-server", "limits": {"vcpus": 2}},
        {"inline": {"engine": "subprocess"}},
        {"ref": "@agentik/runners/python-3.12"},
        {"file": "./RUNNER.md"},
        "./RUNNER.md",
    ],
)
def test_aip17_runner_accepts_block_and_inline_ref_file_composition(runner: Any) -> None:
    assert problems("runner", {"runner": runner}) == []


# ---- DRIVER (AIP-30) and SDK (AIP-33) ----------------------------------------

DRIVER: dict[str, Any] = {
    "name": "D",
    "id": "example-driver",
    "description": "An example.",
    "version": "1.0.0",
    "implements": [{"tool": "./tools/echo/TOOL.md", "version": "^1.0.0"}],
}
SDK_ENTRY = {**DRIVER["implements"][0], "metadata": {"sdk": {"function_ref": "echo"}}}
SDK: dict[str, Any] = {
    **DRIVER,
    "kind": "sdk",
    "package": "example",
    "package_manager": "npm",
    "implements": [SDK_ENTRY],
}


@pytest.mark.parametrize(
    ("field", "value", "home"),
    [
        ("bin", "gh", "cli"),
        ("endpoint", "/v1/x", "http"),
        ("server_ref", "./server.json", "mcp"),
        ("host_id", "agentik-runtime", "builtin"),
    ],
)
def test_aip30_subtype_fields_are_admitted_only_for_their_kind(
    field: str, value: str, home: str
) -> None:
    for kind in ("cli", "http", "mcp", "builtin"):
        found = problems("driver", {**DRIVER, "kind": kind, field: value})
        assert found == ([] if kind == home else [("schema.unknown_field", f"/{field}")])


def test_aip33_sdk_driver_is_checked_by_driver_sdk_and_rejects_unknown_keys() -> None:
    assert problems("driver", SDK) == []
    assert problems("driver", {**SDK, "bin": "x"}) == [("schema.unknown_field", "/bin")]
    http_with_package = {**DRIVER, "kind": "http", "package": "x"}
    assert problems("driver", http_with_package) == [("schema.unknown_field", "/package")]


def test_aip33_every_implements_entry_declares_metadata_sdk_function_ref() -> None:
    entry = {**SDK_ENTRY, "metadata": {"sdk": {}}}
    found = problems("driver", {**SDK, "implements": [SDK_ENTRY, entry]})
    assert found == [("schema.required", "/implements/1/metadata/sdk")]


@pytest.mark.parametrize(
    ("runner", "ok"),
    [
        ({"engine": "in-process"}, True),
        ({"inline": {"engine": "in-process"}}, True),
        ({"ref": "@agentik/runners/in-process"}, True),
        ("./RUNNER.md", True),
        ({"engine": "subprocess"}, False),
        ({"inline": {"engine": "sandbox"}}, False),
        ({}, False),
    ],
)
def test_aip33_sdk_driver_runner_must_be_in_process(runner: Any, ok: bool) -> None:
    assert (problems("driver", {**SDK, "runner": runner}) == []) is ok


def test_driver_closed_key_lists_admit_every_universal_field() -> None:
    """Drift guard: the per-kind closed lists repeat driverBase's field names."""
    driver = load_schema("driver")
    universal = set(driver["$defs"]["driverBase"]["properties"])
    for kind, closed in driver["$defs"]["closed"]["$defs"].items():
        assert universal <= set(closed["properties"]), kind
    assert universal <= set(load_schema("driver-sdk")["properties"])


# ---- ACTION (AIP-39) ---------------------------------------------------------

ACTION = {"schema": "action/v1", "id": "storage:commit", "description": "Commit."}


@pytest.mark.parametrize(
    ("action_id", "ok"),
    [("storage:commit", True), ("my.local-action", True), ("a:b:c", False), ("x", False)],
)
def test_aip39_id_has_at_most_one_colon_and_two_to_eighty_chars(action_id: str, ok: bool) -> None:
    assert (problems("action", {**ACTION, "id": action_id}) == []) is ok


@pytest.mark.parametrize(
    ("approval", "ok"),
    [("auto", True), ("on-mutate", True), ("policy:governance/sign", True), ("policy:", False)],
)
def test_aip39_approval_is_a_class_or_a_policy_ref(approval: str, ok: bool) -> None:
    assert (problems("action", {**ACTION, "approval": approval}) == []) is ok


# ---- SKILL / Flight Plan (seed 003) ------------------------------------------


def test_seed003_worked_example_is_lossless_if_stripped() -> None:
    data = corpus_data(str(WORKED_EXAMPLE.relative_to(CORPUS)))
    assert problems("skill", data) == []
    del data["aileron"]
    assert problems("skill", data) == []


@pytest.mark.parametrize(
    ("environment", "ok"),
    [
        ({"tools": ["aws-cli@2.x"]}, True),
        ({"image": "ghcr.io/x/y:1"}, True),
        ({"tools": ["jq@1"], "image": "ghcr.io/x/y:1"}, True),
        ({}, False),
    ],
)
def test_seed003_environment_declares_tools_or_image_and_rejects_empty(
    environment: dict[str, Any], ok: bool
) -> None:
    data = corpus_data(str(WORKED_EXAMPLE.relative_to(CORPUS)))
    data["aileron"]["environment"] = environment
    assert (problems("skill", data) == []) is ok


def _with_credential(credential: dict[str, Any], oauth: bool) -> dict[str, Any]:
    data = corpus_data(str(WORKED_EXAMPLE.relative_to(CORPUS)))
    contract = data["aileron"]["requires"]["actions"][1]["trustContract"]
    contract["credential"] = credential
    if not oauth:
        del contract["oauth"]
    return data


@pytest.mark.parametrize(
    ("credential", "oauth", "ok"),
    [
        ({"kind": "none"}, False, True),
        ({"kind": "api-key", "placement": "cookie"}, False, True),
        ({"kind": "api-key"}, False, False),
        ({"kind": "oauth2", "placement": "header"}, True, True),
        ({"kind": "oauth2", "placement": "header"}, False, False),
        ({"kind": "oauth2", "placement": "body"}, True, False),
        ({"kind": "aws-sigv4", "placement": "signing"}, False, True),
        ({"kind": "aws-sigv4", "placement": "header"}, False, False),
        ({"kind": "aws-sigv4"}, False, False),
    ],
)
def test_seed003_credential_kind_fixes_placement_and_oauth2_needs_oauth(
    credential: dict[str, Any], oauth: bool, ok: bool
) -> None:
    assert (problems("skill", _with_credential(credential, oauth)) == []) is ok


def test_seed003_every_step_kind_is_closed() -> None:
    data = corpus_data(str(WORKED_EXAMPLE.relative_to(CORPUS)))
    for index in range(len(data["aileron"]["steps"])):
        smuggled = copy.deepcopy(data)
        smuggled["aileron"]["steps"][index]["token"] = "sk-live-123"
        pointer = f"/aileron/steps/{index}/token"
        assert problems("skill", smuggled) == [("schema.unknown_field", pointer)]


IDENT = st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,20}", fullmatch=True)
BINDING = re.compile(r"inputs\.([^.]+)|steps\.([^.]+)\.([^.]+)")


def _args(value: Any) -> dict[str, Any]:
    data = corpus_data(str(WORKED_EXAMPLE.relative_to(CORPUS)))
    data["aileron"]["steps"][0]["args"] = {"x": value}
    return data


@given(
    st.one_of(
        IDENT.map("inputs.{}".format), st.tuples(IDENT, IDENT).map("steps.{0[0]}.{0[1]}".format)
    )
)
def test_seed003_binding_references_of_both_forms_are_accepted(ref: str) -> None:
    assert problems("skill", _args(ref)) == []


@given(st.one_of(st.text(max_size=30), st.integers(), st.booleans(), st.none()))
def test_seed003_a_binding_is_a_reference_never_a_value(value: Any) -> None:
    accepted = problems("skill", _args(value)) == []
    if accepted:
        assert isinstance(value, str) and BINDING.fullmatch(value)


def _agentskills_name_ok(name: str) -> bool:
    allowed = set("abcdefghijklmnopqrstuvwxyz0123456789-")
    return (
        1 <= len(name) <= 64
        and set(name) <= allowed
        and not name.startswith("-")
        and not name.endswith("-")
        and "--" not in name
    )


@given(st.text(alphabet="abcxyz019-_A .", max_size=70))
def test_agentskills_name_rule_lowercase_digits_single_inner_hyphens(name: str) -> None:
    data = {"name": name, "description": "d"}
    assert (problems("skill", data) == []) is _agentskills_name_ok(name)


# ---- the schema files themselves ---------------------------------------------


def _walk(node: Any) -> Any:
    """Every subschema, except discriminators and type refinements (never the field itself)."""
    if isinstance(node, dict):
        yield node
        for key, value in node.items():
            if key not in ("if", "isKind", "typedValues"):
                yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def test_every_ref_resolves_in_the_offline_registry() -> None:
    schemas = {name: load_schema(name) for name in schema_names()}
    registry: Registry[Any] = Registry().with_resources(
        (s["$id"], Resource.from_contents(s, default_specification=DRAFT202012))
        for s in schemas.values()
    )
    resolved = 0
    for schema in schemas.values():
        resolver = registry.resolver(base_uri=schema["$id"])
        for node in _walk(schema):
            if isinstance(node.get("$ref"), str):
                target = resolver.lookup(node["$ref"])  # raises if it would need fetching
                assert isinstance(target.contents, (dict, bool)), node["$ref"]
                resolved += 1
    assert resolved > 0  # the walk did reach the cross-schema references


def test_every_declared_property_is_described_for_diagnostics() -> None:
    for name in schema_names():
        for node in _walk(load_schema(name)):
            for key, prop in (node.get("properties") or {}).items():
                if isinstance(prop, dict) and "$ref" not in prop and prop != {}:
                    assert "description" in prop or "title" in prop, f"{name}: {key}"


# ---- both engines read the schemas the same way ------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
VALID_DOCS = [
    ("skill", WORKED_EXAMPLE.relative_to(CORPUS)),
    ("skill", Path("valid/skill/frozen-tool-step-plan/SKILL.md")),
    ("tool", Path("valid/tool/aip16-ex7-translate-pdf/TOOL.md")),
    ("driver-sdk", Path("valid/driver/aip33-ex-openai-sdk/DRIVER.md")),
    ("driver", Path("valid/driver/aip30-ex-gh-cli/DRIVER.md")),
    ("action", Path("valid/action/aip39-seed-storage-commit/ACTION.md")),
]


@functools.cache
def _engines(name: str) -> tuple[Any, Any]:
    """The two validators the loader uses, built here from the shipped files."""
    resources = [(load_schema(n)["$id"], load_schema(n)) for n in schema_names()]
    registry: Registry[Any] = Registry().with_resources(
        (uri, Resource.from_contents(s, default_specification=DRAFT202012)) for uri, s in resources
    )
    python = Draft202012Validator(load_schema(name), registry=registry)
    rust = jsonschema_rs.validator_for(
        load_schema(name), registry=jsonschema_rs.Registry(resources), offline=True
    )
    return python, rust


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out += _paths(value, (*prefix, index))
    return out


@given(st.sampled_from(VALID_DOCS), st.data(), JSON)
def test_rust_and_python_validators_agree_on_mutated_documents(
    case: tuple[str, Path], data: st.DataObject, replacement: Any
) -> None:
    """The loader's fast path (jsonschema-rs) and its explainer (jsonschema) agree."""
    schema, relative = case
    document = corpus_data(str(relative))
    path = data.draw(st.sampled_from(_paths(document)[1:]))
    target = document
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = replacement
    python, rust = _engines(schema)
    valid = python.is_valid(document)
    assert rust.is_valid(document) is valid
    assert valid or next(python.iter_errors(document), None) is not None
