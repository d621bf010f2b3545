"""The file-contract host: AIP-16's lifecycle, error semantics, safety and audit."""

from __future__ import annotations

import asyncio
import hashlib
import os
import stat
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flightdeck.audit import AuditRecord, MemoryAuditSink, SQLiteAuditSink, default_sink
from flightdeck.io import (
    FileContractError,
    arun_with_file_contract,
    define_io,
    run_with_file_contract,
)

INPUTS = {
    "type": "object",
    "properties": {"_workflowFsRoot": {"type": "string"}, "n": {"type": "integer"}},
    "additionalProperties": False,
}


def _io(**files: Any) -> Any:
    return define_io({"inputs": INPUTS, **files})


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "in.txt").write_text("hello")
    return root


def test_aip16_must_inject_workflow_fs_root_and_stage_inputs(ws: Path) -> None:
    io = _io(inputsFiles={"src": {"path": "docs/in.txt"}})
    seen: dict[str, Any] = {}

    def body(value: dict[str, Any]) -> dict[str, Any]:
        root = Path(value["_workflowFsRoot"])
        seen["root"] = root
        seen["text"] = (root / "src").read_text()
        seen["mode"] = stat.S_IMODE(root.stat().st_mode)
        return {}

    result = run_with_file_contract(
        io, body, {"n": 1}, workspace=ws, unit_id="u", audit=MemoryAuditSink()
    )
    assert seen["text"] == "hello"
    assert seen["mode"] == 0o700
    assert not seen["root"].exists(), "scratch root is removed after the run"
    assert [r.key for r in result.staged] == ["src"]


def test_aip16_must_not_inject_fs_root_without_file_maps(ws: Path) -> None:
    io = define_io({"inputs": {"type": "object"}})
    result = run_with_file_contract(
        io, dict, {"n": 1}, workspace=ws, unit_id="u", audit=MemoryAuditSink()
    )
    assert result.output == {"n": 1}


def test_aip16_must_not_honour_caller_supplied_fs_root(ws: Path) -> None:
    io = _io(outputsFiles={"o": {"path": "out.txt"}})
    got: list[str] = []
    run_with_file_contract(
        io,
        lambda v: got.append(v["_workflowFsRoot"]) or {},
        {"_workflowFsRoot": str(ws)},
        workspace=ws,
        unit_id="u",
        audit=MemoryAuditSink(),
    )
    assert got and got[0] != str(ws)


def test_aip16_must_validate_inputs_before_the_body_runs(ws: Path) -> None:
    calls: list[Any] = []
    with pytest.raises(FileContractError) as info:
        run_with_file_contract(
            _io(),
            calls.append,
            {"n": "not-int"},
            workspace=ws,
            unit_id="u",
            audit=MemoryAuditSink(),
        )
    assert info.value.code == "io.input_invalid" and "/n" in info.value.message
    assert calls == [] and not info.value.started


def test_aip16_output_mismatch_must_surface_as_host_error(ws: Path) -> None:
    io = define_io({"outputs": {"type": "object", "required": ["ok"]}})
    with pytest.raises(FileContractError) as info:
        run_with_file_contract(
            io, lambda v: {}, {}, workspace=ws, unit_id="u", audit=MemoryAuditSink()
        )
    assert info.value.code == "io.output_invalid"


def test_aip16_must_throw_before_run_when_input_file_missing(ws: Path) -> None:
    sink = MemoryAuditSink()
    calls: list[Any] = []
    io = _io(inputsFiles={"src": {"path": "docs/absent.txt"}})
    with pytest.raises(FileContractError) as info:
        run_with_file_contract(
            io, calls.append, {}, workspace=ws, unit_id="u", run_id="r1", audit=sink
        )
    assert info.value.code == "io.input_file_missing"
    assert info.value.key == "src" and info.value.path == "docs/absent.txt"
    assert calls == [] and not info.value.started
    assert [r.kind for r in sink.records(run_id="r1")] == ["io.run_refused"]


def test_aip16_must_warn_and_continue_when_declared_output_not_produced(ws: Path) -> None:
    sink = MemoryAuditSink()
    io = _io(outputsFiles={"a": {"path": "out/a.txt"}, "b": {"path": "out/b.txt"}})

    def body(value: dict[str, Any]) -> dict[str, Any]:
        (Path(value["_workflowFsRoot"]) / "b").write_text("B")
        return {"done": True}

    result = run_with_file_contract(io, body, {}, workspace=ws, unit_id="u", audit=sink)
    assert result.output == {"done": True}
    assert [(w.code, w.pointer, w.severity.value) for w in result.warnings] == [
        ("io.output_missing", "/outputsFiles/a", "warning")
    ]
    assert (ws / "out" / "b.txt").read_text() == "B"
    assert "io.output_missing" in [r.kind for r in sink.records()]


