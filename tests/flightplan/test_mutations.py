"""The mutation suite: broken variants of the worked example, each rejected
by lint with its own expected code (issue 5, "Tests and speed")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from flightdeck.flightplan import lint_document
from tests.flightplan._plans import document, example_data

Data = dict[str, Any]


def _a(data: Data) -> Data:
    block = data["aileron"]
    assert isinstance(block, dict)
    return block


def _step(data: Data, index: int) -> Data:
    step = _a(data)["steps"][index]
    assert isinstance(step, dict)
    return step


def _contract(data: Data, index: int = 0) -> Data:
    contract = _a(data)["requires"]["actions"][index]["trustContract"]
    assert isinstance(contract, dict)
    return contract


def _tool_step(data: Data, **extra: Any) -> Data:
    step = {
        "id": "post_process",
        "kind": "tool",
        "command": ["aws", "s3", "ls"],
        "bindings": {"csv": "steps.render_csv.csv"},
        "outputs": ["listing"],
        **extra,
    }
    _a(data)["steps"].append(step)
    return step


def _set(path: Callable[[Data], Data], key: str, value: Any) -> Callable[[Data], None]:
    def mutate(data: Data) -> None:
        path(data)[key] = value

    return mutate


def _dup_step(data: Data) -> None:
    _step(data, 1)["id"] = "query_metrics"


def _dup_input(data: Data) -> None:
    _a(data)["inputs"][1]["name"] = "window_days"


def _dup_output(data: Data) -> None:
    _a(data)["outputs"][1]["name"] = "digest.csv"


def _dup_action(data: Data) -> None:
    _a(data)["requires"]["actions"][1]["ref"] = "aileron:metrics.query_series"


def _dup_step_output(data: Data) -> None:
    _step(data, 0)["outputs"] = ["series", "series"]


def _cycle(data: Data) -> None:
    _step(data, 0)["args"]["metric_set"] = "steps.file_issue.issue"


def _self_loop(data: Data) -> None:
    _step(data, 1)["bindings"]["again"] = "steps.render_csv.csv"


def _two_materialize(data: Data) -> None:
    _step(data, 2)["materializesOutput"] = "digest.csv"


def _unmaterialized(data: Data) -> None:
    del _step(data, 3)["materializesOutput"]


def _undeclared_source(data: Data) -> None:
    _a(data)["inputs"][2]["resolution"]["source"]["actionRef"] = "aileron:metrics.other"


def _no_environment(data: Data) -> None:
    del _a(data)["environment"]
    _tool_step(data)


def _add_tool(text: str) -> Callable[[Data], None]:
    def mutate(data: Data) -> None:
        _a(data)["environment"]["tools"].append(text)

    return mutate


def _set_tool(text: str) -> Callable[[Data], None]:
    return _set_tools([text])


def _set_tools(texts: list[str]) -> Callable[[Data], None]:
    def mutate(data: Data) -> None:
        _a(data)["environment"]["tools"] = texts

    return mutate


def _tool_step_with(**extra: Any) -> Callable[[Data], None]:
    def mutate(data: Data) -> None:
        _tool_step(data, **extra)

    return mutate


def _credential_key(key: str, value: Any) -> Callable[[Data], None]:
    def mutate(data: Data) -> None:
        _contract(data)["credential"][key] = value

    return mutate


def _description(value: str) -> Callable[[Data], None]:
    def mutate(data: Data) -> None:
        _a(data)["inputs"][0]["description"] = value

    return mutate


def _stale_step_trust(data: Data) -> None:
    _tool_step(data, trustContract={"hosts": ["s3.amazonaws.com"]})
    _a(data)["lock"] = {"stepTrust": {"post_process": {"hosts": ["evil.example"]}}}


MUTATIONS: list[tuple[str, Callable[[Data], None], str]] = [
    ("duplicate-step-id", _dup_step, "flightplan.duplicate_step_id"),
    ("duplicate-input", _dup_input, "flightplan.duplicate_input"),
    ("duplicate-output", _dup_output, "flightplan.duplicate_output"),
    ("duplicate-action", _dup_action, "flightplan.duplicate_action"),
    ("duplicate-step-output", _dup_step_output, "flightplan.duplicate_step_output"),
    (
        "binding-undeclared-input",
        lambda d: _step(d, 0)["args"].update(as_of="inputs.as_at"),
        "flightplan.unknown_input",
    ),
    (
        "binding-unknown-step",
        lambda d: _step(d, 3)["args"].update(body="steps.summarise.issue_body"),
        "flightplan.unknown_step",
    ),
    (
        "binding-unknown-output",
        lambda d: _step(d, 3)["args"].update(body="steps.summarize.body"),
        "flightplan.unknown_step_output",
    ),
    (
        "binding-is-a-value",
        lambda d: _step(d, 0)["args"].update(window_days="7"),
        "flightplan.invalid_binding",
    ),
    ("cycle", _cycle, "flightplan.cycle"),
    ("self-loop", _self_loop, "flightplan.cycle"),
    (
        "undeclared-action",
        _set(lambda d: _step(d, 3), "actionRef", "aileron:tracker.close_issue"),
        "flightplan.undeclared_action",
    ),
    ("undeclared-source-action", _undeclared_source, "flightplan.undeclared_source_action"),
    (
        "unknown-materialized-output",
        _set(lambda d: _step(d, 1), "materializesOutput", "digest.tsv"),
        "flightplan.unknown_output",
    ),
    ("materialized-twice", _two_materialize, "flightplan.output_materialized_twice"),
    ("output-not-materialized", _unmaterialized, "flightplan.output_not_materialized"),
    (
        "model-on-transform",
        _set(lambda d: _step(d, 1), "model", "claude"),
        "flightplan.llm_key_outside_seam",
    ),
    (
        "prompt-on-action-call",
        _set(lambda d: _step(d, 0), "prompt", "summarize"),
        "flightplan.llm_key_outside_seam",
    ),
    ("llm-on-tool", _tool_step_with(llm={"provider": "x"}), "flightplan.llm_key_outside_seam"),
    (
        "completion-on-action-call",
        _set(lambda d: _step(d, 3), "completion", True),
        "flightplan.llm_key_outside_seam",
    ),
    ("unknown-tool", _add_tool("curl@8"), "flightplan.unknown_tool"),
    ("tool-version-bad-grammar", _set_tool("aws-cli@latest"), "flightplan.invalid_tool_version"),
    ("environment-no-tool-no-image", _set_tools([]), "flightplan.empty_environment"),
    ("tool-without-version", _set_tool("aws-cli"), "flightplan.invalid_tool_ref"),
    ("tool-step-no-environment", _no_environment, "flightplan.tool_step_without_environment"),
    (
        "tool-step-undeclared-program",
        _tool_step_with(command=["kubectl", "get", "pods"]),
        "flightplan.undeclared_program",
    ),
    (
        "tool-step-empty-contract",
        _tool_step_with(trustContract={}),
        "flightplan.empty_trust_contract",
    ),
    ("contract-token-key", _credential_key("token", "abc"), "flightplan.secret_key"),
    ("contract-password-key", _credential_key("password", "pw"), "flightplan.secret_key"),
    ("contract-apikey-key", _credential_key("apiKey", "k"), "flightplan.secret_key"),
    (
        "contract-client-secret",
        lambda d: _contract(d, 1)["oauth"].update(clientSecret="s"),
        "flightplan.secret_key",
    ),
    ("step-value-key", _set(lambda d: _step(d, 1), "value", "42"), "flightplan.secret_key"),
    (
        "tool-step-secret-in-contract",
        _tool_step_with(trustContract={"hosts": ["s3.amazonaws.com"], "secret": "x"}),
        "flightplan.secret_key",
    ),
    (
        "openai-key-in-description",
        _description("use sk-proj-AbCdEfGhIjKlMnOpQrStUv123456"),
        "flightplan.secret_value",
    ),
    (
        "github-token-in-description",
        _description("ghp_16C7e42F292c6912E7710c838347Ae178B4a"),
        "flightplan.secret_value",
    ),
    (
        "aws-key-in-identity-label",
        _credential_key("identityLabel", "AKIAIOSFODNN7EXAMPLE"),
        "flightplan.secret_value",
    ),
    (
        "slack-token-in-audit-sink",
        lambda d: _contract(d)["audit"].update(sink="xoxb-123456789012-abcdefghij"),
        "flightplan.secret_value",
    ),
    (
        "high-entropy-token-in-redaction",
        lambda d: _contract(d)["redaction"][0].update(field="q8Zr2LmX0vT7bN4kP1sW9dYc6HgJ3fUe"),
        "flightplan.secret_value",
    ),
    (
        "private-key-in-license",
        lambda d: d.update(license="-----BEGIN PRIVATE KEY-----\nMC4CAQAw\n"),
        "flightplan.secret_value",
    ),
    ("lock-step-trust-differs", _stale_step_trust, "flightplan.step_trust_mismatch"),
    (
        "jwt-in-verification-path",
        lambda d: _contract(d)["verification"].update(
            path="/v2/health?t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl"
        ),
        "flightplan.secret_value",
    ),
]


def test_mutation_suite_has_at_least_thirty_variants() -> None:
    assert len(MUTATIONS) >= 30
    assert len({name for name, _, _ in MUTATIONS}) == len(MUTATIONS)


@pytest.mark.parametrize(
    ("mutate", "code"), [(m, c) for _, m, c in MUTATIONS], ids=[n for n, _, _ in MUTATIONS]
)
def test_mutant_is_rejected_with_its_code(mutate: Callable[[Data], None], code: str) -> None:
    data = example_data()
    mutate(data)
    diags = lint_document(document(data))
    errors = {d.code for d in diags if d.is_error}
    assert code in errors, [d.code for d in diags]
