"""Action references: every form, the library search path, pins, the lock and trust."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flightdeck.actions import (
    ENV_VAR,
    ActionRefError,
    Lock,
    TrustDowngradeWarning,
    library_search_path,
    parse_action_ref,
    resolve_action_ref,
)
from tests.actions.conftest import action_md, write

STD = "@agentik/actions-standard"


def _err(ref: object, **kw: object) -> ActionRefError:
    with pytest.raises(ActionRefError) as info:
        resolve_action_ref(ref, **kw)  # type: ignore[arg-type]
    return info.value


# --- parsing -------------------------------------------------------------------


def test_parse_every_form() -> None:
    r = parse_action_ref("@agentik/actions-standard/storage-commit@^1.0.0")
    assert (r.form, r.owner, r.workspace, r.slug, r.version_range) == (
        "registry",
        "agentik",
        "actions-standard",
        "storage-commit",
        "^1.0.0",
    )
    assert (
        parse_action_ref("@agentik/actions/standard/storage-commit").workspace == "actions/standard"
    )
    assert parse_action_ref("./actions/x").form == "file"
    assert parse_action_ref("../x/ACTION.md").form == "file"
    assert parse_action_ref("storage:commit").action_id == "storage:commit"
    assert parse_action_ref({"ref": "storage:commit"}).form == "id"
    assert parse_action_ref({"ref": "@a/b/c"}).form == "registry"
    assert parse_action_ref({"file": "./x"}).path == "./x"
    assert parse_action_ref({"inline": {"id": "a:b"}}).form == "inline"


@pytest.mark.parametrize(
    "bad",
    [
        "@owner/slug",
        "@a/b/c@not a range!!",
        "Not An Id",
        {"ref": "./x"},
        {"ref": 1},
        {"file": ""},
        {"inline": "x"},
        {"ref": "a:b", "file": "x"},
        3,
    ],
)
def test_malformed_refs_are_unresolvable_with_the_code(bad: object) -> None:
    with pytest.raises(ActionRefError) as info:
        parse_action_ref(bad)
    assert info.value.code == "action_ref_unresolvable"


# --- resolution ----------------------------------------------------------------


def test_inline_form(tmp_path: Path) -> None:
    a = resolve_action_ref(
        {"inline": {"id": "my.local-action", "description": "x", "mutates": ["storage:scratch"]}},
        base_dir=tmp_path,
    )
    assert a.id == "my.local-action" and a.mutates == ("storage:scratch",)


def test_registry_address_by_workspace_id(standard: Path, tmp_path: Path) -> None:
    a = resolve_action_ref(f"{STD}/storage-commit", base_dir=tmp_path, libraries=[standard])
    assert a.id == "storage:commit"
    b = resolve_action_ref({"ref": f"{STD}/storage-push"}, base_dir=tmp_path, libraries=[standard])
    assert b.id == "storage:push"


def test_registry_address_by_owner_and_slug_fields(tmp_path: Path) -> None:
    lib = tmp_path / "somewhere"
    write(lib / "WORKSPACE.md", "---\nowner: {slug: acme}\nslug: verbs\n---\n")
    write(lib / ".actions" / "vcs" / "repo-tag" / "ACTION.md", action_md("repo:tag"))
    a = resolve_action_ref("@acme/verbs/repo-tag", base_dir=tmp_path, libraries=[lib])
    assert a.id == "repo:tag", "category nesting under .actions/ is allowed"


def test_registry_address_by_folder_layout(standard: Path, tmp_path: Path) -> None:
    root = tmp_path / "libs"
    (root / "agentik" / "actions").mkdir(parents=True)
    (root / "agentik" / "actions" / "standard").symlink_to(standard, target_is_directory=True)
    a = resolve_action_ref(
        "@agentik/actions/standard/storage-commit", base_dir=tmp_path, libraries=[root]
    )
    assert a.id == "storage:commit"


def test_file_forms_relative_to_the_implementor(tmp_path: Path) -> None:
    write(tmp_path / "actions" / "x-do" / "ACTION.md", action_md("x:do"))
    tools = tmp_path / "tools"
    tools.mkdir()
    assert resolve_action_ref("./../actions/x-do", base_dir=tools).id == "x:do"
    assert resolve_action_ref({"file": "../actions/x-do/ACTION.md"}, base_dir=tools).id == "x:do"


def test_file_form_falls_back_to_the_workspace_root(tmp_path: Path) -> None:
    write(tmp_path / "actions" / "x-do" / "ACTION.md", action_md("x:do"))
    lock = Lock.for_workspace(tmp_path)
    a = resolve_action_ref("./actions/x-do", base_dir=tmp_path / "tools" / "t", lock=lock)
    assert a.id == "x:do"


def test_file_form_outside_the_workspace_is_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write(tmp_path / "outside" / "ACTION.md", action_md("x:do"))
    err = _err("../outside", base_dir=ws, workspace=ws)
    assert "outside the workspace" in str(err)


def test_bare_id_in_the_workspace_then_libraries(standard: Path, tmp_path: Path) -> None:
    write(tmp_path / ".actions" / "mine" / "ACTION.md", action_md("storage:commit", "9.0.0"))
    local = resolve_action_ref(
        "storage:commit", base_dir=tmp_path, workspace=tmp_path, libraries=[standard]
    )
    assert local.version == "9.0.0", "the workspace wins over libraries"
    lib = resolve_action_ref(
        "secrets:rotate", base_dir=tmp_path, workspace=tmp_path, libraries=[standard]
    )
    assert lib.risk_level == 3


def test_unresolvable_registry_ref_lists_what_was_tried(standard: Path, tmp_path: Path) -> None:
    err = _err(f"{STD}/storage-delete", base_dir=tmp_path, libraries=[standard])
    assert err.code == "action_ref_unresolvable"
    assert any("no .actions/storage-delete/ACTION.md" in t for t in err.tried)
    err = _err("@nobody/none/x", base_dir=tmp_path, libraries=[standard])
    assert err.tried == (f"library {standard} (answers {STD}): not @nobody/none",)
    assert "tried:" in str(err)


def test_no_libraries_is_said_in_what_was_tried(tmp_path: Path) -> None:
    err = _err(f"{STD}/storage-commit", base_dir=tmp_path)
    assert "no action library on the search path" in err.tried[0]


def test_unresolvable_file_and_id_list_what_was_tried(standard: Path, tmp_path: Path) -> None:
    err = _err("./nope", base_dir=tmp_path)
    assert err.tried == (f"{tmp_path / 'nope'} (relative to {tmp_path}): no ACTION.md there",)
    err = _err("storage:nope", base_dir=tmp_path, workspace=tmp_path, libraries=[standard])
    assert [t.split(" ")[0] for t in err.tried] == ["workspace", "library"]


def test_an_invalid_action_file_is_unresolvable_with_its_codes(tmp_path: Path) -> None:
    write(tmp_path / "bad" / "ACTION.md", "---\nschema: action/v1\nid: BAD\ndescription: x\n---\n")
    err = _err("./bad", base_dir=tmp_path)
    assert "not a valid action" in err.tried[-1]
    assert err.code == "action_ref_unresolvable"
    assert "is invalid" in err.reason
    assert err.at is not None and err.at.file == str((tmp_path / "bad" / "ACTION.md").resolve())


# --- search path -------------------------------------------------------------


def test_search_path_order_flags_env_then_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "flightdeck.toml").write_text('[library]\npaths = ["libs/c"]\n')
    monkeypatch.setenv(ENV_VAR, os.pathsep.join([str(tmp_path / "b1"), str(tmp_path / "b2")]))
    got = library_search_path([tmp_path / "a"], workspace=ws)
    assert got == tuple(
        p.resolve() for p in [tmp_path / "a", tmp_path / "b1", tmp_path / "b2", ws / "libs" / "c"]
    )


def test_libraries_from_the_environment_resolve(
    standard: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_VAR, str(standard))
    a = resolve_action_ref(
        f"{STD}/storage-read", base_dir=tmp_path, libraries=library_search_path()
    )
    assert a.id == "storage:read"


# --- version pins --------------------------------------------------------------


def _two_majors(tmp_path: Path) -> tuple[Path, Path]:
    v1 = tmp_path / "v1"
    v2 = tmp_path / "v2"
    for lib, version in ((v1, "1.4.0"), (v2, "2.0.0")):
        write(lib / "WORKSPACE.md", '---\nid: "@acme/verbs"\n---\n')
        write(lib / ".actions" / "repo-tag" / "ACTION.md", action_md("repo:tag", version))
    return v1, v2


def test_aip39_resolution_to_a_newer_major_must_refuse_the_bind(tmp_path: Path) -> None:
    v1, v2 = _two_majors(tmp_path)
    err = _err("@acme/verbs/repo-tag@^1", base_dir=tmp_path, libraries=[v2])
    assert err.code == "action_ref_unresolvable"
    assert "outside the pin ^1" in err.tried[0]
    # With both on the path, the pin picks the matching major.
    a = resolve_action_ref("@acme/verbs/repo-tag@^1", base_dir=tmp_path, libraries=[v2, v1])
    assert a.version == "1.4.0"
    assert (
        resolve_action_ref("@acme/verbs/repo-tag@^2", base_dir=tmp_path, libraries=[v1, v2]).version
        == "2.0.0"
    )


# --- lock and trust -------------------------------------------------------------


def test_lock_records_the_sha256_of_each_resolved_ref(standard: Path, tmp_path: Path) -> None:
    lock = Lock.for_workspace(tmp_path)
    a = resolve_action_ref(
        f"{STD}/storage-commit", base_dir=tmp_path, libraries=[standard], lock=lock
    )
    data = json.loads((tmp_path / "flightdeck.lock").read_text())
    entry = data["actions"][f"{STD}/storage-commit"]
    assert entry["sha256"] == a.sha256 and entry["id"] == "storage:commit"
    assert data["version"] == 1


def _changing_library(tmp_path: Path) -> tuple[Path, Path]:
    lib = tmp_path / "lib"
    write(lib / "WORKSPACE.md", '---\nid: "@acme/verbs"\n---\n')
    file = write(lib / ".actions" / "repo-tag" / "ACTION.md", action_md("repo:tag"))
    ws = tmp_path / "ws"
    ws.mkdir()
    return lib, file


def test_aip39_changed_sha_is_a_trust_downgrade_warning(tmp_path: Path) -> None:
    lib, file = _changing_library(tmp_path)
    ws = tmp_path / "ws"
    resolve_action_ref(
        "@acme/verbs/repo-tag", base_dir=ws, libraries=[lib], lock=Lock.for_workspace(ws)
    )
    file.write_text(action_md("repo:tag", extra="risk_level: 0\n"))
    with pytest.warns(TrustDowngradeWarning, match="trust downgrade"):
        resolve_action_ref(
            "@acme/verbs/repo-tag", base_dir=ws, libraries=[lib], lock=Lock.for_workspace(ws)
        )
    # The locked sha is kept, so the warning repeats until someone re-locks.
    with pytest.warns(TrustDowngradeWarning):
        resolve_action_ref(
            "@acme/verbs/repo-tag", base_dir=ws, libraries=[lib], lock=Lock.for_workspace(ws)
        )


def test_aip39_changed_sha_is_an_error_when_strict(tmp_path: Path) -> None:
    lib, file = _changing_library(tmp_path)
    ws = tmp_path / "ws"
    resolve_action_ref(
        "@acme/verbs/repo-tag", base_dir=ws, libraries=[lib], lock=Lock.for_workspace(ws)
    )
    file.write_text(action_md("repo:tag", extra="mutates: []\n"))
    err = _err(
        "@acme/verbs/repo-tag",
        base_dir=ws,
        libraries=[lib],
        lock=Lock.for_workspace(ws),
        strict=True,
    )
    assert err.code == "action_trust_downgrade"


def test_unchanged_content_is_no_downgrade(standard: Path, tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a TrustDowngradeWarning would fail the test
        handles = [
            resolve_action_ref(
                f"{STD}/storage-push",
                base_dir=tmp_path,
                libraries=[standard],
                lock=Lock.for_workspace(tmp_path),
                strict=strict,
            )
            for strict in (False, False, True)  # strict refuses any downgrade
        ]
    assert len({h.sha256 for h in handles}) == 1
    locked = json.loads((tmp_path / "flightdeck.lock").read_text())["actions"]
    assert locked[f"{STD}/storage-push"]["sha256"] == handles[0].sha256


def test_an_unreadable_lock_is_treated_as_empty(standard: Path, tmp_path: Path) -> None:
    (tmp_path / "flightdeck.lock").write_text("{not json")
    lock = Lock.for_workspace(tmp_path)
    resolve_action_ref(f"{STD}/storage-push", base_dir=tmp_path, libraries=[standard], lock=lock)
    assert (
        f"{STD}/storage-push" in json.loads((tmp_path / "flightdeck.lock").read_text())["actions"]
    )


def test_aip39_consumers_must_not_depend_on_directory_depth(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    write(lib / "WORKSPACE.md", '---\nid: "@acme/verbs"\n---\n')
    write(lib / ".actions" / "a" / "b" / "deep-verb" / "ACTION.md", action_md("deep:verb"))
    assert (
        resolve_action_ref("@acme/verbs/deep-verb", base_dir=tmp_path, libraries=[lib]).id
        == "deep:verb"
    )
    assert resolve_action_ref("deep:verb", base_dir=tmp_path, libraries=[lib]).id == "deep:verb"


def test_aip39_resolution_failures_must_surface_as_a_typed_error(tmp_path: Path) -> None:
    for ref in ("@a/b/c", "./missing", "x:y", {"file": "./missing"}, {"ref": "x:y"}):
        err = _err(ref, base_dir=tmp_path)
        assert isinstance(err, LookupError) and err.code == "action_ref_unresolvable"
        assert err.tried


def test_the_lock_keeps_entries_written_by_another_process(standard: Path, tmp_path: Path) -> None:
    first, second = Lock.for_workspace(tmp_path), Lock.for_workspace(tmp_path)
    second.entries()  # loaded before the first one saves
    resolve_action_ref(f"{STD}/storage-push", base_dir=tmp_path, libraries=[standard], lock=first)
    resolve_action_ref(f"{STD}/storage-read", base_dir=tmp_path, libraries=[standard], lock=second)
    keys = set(json.loads((tmp_path / "flightdeck.lock").read_text())["actions"])
    assert keys == {f"{STD}/storage-push", f"{STD}/storage-read"}


_seg = st.from_regex(r"[a-z0-9][a-z0-9_.-]{0,8}", fullmatch=True)


@given(
    _seg,
    st.lists(_seg, min_size=1, max_size=3),
    _seg,
    st.sampled_from(["", "^1", "~2.1", ">=1.0.0 <3"]),
)
def test_registry_refs_parse_into_their_parts(
    owner: str, ws: list[str], slug: str, pin: str
) -> None:
    raw = f"@{owner}/{'/'.join(ws)}/{slug}" + (f"@{pin}" if pin else "")
    ref = parse_action_ref(raw)
    assert (ref.owner, ref.workspace, ref.slug) == (owner, "/".join(ws), slug)
    assert ref.version_range == (pin or None)
    assert ref.address == f"@{owner}/{'/'.join(ws)}/{slug}"