def test_aip16_sync_failure_must_be_logged_and_must_not_fail_the_run(ws: Path) -> None:
    (ws / "blocked").write_text("a file where a directory is needed")
    sink = MemoryAuditSink()
    io = _io(outputsFiles={"o": {"path": "blocked/out.txt"}, "p": {"path": "fine.txt"}})

    def body(value: dict[str, Any]) -> str:
        for key in ("o", "p"):
            (Path(value["_workflowFsRoot"]) / key).write_text(key)
        return "ok"

    result = run_with_file_contract(io, body, {}, workspace=ws, unit_id="u", audit=sink)
    assert result.output == "ok"
    assert [w.code for w in result.warnings] == ["io.sync_failed"]
    assert (ws / "fine.txt").read_text() == "p"
    assert [r.kind for r in sink.records(kind="io.sync_failed")] == ["io.sync_failed"]


def test_aip16_body_may_write_undeclared_scratch_files_which_are_discarded(ws: Path) -> None:
    roots: list[Path] = []

    def body(value: dict[str, Any]) -> None:
        root = Path(value["_workflowFsRoot"])
        roots.append(root)
        (root / "tmp.bin").write_bytes(b"x")

    run_with_file_contract(
        _io(outputsFiles={"o": {"path": "o"}}),
        body,
        {},
        workspace=ws,
        unit_id="u",
        audit=MemoryAuditSink(),
    )
    assert not roots[0].exists()
    assert sorted(p.name for p in ws.rglob("*")) == ["docs", "in.txt"]


def test_aip16_output_paths_are_interpolated_at_sync_in_utc(ws: Path) -> None:
    # 23:30 at UTC-2 is already the next day in UTC.
    clock = lambda: datetime(2026, 4, 28, 23, 30, tzinfo=timezone(timedelta(hours=-2)))  # noqa: E731
    io = _io(outputsFiles={"img": {"path": "gen/<toolId>/<isoDate>/<runId>-<workflowId>.png"}})

    def body(value: dict[str, Any]) -> None:
        (Path(value["_workflowFsRoot"]) / "img").write_bytes(b"png")

    result = run_with_file_contract(
        io,
        body,
        {},
        workspace=ws,
        unit_id="image.create",
        run_id="r42",
        audit=MemoryAuditSink(),
        clock=clock,
    )
    assert result.synced[0].path == "gen/image.create/2026-04-29/r42-image.create.png"
    assert (ws / result.synced[0].path).read_bytes() == b"png"


def test_input_paths_may_use_tokens(ws: Path) -> None:
    (ws / "docs" / "r7.txt").write_text("per-run")
    io = _io(inputsFiles={"src": {"path": "docs/<runId>.txt"}})
    result = run_with_file_contract(
        io,
        lambda v: (Path(v["_workflowFsRoot"]) / "src").read_text(),
        {},
        workspace=ws,
        unit_id="u",
        run_id="r7",
        audit=MemoryAuditSink(),
    )
    assert result.output == "per-run"


def test_aip16_audit_records_every_staged_read_and_synced_write(ws: Path) -> None:
    sink = SQLiteAuditSink(ws.parent / "audit.sqlite3")
    io = _io(
        inputsFiles={"src": {"path": "docs/in.txt"}}, outputsFiles={"o": {"path": "out/o.txt"}}
    )

    def body(value: dict[str, Any]) -> None:
        (Path(value["_workflowFsRoot"]) / "o").write_text("world!")

    run_with_file_contract(io, body, {}, workspace=ws, unit_id="u", run_id="run-a", audit=sink)
    recs = {r.kind: r.fields for r in sink.records(run_id="run-a")}
    assert recs["io.stage"] == {
        "unit_id": "u",
        "key": "src",
        "path": "docs/in.txt",
        "bytes": 5,
        "sha256": "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
    }
    assert recs["io.sync"]["bytes"] == 6 and recs["io.sync"]["path"] == "out/o.txt"
    assert len(recs["io.sync"]["sha256"]) == 64


def test_the_default_audit_sink_is_used_when_none_is_given(ws: Path) -> None:
    io = _io(inputsFiles={"src": {"path": "docs/in.txt"}})
    run_with_file_contract(io, lambda v: None, {}, workspace=ws, unit_id="u", run_id="dflt")
    assert [r.kind for r in default_sink().records(run_id="dflt")] == ["io.stage"]


