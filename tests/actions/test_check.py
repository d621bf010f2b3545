"""check_document: the validate hook reports narrowing at the implementor's file:line."""

from __future__ import annotations

from pathlib import Path

from flightdeck.actions import CheckContext, Lock, check_document, lock_workspace
from flightdeck.documents import Diagnostic, DocumentKind, load_document
from tests.actions.conftest import action_md, write

STD = "@agentik/actions-standard"


def _tool(path: Path, implements: str | None, extra: str = "") -> Path:
    lines = [
        "---",
        "name: Git push",
        "id: git.push",
        "description: Push commits.",
        "version: 1.0.0",
        "inputs: {type: object}",
        "outputs: {type: object}",
    ]
    if implements is not None:
        lines.append(f"implements: {implements}")
    return write(path, "\n".join(lines) + "\n" + extra + "---\nbody\n")


def _check(path: Path, context: CheckContext) -> list[Diagnostic]:
    result = load_document(path)
    assert result.document is not None, result.diagnostics
    return check_document(result.document, context)


def test_violations_are_located_at_the_implementors_lines(standard: Path, tmp_path: Path) -> None:
    path = _tool(
        tmp_path / "tools" / "push" / "TOOL.md",
        f'"{STD}/storage-push"',
        'mutates: ["storage:*"]\nrisk_level: 1\napproval: auto\n',
    )
    got = _check(path, CheckContext(workspace=tmp_path, libraries=[standard]))
    assert [(d.code, d.line, d.file) for d in got] == [
        ("drops_mutates", 9, str(path)),
        ("lowers_risk_level", 10, str(path)),
        ("relaxes_approval", 11, str(path)),
    ]
    assert all(d.is_error for d in got)


def test_a_conforming_tool_has_no_diagnostics(standard: Path, tmp_path: Path) -> None:
    path = _tool(tmp_path / "TOOL.md", f'"{STD}/storage-push"', "approval: always\n")
    assert _check(path, CheckContext(workspace=tmp_path, libraries=[standard])) == []


def test_orphans_get_an_info_diagnostic(tmp_path: Path) -> None:
    got = _check(_tool(tmp_path / "TOOL.md", None), CheckContext(workspace=tmp_path))
    assert [(d.code, d.severity.value, d.line) for d in got] == [("orphan_implementor", "info", 3)]


def test_an_unresolvable_ref_is_an_error_at_implements(tmp_path: Path) -> None:
    path = _tool(tmp_path / "TOOL.md", '"@nobody/none/push"')
    got = _check(path, CheckContext(workspace=tmp_path))
    assert [(d.code, d.pointer, d.line) for d in got] == [
        ("action_ref_unresolvable", "/implements", 8)
    ]
    assert "tried" in got[0].message


def test_an_invalid_inline_action_is_reported_inside_implements(tmp_path: Path) -> None:
    path = _tool(
        tmp_path / "TOOL.md",
        "{inline: {id: x.y, description: d, risk_level: 2}}",
        "risk_level: 1\n",
    )
    got = _check(path, CheckContext(workspace=tmp_path))
    assert [d.code for d in got] == ["lowers_risk_level"]


def test_file_refs_resolve_from_the_tool_folder(tmp_path: Path) -> None:
    write(tmp_path / ".actions" / "x-do" / "ACTION.md", action_md("x:do", extra="risk_level: 2\n"))
    path = _tool(tmp_path / ".tools" / "t" / "TOOL.md", "../../.actions/x-do", "risk_level: 0\n")
    got = _check(path, CheckContext(workspace=tmp_path))
    assert [d.code for d in got] == ["lowers_risk_level"]


def test_checking_never_writes_the_lock(standard: Path, tmp_path: Path) -> None:
    path = _tool(tmp_path / "TOOL.md", f'"{STD}/storage-read"')
    (tmp_path / "flightdeck.toml").write_text("")
    _check(path, CheckContext(workspace=tmp_path, libraries=[standard]))
    assert not (tmp_path / "flightdeck.lock").exists()


