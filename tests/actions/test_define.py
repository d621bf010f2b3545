"""define_action / load_action (AIP-39): fields, defaults, derivation and error codes."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import flightdeck.actions as fa
from flightdeck.actions import (
    ActionDefinitionError,
    ActionHandle,
    define_action,
    defineAction,
    load_action,
)

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"
BASE = {"id": "storage:commit", "description": "Commit."}


def _codes(**fields: Any) -> list[tuple[str, str]]:
    with pytest.raises(ActionDefinitionError) as info:
        define_action({**BASE, **fields})
    return [(d.code, d.pointer) for d in info.value.diagnostics]


def test_public_surface_is_sorted_and_complete() -> None:
    assert fa.__all__ == sorted(fa.__all__, key=lambda s: (not s.isupper(), s))
    assert all(hasattr(fa, n) for n in fa.__all__)


def test_aip39_define_action_canonical_name() -> None:
    assert defineAction is define_action


def test_aip39_defaults_follow_the_spec_table() -> None:
    a = define_action(BASE)
    assert isinstance(a, ActionHandle)
    assert (a.schema, a.version, a.category) == ("action/v1", "1.0.0", "")
    assert a.mutates == () and a.requires.to_dict() == {"network": [], "secrets": [], "tools": []}
    assert (a.approval, a.risk_level) == ("auto", 0)
    assert a.fires_events == a.implementations == a.tags == a.examples == ()
    assert dict(a.metadata) == {}


def test_aip39_verb_and_target_kind_derive_from_the_id() -> None:
    a = define_action(BASE)
    assert (a.verb, a.target_kind) == ("commit", "storage")
    b = define_action({**BASE, "verb": "save", "target_kind": "repo"})
    assert (b.verb, b.target_kind) == ("save", "repo")
    c = define_action({"id": "reindex", "description": "x"})
    assert (c.verb, c.target_kind) == ("reindex", "")


def test_handle_is_immutable_and_accepts_camel_case() -> None:
    a = defineAction(
        id="sandbox:execute",
        description="Run.",
        riskLevel=2,
        targetKind="sandbox",
        firesEvents=["started"],
        metadata={"x": {"y": [1]}},
    )
    assert (a.riskLevel, a.targetKind, a.firesEvents) == (2, "sandbox", ("started",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.id = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        a.metadata["x"] = 1  # type: ignore[index]
    assert a.to_dict()["metadata"] == {"x": {"y": [1]}}


@pytest.mark.parametrize(
    "ident",
    ["storage:commit", "ab", "a.b-c:d.e-f", "x1:y2"],
)
def test_aip39_id_format_accepts(ident: str) -> None:
    assert define_action({**BASE, "id": ident}).id == ident


@pytest.mark.parametrize(
    "ident",
    ["Storage:commit", "a", "storage:commit:x", ":commit", "storage:", "-x:y", "a" * 81, 7, None],
)
def test_aip39_id_format_rejects_with_code(ident: Any) -> None:
    assert _codes(id=ident) == [("action.invalid_id", "/id")]


def test_description_over_2000_chars_is_refused() -> None:
    assert define_action({**BASE, "description": "x" * 2000}).description
    assert _codes(description="x" * 2001) == [("action.description_too_long", "/description")]
    assert _codes(description="") == [("action.invalid_description", "/description")]


@pytest.mark.parametrize("risk", [-1, 4, True, "1", 1.5])
def test_risk_level_outside_0_to_3_is_refused(risk: Any) -> None:
    assert _codes(risk_level=risk) == [("action.invalid_risk_level", "/risk_level")]


@pytest.mark.parametrize("approval", ["auto", "always", "on-mutate", "policy:governance/sign"])
def test_known_approval_classes(approval: str) -> None:
    assert define_action({**BASE, "approval": approval}).approval == approval


@pytest.mark.parametrize("approval", ["never", "Always", "policy:", "", 1])
def test_unknown_approval_class_is_refused(approval: Any) -> None:
    assert _codes(approval=approval) == [("action.unknown_approval_class", "/approval")]


def test_every_problem_is_reported_at_once() -> None:
    got = _codes(
        id="BAD",
        risk_level=9,
        approval="sometimes",
        version="one",
        mutates=["storage"],
        requires={"disk": []},
        implementations=[{"kind": "robot", "ref": "x"}],
        examples=[{"name": "n"}],
        colour="blue",
    )
    assert sorted(got) == sorted(
        [
            ("action.unknown_field", "/colour"),
            ("action.invalid_id", "/id"),
            ("action.invalid_version", "/version"),
            ("action.unknown_approval_class", "/approval"),
            ("action.invalid_risk_level", "/risk_level"),
            ("action.invalid_requires", "/requires/disk"),
            ("action.invalid_mutates", "/mutates/0"),
            ("action.invalid_implementations", "/implementations/0"),
            ("action.invalid_examples", "/examples/0"),
        ]
    )


ACTIONS = sorted((CORPUS / "libraries" / "standard" / ".actions").iterdir())


def test_the_standard_library_has_ten_actions() -> None:
    assert len(ACTIONS) == 10


@pytest.mark.parametrize("folder", ACTIONS, ids=[p.name for p in ACTIONS])
def test_aip39_standard_library_actions_load(folder: Path) -> None:
    a = load_action(folder)
    assert a.id.replace(":", "-") == folder.name
    assert a.source == (folder / "ACTION.md").resolve()
    assert len(a.sha256) == 64
    assert load_action(folder / "ACTION.md") is a, "cached by content hash"


INVALID = sorted((CORPUS / "invalid" / "action").glob("*.md"))


@pytest.mark.parametrize("path", INVALID, ids=[p.stem for p in INVALID])
def test_invalid_action_files_fail_with_located_codes(path: Path) -> None:
    with pytest.raises(ActionDefinitionError) as info:
        load_action(path)
    assert info.value.diagnostics
    for d in info.value.diagnostics:
        assert d.code and d.file == str(path) and d.line is not None


def test_define_errors_of_a_loaded_file_are_located(tmp_path: Path) -> None:
    # Valid for the schema, invalid for define_action: located at the field's line.
    path = tmp_path / "ACTION.md"
    path.write_text("---\nschema: action/v1\nid: a:b\ndescription: d\nrisk_level: 1\n---\n")
    assert load_action(path).risk_level == 1
    path.write_text("---\nschema: action/v1\nid: a:b\ndescription: d\nrisk_level: 7\n---\n")
    with pytest.raises(ActionDefinitionError) as info:
        load_action(path)
    d = info.value.diagnostics[0]
    assert (d.file, d.line) == (str(path), 5)


def test_aip39_parsing_must_not_do_io_beyond_the_file() -> None:
    """No network, no registry lookups: load_action opens only the ACTION.md
    (plus flightdeck's own packaged schemas)."""
    target = CORPUS / "libraries" / "standard" / ".actions" / "storage-push" / "ACTION.md"
    code = textwrap.dedent(
        f"""
        import sys
        import flightdeck
        from flightdeck.actions import load_action, define_action
        pkg = flightdeck.__path__[0]
        define_action({{"id": "a:b", "description": "warm"}})
        seen = []
        def hook(name, args):
            if name in ("open", "socket.connect", "socket.getaddrinfo", "os.listdir", "os.scandir"):
                t = str(args[0]) if args else ""
                ours = t.startswith(pkg) or t.endswith((".py", ".pyc")) or "__pycache__" in t
                if not ours:
                    seen.append((name, t))
        sys.addaudithook(hook)
        load_action({str(target)!r})
        print(seen)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str([("open", str(target))])


def test_aip39_hosts_must_function_reading_only_the_frontmatter(tmp_path: Path) -> None:
    """The body is informational: two files differing only in body define the same action."""
    front = "---\nschema: action/v1\nid: a:b\ndescription: d\nrisk_level: 2\n---\n"
    one = tmp_path / "one" / "ACTION.md"
    two = tmp_path / "two" / "ACTION.md"
    for path, body in ((one, "## Side effects\nnone\n"), (two, "mutates: [everything]\n")):
        path.parent.mkdir()
        path.write_text(front + body)
    a, b = load_action(one), load_action(two)
    assert a.to_dict() == b.to_dict()
    assert a.sha256 != b.sha256, "the trust hash still covers the whole file"


def test_aip39_implementations_must_be_treated_as_a_hint() -> None:
    """Listing a tool under `implementations` gives it nothing: implementors link bottom-up."""
    action = define_action(
        {**BASE, "risk_level": 2, "implementations": [{"kind": "tool", "ref": "git.commit"}]}
    )
    assert action.implementations[0].ref == "git.commit"
    result = fa.check_narrowing({"id": "git.commit", "risk_level": 0}, None)
    assert result.orphan and result.merged is not None and result.merged.risk_level == 0