def test_async_bodies_run_under_both_entry_points(ws: Path) -> None:
    io = _io(inputsFiles={"src": {"path": "docs/in.txt"}})

    async def body(value: dict[str, Any]) -> str:
        await asyncio.sleep(0)
        return (Path(value["_workflowFsRoot"]) / "src").read_text().upper()

    sync = run_with_file_contract(io, body, {}, workspace=ws, unit_id="u", audit=MemoryAuditSink())
    assert sync.output == "HELLO"
    inner = asyncio.run(
        arun_with_file_contract(io, body, {}, workspace=ws, unit_id="u", audit=MemoryAuditSink())
    )
    assert inner.output == "HELLO"


def test_body_failure_is_a_host_error_and_cleans_up(ws: Path) -> None:
    roots: list[Path] = []

    def body(value: dict[str, Any]) -> None:
        roots.append(Path(value["_workflowFsRoot"]))
        (roots[0] / "o").write_text("x")
        raise RuntimeError("boom")

    sink = MemoryAuditSink()
    with pytest.raises(FileContractError) as info:
        run_with_file_contract(
            _io(outputsFiles={"o": {"path": "o.txt"}}),
            body,
            {},
            workspace=ws,
            unit_id="u",
            run_id="boom",
            audit=sink,
        )
    assert [r.kind for r in sink.records(run_id="boom")] == ["io.run_failed"]
    assert info.value.code == "io.body_failed" and info.value.started
    assert isinstance(info.value.__cause__, RuntimeError)
    assert not roots[0].exists() and not (ws / "o.txt").exists()


# --- safety -----------------------------------------------------------------


def test_staging_refuses_symlinks_that_leave_the_workspace(ws: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret")
    (ws / "docs" / "link.txt").symlink_to(secret)
    calls: list[Any] = []
    with pytest.raises(FileContractError) as info:
        run_with_file_contract(
            _io(inputsFiles={"src": {"path": "docs/link.txt"}}),
            calls.append,
            {},
            workspace=ws,
            unit_id="u",
            audit=MemoryAuditSink(),
        )
    assert info.value.code == "io.path_escapes_workspace" and info.value.key == "src"
    assert calls == []


def test_staging_follows_symlinks_that_stay_inside(ws: Path) -> None:
    (ws / "docs" / "alias.txt").symlink_to(ws / "docs" / "in.txt")
    io = _io(inputsFiles={"src": {"path": "docs/alias.txt"}})
    result = run_with_file_contract(
        io, lambda v: None, {}, workspace=ws, unit_id="u", audit=MemoryAuditSink()
    )
    assert result.staged[0].bytes == 5


def test_sync_refuses_symlinked_directories_leaving_the_workspace(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "out").symlink_to(outside, target_is_directory=True)
    io = _io(outputsFiles={"o": {"path": "out/o.txt"}})

    def body(value: dict[str, Any]) -> str:
        (Path(value["_workflowFsRoot"]) / "o").write_text("x")
        return "done"

    result = run_with_file_contract(
        io, body, {}, workspace=ws, unit_id="u", audit=MemoryAuditSink()
    )
    assert result.output == "done"
    assert [w.code for w in result.warnings] == ["io.path_escapes_workspace"]
    assert list(outside.iterdir()) == []


def test_sync_replaces_a_planted_symlink_target_instead_of_following_it(ws: Path) -> None:
    (ws / "o.txt").symlink_to(ws / "docs" / "in.txt")
    io = _io(outputsFiles={"o": {"path": "o.txt"}})

    def body(value: dict[str, Any]) -> None:
        (Path(value["_workflowFsRoot"]) / "o").write_text("new")

    result = run_with_file_contract(
        io, body, {}, workspace=ws, unit_id="u", audit=MemoryAuditSink()
    )
    assert result.warnings == ()
    assert not (ws / "o.txt").is_symlink() and (ws / "o.txt").read_text() == "new"
    assert (ws / "docs" / "in.txt").read_text() == "hello"


@pytest.mark.parametrize("run_id", ["a/b", "..", "x\\y"])
def test_token_values_cannot_add_path_segments(ws: Path, run_id: str) -> None:
    calls: list[Any] = []
    with pytest.raises(FileContractError) as info:
        run_with_file_contract(
            _io(outputsFiles={"o": {"path": "out/<runId>.txt"}}),
            calls.append,
            {},
            workspace=ws,
            unit_id="u",
            run_id=run_id,
            audit=MemoryAuditSink(),
        )
    assert info.value.code == "io.unsafe_token_value" and calls == []


def test_aip16_concurrent_runs_of_the_same_unit_must_not_see_each_others_files(ws: Path) -> None:
    io = _io(
        inputsFiles={"src": {"path": "docs/in.txt"}},
        outputsFiles={"out": {"path": "runs/<runId>.txt"}},
    )
    barrier = threading.Barrier(8)
    sink = MemoryAuditSink()

    def body(value: dict[str, Any]) -> list[str]:
        root = Path(value["_workflowFsRoot"])
        mine = root.name
        (root / "out").write_text(mine)
        barrier.wait(timeout=30)  # every run is alive and has written before any looks
        seen = sorted(p.name for p in root.iterdir())
        assert (root / "out").read_text() == mine
        return seen

    def one(i: int) -> Any:
        return run_with_file_contract(
            io, body, {}, workspace=ws, unit_id="u", run_id=f"r{i}", audit=sink
        )

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(one, range(24)))
    assert all(r.output == ["out", "src"] for r in results)
    contents = {(ws / "runs" / f"r{i}.txt").read_text() for i in range(24)}
    assert len(contents) == 24, "each run synced its own file"
    assert len({r.fields["path"] for r in sink.records(kind="io.sync")}) == 24


