"""The public surface, and the small grammars (bindings, tool versions)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import flightdeck.flightplan as fp
from flightdeck.flightplan import catalog, parse_binding, resolve_version

_ident = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,10}", fullmatch=True)


def test_public_names_are_exactly_the_sorted_all() -> None:
    public = sorted(name for name in dir(fp) if not name.startswith("_"))
    exported = [name for name in public if not isinstance(getattr(fp, name), type(fp))]
    assert fp.__all__ == sorted(fp.__all__)
    assert exported == sorted(fp.__all__)


@given(_ident)
def test_seed003_binding_inputs_form(name: str) -> None:
    binding = parse_binding(f"inputs.{name}")
    assert binding is not None and binding.input == name and binding.step is None


@given(_ident, _ident)
def test_seed003_binding_steps_form(step: str, output: str) -> None:
    binding = parse_binding(f"steps.{step}.{output}")
    assert binding is not None and (binding.step, binding.output) == (step, output)


@given(st.text(max_size=20))
def test_binding_is_a_reference_or_nothing(text: str) -> None:
    binding = parse_binding(text)
    if binding is not None:
        assert text.startswith(("inputs.", "steps."))
        assert not any(c.isspace() for c in text)


def test_seed003_loose_version_grammar_resolves_against_the_catalog() -> None:
    aws = catalog()["aws-cli"]
    assert resolve_version(aws, "2") == "2.22.4"
    assert resolve_version(aws, "2.x") == "2.22.4"
    assert resolve_version(aws, "2.19") == "2.19.1"
    assert resolve_version(aws, "2.19.x") == "2.19.1"
    assert resolve_version(aws, "2.19.1") == "2.19.1"
    assert resolve_version(aws, "2.19.2") is None
    assert resolve_version(aws, "x.2") is None
    assert resolve_version(aws, "latest") is None


def test_catalog_ships_the_curated_tools() -> None:
    assert set(catalog()) == {
        "aws-cli",
        "gh",
        "git",
        "jq",
        "kubectl",
        "node",
        "python",
        "terraform",
    }
    assert all(tool.versions and tool.programs for tool in catalog().values())
