"""Homes that share nothing but the store: a launch in one FLIGHTDECK_HOME,
`runs show`/`runs list`/`audit list`/a resume from another, all through
PostgreSQL; one walk per run across processes on both backends; and the
store's URL never printed with its password."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.launch.test_cli_resume import FD, _workspace


def _fd(*args: str, home: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FLIGHTDECK_HOME": str(home), **extra}
    return subprocess.run([FD, *args], capture_output=True, text=True, env=env, timeout=120)


def test_a_run_launched_in_one_home_is_shown_and_resumed_from_another(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLIGHTDECK_DATABASE_URL", pg_url)
    ws, plan = _workspace(tmp_path)
    launcher, operator = tmp_path / "launcher", tmp_path / "operator"
    first = _fd(
        "launch", str(plan), "--unsigned", "--workspace", str(ws), "--format", "json",
        home=launcher, LEDGER_DIR=str(ws),
    )  # fmt: skip
    assert first.returncode == 3, first.stderr
    run_id = json.loads(first.stdout)["run_id"]
    here = json.loads(_fd("runs", "show", run_id, "--format", "json", home=launcher).stdout)
    there = json.loads(_fd("runs", "show", run_id, "--format", "json", home=operator).stdout)
    assert here == there and there["status"] == "pending-approval"
    listed = json.loads(_fd("runs", "list", "--format", "json", home=operator).stdout)
    assert [row["run_id"] for row in listed] == [run_id]
    audit = _fd("audit", "list", "--run", run_id, "--format", "json", home=operator)
    assert "launch.run" in [record["kind"] for record in json.loads(audit.stdout)]
    path = _fd("runs", "path", home=operator).stdout.strip()
    assert path == pg_url  # no password in this URL; masking is tested below
    done = _fd(
        "launch", "--resume", run_id, "--approve", "write", "--workspace", str(ws),
        "--format", "json", home=operator, LEDGER_DIR=str(ws),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    assert json.loads(done.stdout)["status"] == "completed"
    again = json.loads(_fd("runs", "show", run_id, "--format", "json", home=launcher).stdout)
    assert again["status"] == "completed"
    assert (ws / "ledger.txt").read_text() == "entry\n"
    # The outputs reach a third home through the store, the published file gone.
    published = Path(json.loads(done.stdout)["outputs"][0]["path"])
    expected = published.read_bytes()
    published.unlink()
    fetched = _fd(
        "runs", "outputs", run_id, "--out-dir", str(tmp_path / "fetched"), "--format", "json",
        home=tmp_path / "elsewhere",
    )  # fmt: skip
    assert fetched.returncode == 0, fetched.stderr + fetched.stdout
    assert (tmp_path / "fetched" / "done.json").read_bytes() == expected


def test_runs_outputs_on_sqlite_uses_the_published_file_or_says_so(
    tmp_path: Path, fd_home: Path
) -> None:
    ws, plan = _workspace(tmp_path)
    done = _fd(
        "launch", str(plan), "--unsigned", "--workspace", str(ws), "--approve", "all",
        "--out-dir", str(tmp_path / "out"), "--format", "json", home=fd_home, LEDGER_DIR=str(ws),
    )  # fmt: skip
    run_id = json.loads(done.stdout)["run_id"]
    args = ["runs", "outputs", run_id, "--out-dir", str(tmp_path / "copy"), "--format", "json"]
    copied = _fd(*args, home=fd_home)
    assert copied.returncode == 0, copied.stderr
    assert (tmp_path / "copy" / "done.json").read_bytes() == (
        tmp_path / "out" / "done.json"
    ).read_bytes()
    (tmp_path / "out" / "done.json").write_text("{}")
    changed = _fd(*args, home=fd_home)
    assert json.loads(changed.stdout)["error"]["code"] == "output.changed"
    (tmp_path / "out" / "done.json").unlink()
    missing = _fd(*args, home=fd_home)
    assert json.loads(missing.stdout)["error"]["code"] == "output.not_in_store"


def test_a_second_resume_of_a_run_being_walked_is_refused(
    backend: str, tmp_path: Path, fd_home: Path
) -> None:
    """A resume left walking (paused in a slow step) holds its run; another
    resume of it, from another home on PostgreSQL or the same home on
    SQLite, is refused with `resume.running` and runs nothing."""
    ws, plan = _workspace(tmp_path)
    first = _fd(
        "launch", str(plan), "--unsigned", "--workspace", str(ws), "--format", "json",
        home=fd_home, LEDGER_DIR=str(ws),
    )  # fmt: skip
    run_id = json.loads(first.stdout)["run_id"]
    env = {**os.environ, "FLIGHTDECK_HOME": str(fd_home), "LEDGER_DIR": str(ws)}
    walking = subprocess.Popen(
        [FD, "launch", "--resume", run_id, "--approve", "write", "--workspace", str(ws)],
        env={**env, "WAIT_SECONDS": "60"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not (ws / "waiting").exists():
            assert walking.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        other = fd_home if backend == "sqlite" else tmp_path / "second-operator"
        second = _fd(
            "launch", "--resume", run_id, "--approve", "write", "--workspace", str(ws),
            "--format", "json", home=other, LEDGER_DIR=str(ws),
        )  # fmt: skip
        assert second.returncode == 1, second.stderr
        assert json.loads(second.stdout)["error"]["code"] == "resume.running"
        assert (ws / "ledger.txt").read_text() == "entry\n"
    finally:
        os.kill(walking.pid, signal.SIGKILL)
        walking.wait()
    # Killed, its lock went with it: the run resumes.
    done = _fd(
        "launch", "--resume", run_id, "--workspace", str(ws), "--format", "json",
        home=fd_home, LEDGER_DIR=str(ws),
    )  # fmt: skip
    assert json.loads(done.stdout)["status"] == "completed", done.stderr + done.stdout


def test_config_show_masks_the_store_password(fd_home: Path) -> None:
    (fd_home / "config").mkdir(parents=True, exist_ok=True)
    (fd_home / "config" / "config.toml").write_text(
        '[store]\nurl = "postgresql://fd:t0psecret@db.internal:5432/flightdeck"\n'
    )
    env = {"FLIGHTDECK_DATABASE_URL": "postgresql://ops:envsecret@db2/fd"}
    for fmt in ("text", "json"):
        shown = _fd("config", "show", "--format", fmt, home=fd_home, **env)
        assert shown.returncode == 0, shown.stderr
        assert "t0psecret" not in shown.stdout and "envsecret" not in shown.stdout
        assert "postgresql://fd:***@db.internal:5432/flightdeck" in shown.stdout
        assert "postgresql://ops:***@db2/fd" in shown.stdout
    path = _fd("runs", "path", home=fd_home, **env)
    assert path.stdout.strip() == "postgresql://ops:***@db2/fd"


# Which transaction wrote the run's row and which its `launch.run` record.
_TXIDS = """
CREATE TABLE txids (what TEXT, txid BIGINT);
CREATE FUNCTION note_run() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO txids VALUES ('runs', txid_current()); RETURN NEW; END $$;
CREATE FUNCTION note_record() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO txids VALUES (NEW.kind, txid_current()); RETURN NEW; END $$;
CREATE TRIGGER note_run AFTER INSERT ON runs FOR EACH ROW EXECUTE FUNCTION note_run();
CREATE TRIGGER note_record AFTER INSERT ON records FOR EACH ROW EXECUTE FUNCTION note_record();
"""


def test_a_runs_row_and_its_launch_run_record_commit_together(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A launcher killed between the two would leave a run no `launch.run`
    explains; in one transaction, a kill leaves both or neither."""
    import psycopg

    from flightdeck.audit import default_sink
    from flightdeck.launch import Journal

    monkeypatch.setenv("FLIGHTDECK_DATABASE_URL", pg_url)
    Journal().runs(), default_sink().records()  # the stores' tables, for the triggers
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(_TXIDS)  # type: ignore[arg-type]
    ws, plan = _workspace(tmp_path)
    launched = _fd(
        "launch", str(plan), "--unsigned", "--workspace", str(ws), "--format", "json",
        home=tmp_path / "launcher", LEDGER_DIR=str(ws),
    )  # fmt: skip
    assert launched.returncode == 3, launched.stderr
    with psycopg.connect(pg_url) as conn:
        txids = dict(conn.execute("SELECT what, txid FROM txids ORDER BY txid").fetchall())
    assert txids["runs"] == txids["launch.run"], txids
