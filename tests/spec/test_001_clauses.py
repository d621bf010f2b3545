"""Seed 001, AIP-39 ACTION.md: one test per MUST / MUST NOT that no other test names.

The clauses already named elsewhere are listed in docs/spec-coverage.md; the tests
here cover the remaining ones through the public API (define_tool, load_tool,
check_narrowing, resolve_action_ref)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flightdeck.actions import (
    ActionRefError,
    approval_at_least,
    check_narrowing,
    define_action,
    resolve_action_ref,
)
from flightdeck.tools import ToolDefinitionError, define_tool, load_tool

TOOL = {"name": "Tag", "id": "repo.tag", "description": "Tag a commit.", "version": "1.0.0"}


def _library(root: Path, slug: str, frontmatter: str) -> Path:
    lib = root / "lib"
    (lib / ".actions" / slug).mkdir(parents=True, exist_ok=True)
    (lib / "WORKSPACE.md").write_text('---\nid: "@acme/verbs"\n---\n')
    (lib / ".actions" / slug / "ACTION.md").write_text(
        f"---\nschema: action/v1\n{frontmatter}---\nbody\n"
    )
    return lib


def test_aip39_implementor_must_not_widen_validators_reject_widening_at_parse_time(
    tmp_path: Path,
) -> None:
    """AIP-39: 'TOOL MAY narrow (more restrictive) but MUST NOT widen. Validators
    reject widening at parse time.' Loading the TOOL.md is where it fails, located."""
    lib = _library(
        tmp_path,
        "repo-tag",
        'id: repo:tag\ndescription: d\nmutates: ["vcs:tags"]\nrisk_level: 2\napproval: always\n',
    )
    tool_dir = tmp_path / "ws" / ".tools" / "repo-tag"
    tool_dir.mkdir(parents=True)
    (tool_dir / "TOOL.md").write_text(
        "---\nname: Tag\nid: repo.tag\ndescription: Tag.\nversion: 1.0.0\n"
        'implements: "@acme/verbs/repo-tag"\n'
        "inputs: {type: object}\noutputs: {type: object}\n"
        "risk_level: 1\n"  # line 9: lowers the floor
        "approval: auto\n"  # line 10: relaxes the floor
        "---\n# Tag\n"
    )
    with pytest.raises(ToolDefinitionError) as info:
        load_tool(tool_dir, libraries=[lib])
    got = sorted((d.code, d.pointer, d.line) for d in info.value.diagnostics)
    assert got == [("lowers_risk_level", "/risk_level", 9), ("relaxes_approval", "/approval", 10)]
    assert all(d.file is not None and d.file.endswith("TOOL.md") for d in info.value.diagnostics)
    # Narrowing the same floors parses.
    (tool_dir / "TOOL.md").write_text(
        (tool_dir / "TOOL.md")
        .read_text()
        .replace("risk_level: 1", "risk_level: 3")
        .replace("approval: auto", "approval: always")
    )
    tool = load_tool(tool_dir, libraries=[lib])
    assert (tool.risk_level, tool.approval, tool.mutates) == (3, "always", ("vcs:tags",))


@pytest.mark.parametrize(
    ("floor", "looser"),
    [("always", "auto"), ("always", "on-mutate"), ("on-mutate", "auto")],
)
def test_aip39_approval_implementors_may_narrow_must_not_widen(floor: str, looser: str) -> None:
    """AIP-39 approval: 'Implementors MAY narrow (auto -> always); MUST NOT widen.'
    Rank order auto < on-mutate < always, as settled in docs/decisions.md (the seed's
    table and its own definitions disagree)."""
    action = define_action({"id": "repo:tag", "description": "d", "approval": floor})
    widened = check_narrowing({"approval": looser}, action)
    assert [(d.code, d.pointer) for d in widened.violations] == [("relaxes_approval", "/approval")]
    assert widened.merged is None
    kept = check_narrowing({"approval": floor}, action)
    assert kept.ok and kept.merged is not None and kept.merged.approval == floor
    assert not approval_at_least(looser, floor) and approval_at_least(floor, looser)


def test_aip39_implementations_hint_must_not_be_trusted_as_a_security_signal(
    tmp_path: Path,
) -> None:
    """AIP-39: 'implementations: is non-authoritative. Hosts MUST treat it as a hint. The
    runtime resolver scans implementors via their implements: field' and 'MUST NOT be
    trusted as a security signal': being listed grants a tool nothing; declaring
    `implements` (and honouring the floors) is what binds it."""
    lib = _library(
        tmp_path,
        "repo-tag",
        'id: repo:tag\ndescription: d\nrisk_level: 2\napproval: always\nmutates: ["vcs:tags"]\n'
        "implementations:\n  - {kind: tool, ref: repo.tag}\n",
    )
    listed_only = define_tool(dict(TOOL), libraries=[lib])
    assert listed_only.orphan and listed_only.action is None
    assert (listed_only.risk_level, listed_only.approval, listed_only.mutates) == (0, "auto", ())
    bound = define_tool({**TOOL, "implements": "@acme/verbs/repo-tag"}, libraries=[lib])
    assert not bound.orphan and bound.action is not None and bound.action.id == "repo:tag"
    assert (bound.risk_level, bound.approval, bound.mutates) == (2, "always", ("vcs:tags",))
    # The listing does not exempt the listed tool from the floors either.
    with pytest.raises(ToolDefinitionError) as info:
        define_tool(
            {**TOOL, "implements": "@acme/verbs/repo-tag", "risk_level": 0}, libraries=[lib]
        )
    assert info.value.codes == ["lowers_risk_level"]


def test_aip39_hosts_must_treat_the_action_manifest_as_untrusted_input(tmp_path: Path) -> None:
    """AIP-39 security: 'Hosts MUST treat the action manifest as untrusted input until
    verified.' A library ACTION.md that does not validate is refused with a typed error
    naming the file, never bound with whatever it claims."""
    lib = _library(
        tmp_path,
        "bad-verb",
        "id: bad:verb\ndescription: d\nrisk_level: 7\napproval: whenever\n",
    )
    with pytest.raises(ActionRefError) as info:
        resolve_action_ref("@acme/verbs/bad-verb", base_dir=tmp_path, libraries=[lib])
    assert info.value.code == "action_ref_unresolvable"
    assert any("bad-verb/ACTION.md" in t and "not a valid action" in t for t in info.value.tried)
    with pytest.raises(ToolDefinitionError) as tool_info:
        define_tool({**TOOL, "implements": "@acme/verbs/bad-verb"}, libraries=[lib])
    assert [(d.code, d.pointer) for d in tool_info.value.diagnostics] == [
        ("action_ref_unresolvable", "/implements")
    ]


@pytest.mark.parametrize(("field", "value"), [("category", "vcs"), ("target_kind", "repo")])
def test_aip39_category_and_target_kind_are_inherited_verbatim(field: str, value: str) -> None:
    """AIP-39 inheritance table: category and target_kind are 'inherited verbatim' and the
    implementor 'Cannot override' them."""
    action = define_action({"id": "storage:push", "description": "d", "category": "filesystem"})
    result = check_narrowing({field: value}, action)
    assert [(d.code, d.pointer) for d in result.violations] == [(f"overrides_{field}", f"/{field}")]
    inherited = check_narrowing({}, action)
    assert inherited.merged is not None
    assert (inherited.merged.category, inherited.merged.target_kind) == ("filesystem", "storage")
