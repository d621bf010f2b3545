"""Issue 32: the install order of Features follows `dependsOn` (hard: the
dependency must be composed too) and `installsAfter` (soft), else the tool
names' order; a cycle is `compose.feature_cycle`, naming each Feature and the
field that closes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from flightdeck.flightplan import FeaturePin
from flightdeck.launch import LaunchError
from flightdeck.launch.compose._feature import Feature
from flightdeck.launch.compose._order import install_order

DIGEST = "@sha256:" + "a" * 64


def _feature(tool: str, depends: tuple[str, ...] = (), after: tuple[str, ...] = ()) -> Feature:
    reference = f"reg.example/features/{tool}:1{DIGEST}"
    pin = FeaturePin(tool, "1", "1.0.0", reference, {}, (tool,))
    pinned = f"reg.example/features/{tool}{DIGEST}"
    return Feature(pin, pinned, Path("/nowhere"), {}, {}, f"{tool}-id", depends, after)


def _order(*features: Feature) -> list[str]:
    return [f.pin.tool for f in install_order(features)]


def test_without_dependencies_the_tool_names_decide() -> None:
    assert _order(_feature("a"), _feature("b"), _feature("c")) == ["a", "b", "c"]


def test_depends_on_and_installs_after_come_first() -> None:
    a = _feature("a", depends=("reg.example/features/c:2",))  # a tag (or none) matches
    b = _feature("b", after=("REG.example/features/a",))  # case-insensitive
    assert _order(a, b, _feature("c")) == ["c", "a", "b"]
    # A bare name matches a Feature's id; one never composed is ignored when soft.
    d = _feature("d", after=("e-id", "reg.example/features/absent"))
    assert _order(d, _feature("e")) == ["e", "d"]
    assert _order(_feature("a", depends=("reg.example/features/a",))) == ["a"]  # itself


def test_a_missing_hard_dependency_is_refused() -> None:
    with pytest.raises(LaunchError) as caught:
        install_order([_feature("a", depends=("reg.example/features/common-utils",))])
    assert caught.value.code == "compose.missing_dependency"
    assert "common-utils" in caught.value.message


def test_a_cycle_is_refused_naming_each_link() -> None:
    a = _feature("a", depends=("reg.example/features/b",))
    b = _feature("b", after=("reg.example/features/c",))
    c = _feature("c", depends=("a-id",))
    with pytest.raises(LaunchError) as caught:
        install_order([a, b, c, _feature("d")])
    assert caught.value.code == "compose.feature_cycle"
    assert caught.value.message.endswith(
        'a@1.0.0 dependsOn["reg.example/features/b"] -> b@1.0.0'
        ' installsAfter["reg.example/features/c"] -> c@1.0.0 dependsOn["a-id"]'
    )


@pytest.mark.parametrize(
    "metadata",
    [{"dependsOn": ["x"]}, {"dependsOn": {"x": 1}}, {"installsAfter": "x"}, {"installsAfter": [1]}],
)
def test_malformed_order_fields_are_a_bad_feature(metadata: dict[str, object]) -> None:
    from flightdeck.launch.compose._feature import _order_fields

    with pytest.raises(LaunchError) as caught:
        _order_fields(metadata, _feature("a").pin)
    assert caught.value.code == "compose.bad_feature"
