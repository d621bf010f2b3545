"""A data directory with runs and audit records written the way a launch
writes them (through `Journal` and the audit store), and a test client for
the UI over it: once with the SQLite files, once with a PostgreSQL store
(the `backend` fixture)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from flightdeck.audit import AuditRecord, PostgresAuditSink, SQLiteAuditSink
from flightdeck.launch import Journal
from flightdeck.ui import UiConfig, create_app

from ..launch.conftest import contract, write_plan

PAUSED = "run-20260101T000000-paused"
DONE = "run-20260101T000001-done"

# Stands in for `python -m flightdeck`: records the resume it was asked for.
FAKE_LAUNCHER = """
import json, pathlib, sys
pathlib.Path(sys.argv[1]).write_text(json.dumps(sys.argv[2:]))
"""


@dataclass
class Site:
    client: TestClient
    config: UiConfig
    data: Path
    resumed: Path  # where the fake launcher writes the resume's arguments
    url: str | None = None  # the PostgreSQL store, for the postgres backend

    def journal(self) -> Journal:
        return Journal(self.data / "runs.sqlite3") if self.url is None else Journal(url=self.url)

    def login(self) -> None:
        response = self.client.get(f"/runs?token={self.config.secrets.token}")
        assert response.status_code == 200

    def audit(self) -> list[AuditRecord]:
        return _audit(self.data, self.url).records()


def _audit(data: Path, url: str | None) -> Any:
    return SQLiteAuditSink(data / "audit.sqlite3") if url is None else PostgresAuditSink(url)


def populate(data: Path, plan: Path, url: str | None = None) -> None:
    journal = Journal(data / "runs.sqlite3") if url is None else Journal(url=url)
    for run_id, status in ((PAUSED, "pending-approval"), (DONE, "completed")):
        journal.create_run(
            run_id,
            plan_name="ledger" if run_id == PAUSED else "digest",
            plan_path=str(plan),
            content_hash="sha256:" + "ab" * 32,
            launch_time="2026-01-01T00:00:00Z",
            inputs={"text": "hello"},
            options={},
        )
        journal.set_run_status(run_id, status)
    journal.step_started(PAUSED, "read", "action-call", "not-required")
    journal.step_finished(
        PAUSED, "read", "action-call", "completed", attempts=1, result={"outputs": {"n": 3}}
    )
    journal.step_finished(PAUSED, "write", "action-call", "pending-approval", approval="pending")
    journal.step_finished(DONE, "read", "action-call", "completed", attempts=1, result={})
    journal.output(
        DONE,
        {"name": "out.json", "mime_type": "application/json", "sha256": "0" * 64, "bytes": 9},
        '{"n": 3}',
    )
    report = data / "report.md"
    data.mkdir(parents=True, exist_ok=True)
    report.write_text("# Weekly report\n")
    journal.output(
        DONE,
        {
            "name": "report.md",
            "path": str(report),
            "mime_type": "text/markdown",
            "sha256": "0" * 64,
            "bytes": 16,
        },
        None,
    )
    journal.close()
    audit = _audit(data, url)
    audit.record(AuditRecord("launch.run", PAUSED, {"plan": "ledger"}))
    audit.record(
        AuditRecord(
            "launch.action_call",
            PAUSED,
            {"step": "read", "action": "aileron:ledger.read", "effect": "read", "host": "api.x"},
        )
    )
    audit.record(AuditRecord("launch.run", DONE, {"plan": "digest"}))
    audit.close()


def ledger_plan(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return write_plan(
        folder,
        actions={"aileron:ledger.read": contract(), "aileron:ledger.append": contract()},
        steps=[
            {
                "id": "read",
                "kind": "action-call",
                "actionRef": "aileron:ledger.read",
                "args": {},
                "outputs": ["n"],
            },
            {
                "id": "write",
                "kind": "action-call",
                "actionRef": "aileron:ledger.append",
                "args": {"text": "steps.read.n"},
                "outputs": ["receipt"],
            },
        ],
    )


@pytest.fixture
def site(tmp_path: Path, backend: str) -> Iterator[Site]:
    data = tmp_path / "data"
    url = os.environ.get("FLIGHTDECK_DATABASE_URL") if backend == "postgres" else None
    populate(data, ledger_plan(tmp_path / "plan"), url)
    script = tmp_path / "fake_launcher.py"
    script.write_text(FAKE_LAUNCHER)
    resumed = tmp_path / "resumed.json"
    config = UiConfig(data=data, poll_seconds=0.05, stream_seconds=0.3, store_url=url)
    app = create_app(config)
    app.state.pages.steering.launcher = (sys.executable, str(script), str(resumed))
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        yield Site(client, config, data, resumed, url)
    app.state.pages.steering.wait(30)
