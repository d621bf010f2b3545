from __future__ import annotations

import json
from pathlib import Path

import flightdeck.launch as launch_pkg
from flightdeck.audit import JsonlAuditSink, MemoryAuditSink
from flightdeck.launch import AuditRouter, LaunchError, sink_from_spec

from .conftest import Harness, contract, write_plan


def test_public_surface_is_pinned() -> None:
    assert launch_pkg.__all__ == sorted(launch_pkg.__all__)
    for name in launch_pkg.__all__:
        assert getattr(launch_pkg, name) is not None
    public = {n for n in dir(launch_pkg) if not n.startswith("_")}
    assert public - set(launch_pkg.__all__) <= {"annotations"}


def test_records_go_to_the_sink_the_contract_names(harness: Harness, tmp_path: Path) -> None:
    """Issue 6: audit records routed to the sink the contract names; SQLite by default."""
    named = JsonlAuditSink(tmp_path / "reads.jsonl")
    harness.handlers["m.read"] = lambda call: {"v": 1}
    plan = write_plan(
        tmp_path,
        actions={"aileron:m.read": contract(audit={"fields": ["result"], "sink": "audit/reads"})},
        steps=[{"id": "r", "kind": "action-call", "actionRef": "aileron:m.read"}],
    )
    runtime = harness.runtime()
    runtime.audit_sinks = {"audit/reads": named}
    import asyncio

    from flightdeck.launch import Approvals, LaunchOptions, launch

    options = LaunchOptions(unsigned=True, out_dir=tmp_path / "o", approvals=Approvals())
    result = asyncio.run(launch(plan, options, runtime))
    assert result.status == "completed"
    lines = [json.loads(x) for x in (tmp_path / "reads.jsonl").read_text().splitlines()]
    assert [line["kind"] for line in lines] == ["launch.action_call"]
    assert lines[0]["fields"]["sink"] == "audit/reads"
    kinds = [r.kind for r in harness.audit.records()]
    # run.finished is a lifecycle event after the finish record.
    assert kinds == ["launch.run", "launch.action_call", "launch.finish", "lifecycle.event"]


def test_sink_specs() -> None:
    assert isinstance(sink_from_spec("jsonl:/tmp/x.jsonl"), JsonlAuditSink)
    try:
        sink_from_spec("s3://bucket")
    except LaunchError as exc:
        assert exc.code == "audit.sink_invalid"
    else:
        raise AssertionError("expected audit.sink_invalid")
    memory = MemoryAuditSink()
    AuditRouter(memory).write("r", "k", {"sink": "unmapped"})
    assert [r.kind for r in memory.records()] == ["k"]
