"""Seed 000, AIP-16 IO: one test per MUST / MUST NOT that no other test names.

Most AIP-16 clauses are named in tests/io (see docs/spec-coverage.md); these
cover the rest through the public API (define_io, run_with_file_contract)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flightdeck.audit import MemoryAuditSink
from flightdeck.documents import load_schema, schema_names
from flightdeck.io import (
    FileContractError,
    IODefinitionError,
    define_io,
    run_with_file_contract,
)

FOUR = ("inputs", "outputs", "inputsFiles", "outputsFiles")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def _properties(node: Any) -> Any:
    if isinstance(node, dict):
        if isinstance(node.get("properties"), dict):
            yield node["properties"]
        for value in node.values():
            yield from _properties(value)
    elif isinstance(node, list):
        for value in node:
            yield from _properties(value)


def test_aip16_importing_manifests_must_use_the_blocks_and_must_not_redefine_them() -> None:
    """AIP-16: the blocks are what 'any manifest format MUST use'; importing manifests
    'MUST NOT add fields named inputs, outputs, inputsFiles, or outputsFiles with
    different semantics'. Every packaged schema that imports IO (all but `io` itself and
    the Flight Plan `skill`, whose `aileron.inputs/outputs` are seed 003's own arrays)
    points each of the four fields at the IO block of the same name."""
    checked = 0
    for name in schema_names():
        if name in ("io", "skill"):
            continue
        for props in _properties(load_schema(name)):
            for field in FOUR:
                if field in props:
                    assert props[field] == {"$ref": f"io.schema.json#/$defs/{field}"}, (
                        name,
                        field,
                    )
                    checked += 1
    assert checked >= 4  # TOOL.md imports all four


def test_aip16_host_must_inject_fs_root_before_input_validation_runs(ws: Path) -> None:
    """AIP-16: 'the host MUST inject _workflowFsRoot: string into the structured input
    before the body's input validation runs'. An inputs schema that *requires* the field
    validates although the caller never sent it."""
    inputs = {
        "type": "object",
        "properties": {"_workflowFsRoot": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["_workflowFsRoot", "n"],
        "additionalProperties": False,
    }
    io = define_io({"inputs": inputs, "outputsFiles": {"o": {"path": "o.txt"}}})
    seen: list[dict[str, Any]] = []

    def body(value: dict[str, Any]) -> str:
        seen.append(value)
        return "ran"

    result = run_with_file_contract(
        io,
        body,
        {"n": 2},
        workspace=ws,
        unit_id="u",
        audit=MemoryAuditSink(),
    )
    assert result.output == "ran"
    assert seen[0]["n"] == 2 and isinstance(seen[0]["_workflowFsRoot"], str)


def test_aip16_hosts_must_not_honour_a_pre_supplied_fs_root(ws: Path, tmp_path: Path) -> None:
    """AIP-16: 'Hosts MUST NOT honour a _workflowFsRoot value the caller pre-supplied — the
    host overwrites it.' The body sees the host's fresh scratch root; the caller's
    directory is neither used for outputs nor touched."""
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    (decoy / "o").write_text("planted by the caller")
    io = define_io({"outputsFiles": {"o": {"path": "out.txt"}}})
    roots: list[Path] = []

    def body(value: dict[str, Any]) -> None:
        root = Path(value["_workflowFsRoot"])
        roots.append(root)
        assert root.is_dir() and list(root.iterdir()) == []
        (root / "o").write_text("written by the body")

    result = run_with_file_contract(
        io,
        body,
        {"_workflowFsRoot": str(decoy)},
        workspace=ws,
        unit_id="u",
        audit=MemoryAuditSink(),
    )
    assert roots[0].resolve() != decoy.resolve()
    assert (ws / "out.txt").read_text() == "written by the body"
    assert (decoy / "o").read_text() == "planted by the caller"
    assert [r.key for r in result.synced] == ["o"]


def test_aip16_output_mismatch_must_not_be_silently_coerced(ws: Path) -> None:
    """AIP-16: 'failure to match outputs MUST be surfaced as a host error, not silently
    coerced': a string "5" against an integer outputs schema is an error, never 5."""
    io = define_io({"outputs": {"type": "integer"}})
    with pytest.raises(FileContractError) as info:
        run_with_file_contract(
            io, lambda v: "5", {}, workspace=ws, unit_id="u", audit=MemoryAuditSink()
        )
    assert info.value.code == "io.output_invalid"
    ok = run_with_file_contract(
        io, lambda v: 5, {}, workspace=ws, unit_id="u", audit=MemoryAuditSink()
    )
    assert ok.output == 5


def test_aip16_user_input_derived_paths_must_go_through_a_tool(ws: Path) -> None:
    """AIP-16 security: 'Path interpolation is constrained to a fixed token set so
    manifests cannot construct arbitrary workspace paths from user input ... Manifests
    that need user-input-derived paths MUST do that through a tool.' A token naming an
    input is refused at definition, and a token value carrying separators is refused
    before the body runs, writing nothing."""
    with pytest.raises(IODefinitionError) as info:
        define_io({"outputsFiles": {"o": {"path": "out/<name>.txt"}}})
    assert [(d.code, d.pointer) for d in info.value.diagnostics] == [
        ("io.unknown_path_token", "/outputsFiles/o/path")
    ]
    io = define_io({"outputsFiles": {"o": {"path": "out/<runId>.txt"}}})
    calls: list[Any] = []
    with pytest.raises(FileContractError) as refused:
        run_with_file_contract(
            io,
            calls.append,
            {},
            workspace=ws,
            unit_id="u",
            run_id="../../escape",
            audit=MemoryAuditSink(),
        )
    assert refused.value.code == "io.unsafe_token_value"
    assert calls == [] and list(ws.rglob("*")) == []


def test_aip16_reads_or_writes_outside_the_fs_root_must_be_denied(ws: Path, tmp_path: Path) -> None:
    """AIP-16 security: 'Bodies MUST treat it as a scoped scratch directory; reads or
    writes outside MUST be denied by the host's isolation layer.'"""
    outside = tmp_path / "outside.txt"
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret")
    io = define_io({"outputsFiles": {"o": {"path": "o.txt"}}})
    refused: list[BaseException] = []
    sink = MemoryAuditSink()

    def body(value: dict[str, Any]) -> None:
        try:
            outside.write_text("escaped")
        except PermissionError as exc:
            refused.append(exc)
        try:
            secret.read_text()
        except PermissionError as exc:
            refused.append(exc)
        (Path(value["_workflowFsRoot"]) / "o").write_text("inside is fine")

    result = run_with_file_contract(io, body, {}, workspace=ws, unit_id="u", audit=sink)
    assert not outside.exists()
    assert len(refused) == 2
    assert (ws / "o.txt").read_text() == "inside is fine"
    assert [
        r.fields["path"] for r in sink.records(run_id=result.run_id, kind="io.access_denied")
    ] == [
        str(outside),
        str(secret),
    ]
