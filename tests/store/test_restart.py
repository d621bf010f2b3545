"""A PostgreSQL server restarted under a long-lived process (a worker, the
ui): the pool checks each connection before handing it out, so the first
journal and audit calls after the restart succeed instead of failing once
with `database.unreachable` on a connection the server closed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from flightdeck.audit import AuditRecord, default_sink
from flightdeck.config._database import close_pools, pool
from flightdeck.launch import Journal


@pytest.fixture
def own_server() -> Iterator[str]:
    """A cluster of this test's own (restarting the session's would end the
    sessions of whatever else holds it): the URL of a fresh database."""
    from tests._postgres import SKIP_REASON, fresh_database, server_bin, started_cluster

    bindir = server_bin()
    if bindir is None:
        pytest.skip(SKIP_REASON)
    with started_cluster(bindir) as admin:
        yield fresh_database(admin)
        close_pools()


def test_the_first_calls_after_a_server_restart_succeed(
    own_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests._postgres import restart

    monkeypatch.setenv("FLIGHTDECK_DATABASE_URL", own_server)
    journal, audit = Journal(), default_sink()
    journal.create_run(
        "r1", plan_name="plan", plan_path="/plan", content_hash=None,
        launch_time="2026-01-01T00:00:00Z", inputs={}, options={},
    )  # fmt: skip
    audit.record(AuditRecord(kind="launch.start", run_id="r1", fields={"n": 1}))
    idle = pool(own_server).get_stats()["pool_available"]
    assert idle >= 1  # connections the restart will close under the pool

    restart(own_server)

    assert [row.run_id for row in journal.runs()] == ["r1"]
    audit.record(AuditRecord(kind="launch.finish", run_id="r1", fields={"n": 2}))
    assert [r.kind for r in audit.records(run_id="r1")] == ["launch.start", "launch.finish"]
    journal.step_finished("r1", "s1", "transform", "completed", result={"ok": True})
    assert [row.step_id for row in journal.steps("r1")] == ["s1"]