def test_a_reused_run_id_still_gets_a_fresh_scratch_root(ws: Path) -> None:
    roots: list[str] = []
    io = _io(outputsFiles={"o": {"path": "o"}})
    for _ in range(2):
        run_with_file_contract(
            io,
            lambda v: roots.append(v["_workflowFsRoot"]),
            {},
            workspace=ws,
            unit_id="u",
            run_id="same",
            audit=MemoryAuditSink(),
        )
    assert roots[0] != roots[1]


def test_audit_records_are_plain_json(ws: Path) -> None:
    sink = MemoryAuditSink()
    run_with_file_contract(
        _io(inputsFiles={"src": {"path": "docs/in.txt"}}),
        lambda v: None,
        {},
        workspace=ws,
        unit_id="u",
        audit=sink,
    )
    rec: AuditRecord = sink.records()[0]
    assert set(rec.to_dict()) == {"kind", "run_id", "timestamp", "fields"}
    assert datetime.fromisoformat(rec.timestamp.replace("Z", "+00:00")).tzinfo == UTC
    assert os.path.basename(rec.fields["path"]) == "in.txt"


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.binary(min_size=0, max_size=256), min_size=2, max_size=6))
def test_parallel_runs_are_isolated_and_audited(tmp_path: Path, contents: list[bytes]) -> None:
    """Property: N parallel runs of one unit, each staging its own input, sync exactly
    their own bytes back, and the audit log holds each run's staged and synced sha256."""
    ws = tmp_path / f"ws-{uuid.uuid4().hex}"
    ws.mkdir()
    for i, data in enumerate(contents):
        (ws / f"in-r{i}.bin").write_bytes(data)
    io = _io(
        inputsFiles={"src": {"path": "in-<runId>.bin"}},
        outputsFiles={"out": {"path": "out/<runId>.bin"}},
    )
    sink = MemoryAuditSink()

    def body(value: dict[str, Any]) -> list[str]:
        root = Path(value["_workflowFsRoot"])
        (root / "out").write_bytes((root / "src").read_bytes())
        return sorted(p.name for p in root.iterdir())

    def one(i: int) -> Any:
        return run_with_file_contract(
            io, body, {}, workspace=ws, unit_id="u", run_id=f"r{i}", audit=sink
        )

    with ThreadPoolExecutor(max_workers=len(contents)) as pool:
        results = list(pool.map(one, range(len(contents))))
    for i, data in enumerate(contents):
        assert results[i].output == ["out", "src"]
        assert (ws / "out" / f"r{i}.bin").read_bytes() == data
        digest = hashlib.sha256(data).hexdigest()
        recs = sink.records(run_id=f"r{i}")
        assert [(r.kind, r.fields["sha256"], r.fields["bytes"]) for r in recs] == [
            ("io.stage", digest, len(data)),
            ("io.sync", digest, len(data)),
        ]


def test_sync_host_refuses_an_async_body_inside_a_running_loop(ws: Path) -> None:
    async def body(value: dict[str, Any]) -> int:
        return 1

    async def caller() -> None:
        with pytest.raises(FileContractError) as info:
            run_with_file_contract(
                define_io({}), body, {}, workspace=ws, unit_id="u", audit=MemoryAuditSink()
            )
        assert info.value.code == "io.event_loop_running"

    asyncio.run(caller())