def test_trust_downgrade_is_a_warning_or_an_error_when_strict(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    write(lib / "WORKSPACE.md", '---\nid: "@acme/verbs"\n---\n')
    action = write(lib / ".actions" / "repo-tag" / "ACTION.md", action_md("repo:tag"))
    ws = tmp_path / "ws"
    path = _tool(ws / "TOOL.md", '"@acme/verbs/repo-tag"')
    assert lock_workspace(ws, "create", libraries=[lib]).written
    assert (
        _check(path, CheckContext(workspace=ws, libraries=[lib], lock=Lock.for_workspace(ws))) == []
    )
    action.write_text(action_md("repo:tag", extra="tags: [changed]\n"))
    warn = _check(path, CheckContext(workspace=ws, libraries=[lib], lock=Lock.for_workspace(ws)))
    assert [(d.code, d.severity.value, d.line) for d in warn] == [
        ("action_trust_downgrade", "warning", 8)
    ]
    strict = _check(
        path, CheckContext(workspace=ws, libraries=[lib], lock=Lock.for_workspace(ws), strict=True)
    )
    assert [(d.code, d.severity.value) for d in strict] == [("action_trust_downgrade", "error")]


def _driver(path: Path, tool: str) -> Path:
    text = (
        "---\nname: Git CLI\nid: git-cli\ndescription: git.\nversion: 1.0.0\nkind: builtin\n"
        f'implements:\n  - tool: {tool}\n    version: "^1.0.0"\n---\n'
    )
    return write(path, text)


def test_driver_entries_take_the_action_of_their_tool(standard: Path, tmp_path: Path) -> None:
    _tool(tmp_path / "tools" / "push" / "TOOL.md", f'"{STD}/storage-push"', "approval: always\n")
    path = _driver(tmp_path / "drivers" / "git" / "DRIVER.md", "../../tools/push/TOOL.md")
    result = load_document(path)
    assert result.document is not None and result.document.kind is DocumentKind.DRIVER
    assert (
        check_document(result.document, CheckContext(workspace=tmp_path, libraries=[standard]))
        == []
    )


def test_driver_entry_whose_tool_is_an_orphan_is_flagged(tmp_path: Path) -> None:
    _tool(tmp_path / "tools" / "push" / "TOOL.md", None)
    path = _driver(tmp_path / "DRIVER.md", "./tools/push")
    got = _check(path, CheckContext(workspace=tmp_path))
    assert [(d.code, d.pointer) for d in got] == [("orphan_implementor", "/implements/0")]


def test_driver_entry_whose_tools_action_is_missing_is_unresolvable(tmp_path: Path) -> None:
    _tool(tmp_path / "tools" / "push" / "TOOL.md", '"@nobody/none/push"')
    path = _driver(tmp_path / "DRIVER.md", "./tools/push/TOOL.md")
    got = _check(path, CheckContext(workspace=tmp_path))
    assert [(d.code, d.pointer, d.line) for d in got] == [
        ("action_ref_unresolvable", "/implements/0/tool", 8)
    ]


def test_other_kinds_are_not_checked(standard: Path) -> None:
    result = load_document(standard / ".actions" / "storage-push" / "ACTION.md")
    assert result.document is not None
    assert check_document(result.document, CheckContext()) == []


def test_driver_entries_may_name_their_tool_by_id(standard: Path, tmp_path: Path) -> None:
    _tool(tmp_path / ".tools" / "push" / "TOOL.md", '"@nobody/none/push"')
    path = _driver(tmp_path / ".drivers" / "git" / "DRIVER.md", "git.push")
    got = _check(path, CheckContext(workspace=tmp_path))
    assert [d.code for d in got] == ["action_ref_unresolvable"]


def test_an_implementor_of_an_invalid_action_points_at_the_actions_line(tmp_path: Path) -> None:
    """One mistake, one diagnostic: not "no ACTION.md with id x:do" while the file is there."""
    action = write(
        tmp_path / ".actions" / "x-do" / "ACTION.md", action_md("x:do", extra="risk_level: 9\n")
    )
    for implements in ("x:do", "./.actions/x-do"):
        path = _tool(tmp_path / "TOOL.md", implements)
        got = _check(path, CheckContext(workspace=tmp_path, extend_search_path=False))
        assert [(d.code, d.file, d.line) for d in got] == [
            ("action_ref_unresolvable", str(action), 6)
        ]
        assert "action " + implements + " is invalid" in got[0].message
        assert "no .actions" not in got[0].message


def test_an_invalid_action_with_another_id_is_not_the_answer(tmp_path: Path) -> None:
    write(tmp_path / ".actions" / "y" / "ACTION.md", action_md("y:other", extra="risk_level: 9\n"))
    path = _tool(tmp_path / "TOOL.md", "x:do")
    got = _check(path, CheckContext(workspace=tmp_path, extend_search_path=False))
    assert [d.code for d in got] == ["action_ref_unresolvable"]


def test_a_driver_over_a_tool_of_an_invalid_action_points_at_the_action(tmp_path: Path) -> None:
    action = write(
        tmp_path / ".actions" / "x-do" / "ACTION.md", action_md("x:do", extra="risk_level: 9\n")
    )
    _tool(tmp_path / "tools" / "push" / "TOOL.md", "x:do")
    path = _driver(tmp_path / "DRIVER.md", "./tools/push/TOOL.md")
    got = _check(path, CheckContext(workspace=tmp_path, extend_search_path=False))
    assert [(d.file, d.line) for d in got] == [(str(action), 6)]
    assert "action x:do is invalid" in got[0].message
