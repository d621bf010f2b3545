"""A transform's deny-all policy is stamped from one built per transform
name, secrets file and working directory (`_transform_step._policy`): each
step's equals what `Policy.deny_all` builds at that moment, and records
nothing another step's records."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flightdeck.guard import Policy
from flightdeck.launch.steps import _transform_step
from flightdeck.launch.steps._transform_step import _LIMIT, _policy

_NAMES = st.sampled_from(["identity", "sum", "odd 'name'"])
_PATHS = st.sampled_from(
    ["/home/u/.config/flightdeck/secrets.toml", "rel/secrets.toml", "../x/./secrets.toml", "s"]
)


def _fields(policy: Policy) -> dict[str, Any]:
    # Policy compares by identity (eq=False): compare what it holds.
    return {f.name: getattr(policy, f.name) for f in dataclasses.fields(policy)}


def _slow(name: str, secrets: str) -> Policy:
    return Policy.deny_all(frozenset({secrets}), owner=f"transform {name!r}", limit=_LIMIT)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(_NAMES, _PATHS, st.booleans()), min_size=1, max_size=12))
def test_a_stamped_policy_equals_a_freshly_built_one(
    calls: list[tuple[str, str, bool]],
) -> None:
    here = os.getcwd()
    try:
        for name, secrets, elsewhere in calls:
            os.chdir("/tmp" if elsewhere else here)
            fast = _policy(name, secrets)
            assert _fields(fast) == _fields(_slow(name, secrets))
    finally:
        os.chdir(here)


def test_each_step_records_into_its_own_lists(tmp_path: Path) -> None:
    first = _policy("identity", str(tmp_path / "secrets.toml"))
    second = _policy("identity", str(tmp_path / "secrets.toml"))
    assert first is not second
    for name in ("observed", "contacted", "denied", "addresses"):
        assert getattr(first, name) is not getattr(second, name)


def test_the_templates_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_transform_step, "_TEMPLATES", {})
    for index in range(_transform_step._MAX_TEMPLATES * 2):
        assert _fields(_policy(f"t{index}", "/s")) == _fields(_slow(f"t{index}", "/s"))
    assert len(_transform_step._TEMPLATES) <= _transform_step._MAX_TEMPLATES
