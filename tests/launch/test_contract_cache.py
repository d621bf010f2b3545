"""An action call reads its trust contract once per contract dict
(`_action.read_contract`): the same answer as reading it every time, and a
dict changed in place is read again."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.flightplan import TrustContract
from flightdeck.launch import ActionCall
from flightdeck.launch.steps import _action
from flightdeck.launch.steps._action import read_contract

from .conftest import Harness, contract, write_plan

_TEXT = st.text(max_size=6)
_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), _TEXT)
_FIELDS = st.sampled_from(
    ["approved-input", "operation-effect", "result", "network-target", "identity-label"]
)
CONTRACTS = st.fixed_dictionaries(
    {},
    optional={
        "credential": st.fixed_dictionaries(
            {},
            optional={
                "kind": st.one_of(_SCALAR, st.sampled_from(["none", "api-key"])),
                "placement": _SCALAR,
                "identityLabel": _SCALAR,
            },
        ),
        "hosts": st.lists(st.one_of(_TEXT, st.integers()), max_size=3),
        "paths": st.lists(_TEXT, max_size=2),
        "effect": st.one_of(_SCALAR, st.sampled_from(["read", "write"])),
        "idempotency": st.fixed_dictionaries(
            {}, optional={"safeToRetry": _SCALAR, "idempotencyKey": _SCALAR}
        ),
        "redaction": st.lists(
            st.one_of(
                st.fixed_dictionaries({"field": _TEXT, "rule": st.sampled_from(["mask", "drop"])}),
                _SCALAR,
            ),
            max_size=2,
        ),
        "audit": st.fixed_dictionaries(
            {}, optional={"fields": st.lists(_FIELDS, max_size=3), "sink": _SCALAR}
        ),
    },
)


@settings(max_examples=200, deadline=None)
@given(CONTRACTS, CONTRACTS)
def test_a_remembered_contract_equals_a_fresh_read(first: dict[str, Any], second: Any) -> None:
    assert read_contract(first) == TrustContract.read(first)
    assert read_contract(first) == TrustContract.read(first)  # from the cache
    # Changed in place (any field, nested ones too): read again, not remembered.
    first.clear()
    first.update(second)
    assert read_contract(first) == TrustContract.read(first)


def test_a_nested_change_in_place_is_seen() -> None:
    raw = copy.deepcopy(contract(hosts=["a.example.com"]))  # the nested dicts are shared
    assert read_contract(raw).hosts == ("a.example.com",)  # type: ignore[union-attr]
    raw["hosts"].append("b.example.com")
    assert read_contract(raw).hosts == ("a.example.com", "b.example.com")  # type: ignore[union-attr]
    raw["audit"]["fields"] = ["result"]
    assert read_contract(raw).audit_fields == ("result",)  # type: ignore[union-attr]


def test_the_cache_is_bounded() -> None:
    kept = [contract(effect=f"e{i}") for i in range(_action._MAX_CONTRACTS * 3)]
    for raw in kept:
        assert read_contract(raw) == TrustContract.read(raw)
    assert len(_action._CONTRACTS) <= _action._MAX_CONTRACTS


def test_calls_of_one_action_share_one_contract_dict_and_audit_as_before(
    harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[int] = []
    orig = _action.read_contract

    def spy(raw: dict[str, Any]) -> TrustContract | None:
        seen.append(id(raw))
        return orig(raw)

    calls: list[ActionCall] = []
    harness.handlers["m.read"] = lambda call: calls.append(call) or {"v": call.step_id}
    plan = write_plan(
        tmp_path,
        actions={"aileron:m.read": contract()},
        steps=[
            {"id": f"c{i}", "kind": "action-call", "actionRef": "aileron:m.read", "outputs": ["v"]}
            for i in range(5)
        ],
    )
    monkeypatch.setattr(_action, "read_contract", spy)
    result = harness.run(plan)
    assert result.status == "completed"
    assert len(seen) == 5 and len(set(seen)) == 1
    records = harness.records("launch.action_call")
    assert [r["step"] for r in records] == [f"c{i}" for i in range(5)]
    assert all(r["operation-effect"] == "read" for r in records)
