"""Inheritance with narrowing (AIP-39): every floor, every code, all at once."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flightdeck.actions import (
    VIOLATION_CODES,
    approval_at_least,
    check_narrowing,
    covers,
    define_action,
)

ACTION = define_action(
    {
        "id": "storage:push",
        "description": "Push.",
        "category": "filesystem",
        "mutates": ["storage:*", "network:*"],
        "risk_level": 2,
        "approval": "on-mutate",
        "requires": {"network": ["github.com"], "secrets": ["gh-token"], "tools": ["git.status"]},
        "fires_events": ["push-started", "push-completed"],
    }
)

# Each implementor violates exactly one floor.
ONE_FLOOR: list[tuple[str, dict[str, Any], str]] = [
    ("drops_mutates", {"mutates": ["storage:*"]}, "/mutates"),
    ("lowers_risk_level", {"risk_level": 1}, "/risk_level"),
    ("relaxes_approval", {"approval": "auto"}, "/approval"),
    ("drops_required_network", {"requires": {"network": []}}, "/requires/network"),
    ("drops_required_secrets", {"requires": {"secrets": ["other"]}}, "/requires/secrets"),
    ("drops_required_tools", {"requires": {"tools": []}}, "/requires/tools"),
    ("drops_fired_event", {"fires_events": ["push-started"]}, "/fires_events"),
    ("overrides_category", {"category": "vcs"}, "/category"),
    ("overrides_target_kind", {"target_kind": "repo"}, "/target_kind"),
]


def test_the_codes_are_exactly_the_nine_floors() -> None:
    assert sorted(VIOLATION_CODES) == sorted(code for code, _, _ in ONE_FLOOR)


@pytest.mark.parametrize(("code", "view", "pointer"), ONE_FLOOR, ids=[c for c, _, _ in ONE_FLOOR])
def test_aip39_each_floor_violation_has_its_own_code(
    code: str, view: dict[str, Any], pointer: str
) -> None:
    result = check_narrowing(view, ACTION)
    assert [(d.code, d.pointer) for d in result.violations] == [(code, pointer)]
    assert result.merged is None and not result.ok and not result.orphan


def test_aip39_all_violations_are_reported_at_once() -> None:
    everything = {
        "mutates": [],
        "risk_level": 0,
        "approval": "auto",
        "requires": {"network": [], "secrets": [], "tools": []},
        "fires_events": [],
        "category": "x",
        "target_kind": "y",
    }
    result = check_narrowing(everything, ACTION)
    # Two mutates and two events are dropped: one diagnostic each.
    assert sorted(result.codes) == sorted([*VIOLATION_CODES, "drops_mutates", "drops_fired_event"])


def test_aip39_mutates_must_be_inherited_and_may_grow() -> None:
    ok = check_narrowing({"mutates": ["network:*", "storage:*", "database:x"]}, ACTION)
    assert ok.ok and ok.merged is not None
    assert ok.merged.mutates == ("storage:*", "network:*", "database:x")
    assert ok.merged.origins["mutates"] == "implementor"


def test_broader_mutates_cover_narrower_ones_and_not_the_reverse() -> None:
    scratch = define_action(
        {"id": "storage:tidy", "description": "x", "mutates": ["storage:scratch"]}
    )
    assert check_narrowing({"mutates": ["storage:*"]}, scratch).ok
    assert check_narrowing({"mutates": ["*"]}, scratch).ok
    wide = define_action({"id": "storage:tidy", "description": "x", "mutates": ["storage:*"]})
    assert check_narrowing({"mutates": ["storage:scratch"]}, wide).codes == ["drops_mutates"]
    assert covers("workspace:/notes/*", "workspace:/notes/a.md")
    assert covers("workspace:/", "workspace:/notes/a.md")
    assert not covers("workspace:/notes/*", "workspace:/*")
    assert not covers("storage:*", "network:*")


def test_aip39_risk_level_may_rise_never_lower() -> None:
    result = check_narrowing({"risk_level": 3}, ACTION)
    assert result.merged is not None and result.merged.risk_level == 3


@pytest.mark.parametrize(
    ("impl", "floor", "allowed"),
    [
        ("auto", "auto", True),
        ("on-mutate", "auto", True),
        ("always", "auto", True),
        ("always", "on-mutate", True),
        ("auto", "on-mutate", False),
        ("on-mutate", "always", False),
        ("auto", "always", False),
        ("policy:p", "policy:p", True),
        ("always", "policy:p", True),
        ("policy:q", "policy:p", False),
        ("on-mutate", "policy:p", False),
        ("auto", "policy:p", False),
        ("policy:p", "auto", True),
        ("policy:p", "on-mutate", False),
        ("policy:p", "always", False),
    ],
)
def test_approval_order_is_auto_on_mutate_always(impl: str, floor: str, allowed: bool) -> None:
    """Settled: auto < on-mutate < always; policy:<ref> only the same policy or always."""
    assert approval_at_least(impl, floor) is allowed
    action = define_action({"id": "a:b", "description": "x", "approval": floor})
    assert check_narrowing({"approval": impl}, action).ok is allowed


def test_aip39_requires_may_grow_never_shrink() -> None:
    view = {"requires": {"network": ["github.com", "api.github.com"], "secrets": ["gh-token"]}}
    result = check_narrowing(view, ACTION)
    assert result.merged is not None
    assert result.merged.requires.network == ("github.com", "api.github.com")
    assert result.merged.requires.tools == ("git.status",)  # absent: inherited


def test_aip39_fires_events_may_grow_never_drop() -> None:
    result = check_narrowing({"fires_events": ["push-completed", "push-started", "audit"]}, ACTION)
    assert result.merged is not None
    assert result.merged.fires_events == ("push-started", "push-completed", "audit")


def test_merged_view_inherits_everything_absent_and_says_where_each_value_came_from() -> None:
    result = check_narrowing(
        {
            "approval": "always",
            "description": "Push with gh.",
            "mutates": ["storage:*", "network:*"],
        },
        ACTION,
    )
    m = result.merged
    assert m is not None
    assert (m.approval, m.risk_level, m.category, m.target_kind) == (
        "always",
        2,
        "filesystem",
        "storage",
    )
    assert m.description == "Push with gh."
    assert m.action_id == "storage:push"
    assert dict(m.origins) == {
        "description": "implementor",
        "mutates": "action+implementor",
        "risk_level": "action",
        "approval": "implementor",
        "requires": "action",
        "fires_events": "action",
        "category": "action",
        "target_kind": "action",
    }


def test_equal_category_is_not_an_override() -> None:
    assert check_narrowing({"category": "filesystem", "target_kind": "storage"}, ACTION).ok


def test_aip39_implementor_without_implements_is_an_orphan() -> None:
    result = check_narrowing({"mutates": ["x:y"], "approval": "always"}, None)
    assert result.orphan and result.ok and result.merged is not None
    assert result.merged.action_id is None
    assert result.merged.origins["mutates"] == "implementor"
    assert result.merged.origins["risk_level"] == "default"


def test_camel_case_views_are_understood() -> None:
    assert check_narrowing({"riskLevel": 0}, ACTION).codes == ["lowers_risk_level"]


def test_aip39_resolvers_must_refuse_implementors_that_drop_mutates() -> None:
    result = check_narrowing({"mutates": ["network:*"]}, ACTION)
    assert result.codes == ["drops_mutates"] and result.merged is None
    assert "storage:*" in result.violations[0].message


@given(
    st.sampled_from(["storage", "network", "workspace", "database"]),
    st.text(alphabet="abc/._-", min_size=1, max_size=8),
)
def test_class_wildcard_covers_every_scope_of_its_class(cls: str, scope: str) -> None:
    entry = f"{cls}:{scope}"
    assert covers(f"{cls}:*", entry) and covers(entry, entry) and covers("*", entry)
    if scope != "*":
        assert not covers(entry, f"{cls}:*")


_entries = st.lists(
    st.sampled_from(["storage:*", "storage:scratch", "network:*", "db:x", "*"]), max_size=4
)
_view = st.fixed_dictionaries(
    {},
    optional={
        "mutates": _entries,
        "risk_level": st.integers(0, 3),
        "approval": st.sampled_from(["auto", "on-mutate", "always", "policy:p"]),
        "requires": st.fixed_dictionaries(
            {},
            optional={
                "network": st.lists(st.sampled_from(["github.com", "x.org"]), max_size=2),
                "secrets": st.lists(st.sampled_from(["gh-token", "other"]), max_size=2),
                "tools": st.lists(st.sampled_from(["git.status", "ls"]), max_size=2),
            },
        ),
        "fires_events": st.lists(
            st.sampled_from(["push-started", "push-completed", "x"]), max_size=3
        ),
    },
)


@given(_view)
def test_a_merged_view_never_widens_the_action(view: dict[str, Any]) -> None:
    """Property: either violations are reported, or the merged view honours every floor."""
    result = check_narrowing(view, ACTION)
    if not result.ok:
        assert result.merged is None and all(c in VIOLATION_CODES for c in result.codes)
        return
    m = result.merged
    assert m is not None
    assert all(any(covers(e, need) for e in m.mutates) for need in ACTION.mutates)
    assert m.risk_level >= ACTION.risk_level
    assert approval_at_least(m.approval, ACTION.approval)
    for key in ("network", "secrets", "tools"):
        assert set(getattr(ACTION.requires, key)) <= set(getattr(m.requires, key))
    assert set(ACTION.fires_events) <= set(m.fires_events)
    assert (m.category, m.target_kind) == (ACTION.category, ACTION.target_kind)
