"""The catalog file of issue 32: each refusal, resolution, and the lint
against it (no registry needed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from flightdeck.flightplan import FeaturePin, FlightPlanError, load_feature_catalog, load_plan
from flightdeck.flightplan._environment import compose_environment, with_catalog
from flightdeck.flightplan.model._features import add_feature, parse_feature_catalog

DIGEST = "sha256:" + "a" * 64
GOOD: dict[str, Any] = {
    "catalogVersion": 1,
    "runnerBase": "127.0.0.1:5000/runner@" + DIGEST,
    "tools": {
        "hello": {
            "programs": ["hello", "hi"],
            "versions": {
                "1.2.0": {"feature": "127.0.0.1:5000/f/hello:1@" + DIGEST},
                "1.10.0": {"feature": "127.0.0.1:5000/f/hello@" + DIGEST, "options": {"a": True}},
                "2.0.1": {"feature": "127.0.0.1:5000/f/hello@" + DIGEST},
            },
        }
    },
}


def _with(change: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(json.dumps(GOOD))
    change(data)
    return data


def _tool(data: dict[str, Any]) -> dict[str, Any]:
    return data["tools"]["hello"]  # type: ignore[no-any-return]


def _version(data: dict[str, Any]) -> dict[str, Any]:
    return _tool(data)["versions"]["1.2.0"]  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda d: d.update(catalogVersion=2), "catalogVersion"),
        (lambda d: d.update(runnerBase=""), "runnerBase"),
        (lambda d: d.update(runnerBase=5), "runnerBase"),
        (lambda d: d.update(tools=[]), "tools"),
        (lambda d: d["tools"].update({"Bad Name": {}}), "a lowercase name"),
        (lambda d: d["tools"].update({"x": []}), "tools.x"),
        (lambda d: _tool(d).update(programs="hello"), "programs"),
        (lambda d: _tool(d).update(programs=["a b"]), "programs"),
        (lambda d: _tool(d).update(versions={}), "versions"),
        (lambda d: _tool(d).update(versions=[]), "versions"),
        (lambda d: _tool(d)["versions"].update({"2.x": _version(d)}), "digits and dots"),
        (lambda d: _tool(d)["versions"].update({"3.0.0": "ref"}), "an object"),
        (lambda d: _version(d).update(feature="127.0.0.1:5000/f/hello:1"), "pinned by"),
        (lambda d: _version(d).update(feature=None), "pinned by"),
        (lambda d: _version(d).update(options=[]), "options"),
        (lambda d: _version(d).update(options={"a": 1}), "options"),
        (lambda d: _version(d).update(options={"a b": "x"}), "options"),
        (lambda d: _version(d).update(network=True), "must be a list of hosts"),
        (lambda d: _version(d).update(network=["a b"]), "must be a list of hosts"),
        (lambda d: _version(d).update(mirror="x"), "unknown keys mirror"),
    ],
)
def test_each_malformed_catalog_is_refused(change: Any, said: str) -> None:
    with pytest.raises(FlightPlanError) as caught:
        parse_feature_catalog(_with(change), Path("c.json"))
    assert caught.value.code == "catalog.invalid"
    assert said in caught.value.message


def test_versions_resolve_to_one_exact_version() -> None:
    catalog = parse_feature_catalog(GOOD, Path("c.json"))
    assert catalog.as_tools()["hello"].versions == ("1.2.0", "1.10.0", "2.0.1")
    assert [
        catalog.resolve("hello", spec).version  # type: ignore[union-attr]
        for spec in ("1", "1.x", "1.2.0", "2")
    ] == ["1.10.0", "1.10.0", "1.2.0", "2.0.1"]
    assert catalog.resolve("hello", "3") is None
    assert catalog.resolve("nope", "1") is None
    pin = catalog.resolve("hello", "1.10")
    assert pin is not None and dict(pin.options) == {"a": "true"}
    assert pin.programs == ("hello", "hi") and pin.requested == "1.10"


def test_files_too_large_or_not_json(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (4 << 20) + b"{}")
    broken = tmp_path / "broken.json"
    broken.write_text('{"catalogVersion": 1,')
    cases = (
        (big, "catalog.invalid"),
        (broken, "catalog.invalid"),
        (tmp_path, "catalog.unreadable"),
    )
    for path, code in cases:
        with pytest.raises(FlightPlanError) as caught:
            load_feature_catalog(path)
        assert caught.value.code == code


def _plan(tmp_path: Path, tools: list[str], command: str = "hello") -> Path:
    path = tmp_path / "SKILL.md"
    step = {"id": "s", "kind": "tool", "command": [command], "outputs": ["files"]}
    block: dict[str, Any] = {
        "schemaVersion": "aileron.flightplan.v1",
        "environment": {"tools": tools},
    }
    block.update(inputs=[], outputs=[], steps=[step])
    path.write_text(f"---\nname: p\ndescription: d\naileron: {json.dumps(block)}\n---\n# P\n")
    return path


def test_lint_against_the_catalog_is_located_and_strict(tmp_path: Path) -> None:
    catalog = parse_feature_catalog(GOOD, tmp_path / "c.json")
    load = load_plan(_plan(tmp_path, ["hello@3", "nope@1", "hello@1"], "hi"))
    shipped = {d.code for d in load.errors}
    assert "flightplan.unknown_tool" in shipped  # the shipped catalog has no hello
    judged = with_catalog(load, catalog)
    found = {(d.code, d.pointer, d.severity.value) for d in judged.diagnostics if d.line}
    assert all(str(d.file).endswith("SKILL.md") for d in judged.diagnostics if d.line)
    assert ("flightplan.unknown_tool_version", "/aileron/environment/tools/0", "error") in found
    assert ("flightplan.unknown_tool", "/aileron/environment/tools/1", "error") in found
    assert len(judged.errors) == 2  # `hi` is a program of hello: no undeclared_program
    clean = with_catalog(load_plan(_plan(tmp_path, ["hello@1"])), catalog)
    assert clean.errors == ()


class _Resolver:
    def __init__(self, answer: str | None) -> None:
        self.answer = answer

    def resolve(self, ref: str) -> str | None:
        return self.answer


class _Composer:
    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    def compose(self, base: str, features: Any) -> Any:
        from flightdeck.flightplan import ComposedImage

        self.calls.append((base, [f.tool for f in features]))
        return ComposedImage("sha256:" + "b" * 64, ())


def test_compose_environment_refusals(tmp_path: Path) -> None:
    data = _with(lambda d: d.pop("runnerBase"))
    catalog = parse_feature_catalog(data, tmp_path / "c.json")
    plan = load_plan(_plan(tmp_path, ["hello@1"])).plan
    assert plan is not None
    base = "127.0.0.1:5000/runner@" + DIGEST
    cases = [
        (catalog, _Resolver(base), _Composer(), "freeze.no_runner_base"),
        (
            parse_feature_catalog(GOOD, tmp_path),
            _Resolver(None),
            _Composer(),
            "freeze.image_unresolved",
        ),
        (
            parse_feature_catalog(GOOD, tmp_path),
            _Resolver("x:latest"),
            _Composer(),
            "freeze.image_unresolved",
        ),
        (parse_feature_catalog(GOOD, tmp_path), _Resolver(base), None, "freeze.no_composer"),
    ]
    for cat, resolver, composer, code in cases:
        with pytest.raises(FlightPlanError) as caught:
            compose_environment(plan, cat, resolver, composer)
        assert caught.value.code == code
    composer = _Composer()
    images, caps = compose_environment(
        plan, parse_feature_catalog(GOOD, tmp_path), _Resolver(base), composer
    )
    assert composer.calls == [(base, ["hello"])]
    assert images[0].local_tag is not None and images[0].local_tag.startswith(
        "flightdeck/composed:"
    )
    assert [c.to_data() for c in caps] == ["hello@1.10.0"]
    unresolved = load_plan(_plan(tmp_path, ["hello@9"])).plan
    assert unresolved is not None
    with pytest.raises(FlightPlanError) as caught:
        compose_environment(
            unresolved, parse_feature_catalog(GOOD, tmp_path), _Resolver(base), composer
        )
    assert caught.value.code == "freeze.tool_unresolved"


def test_add_feature_writes_and_refuses_a_changed_version(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    pin = FeaturePin("hello", "1.0.0", "1.0.0", "r/f@" + DIGEST, {"a": "b"}, ("hello",))
    add_feature(path, pin, runner_base="r/base@" + DIGEST)
    add_feature(path, pin)  # the same again: no change
    catalog = load_feature_catalog(path)
    assert catalog.runner_base == "r/base@" + DIGEST
    assert dict(catalog.tools["hello"]["1.0.0"].options) == {"a": "b"}
    other = FeaturePin("hello", "1.0.0", "1.0.0", "r/g@" + DIGEST, {}, ("hello",))
    with pytest.raises(FlightPlanError) as caught:
        add_feature(path, other)
    assert caught.value.code == "catalog.version_exists"
    assert load_feature_catalog(path).tools["hello"]["1.0.0"].feature == "r/f@" + DIGEST
