"""In-doubt steps stay held on every resume until the operator decides
(`launch --resume RUN --accept STEP[=OUTPUTS]` or `--retry STEP`)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from .test_cli_resume import _env, _fd, _kill_when, _run_id, _workspace


def _killed_mid_write(tmp_path: Path) -> tuple[Path, str]:
    ws, plan = _workspace(tmp_path)
    args = ["launch", str(plan), "--unsigned", "--workspace", str(ws), "--approve", "all"]
    _kill_when(ws / "appended", args, _env(ws, APPEND_SECONDS="60"))
    return ws, _run_id()


def _resume(ws: Path, run_id: str, *extra: str) -> tuple[int, dict[str, object]]:
    done = _fd(
        "launch", "--resume", run_id, *extra, "--workspace", str(ws), "--format", "json",
        env=_env(ws),
    )  # fmt: skip
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else {}


def _decisions(run_id: str) -> list[dict[str, object]]:
    home = Path(_fd("runs", "path").stdout.strip()).parent
    with sqlite3.connect(home / "audit.sqlite3") as db:
        rows = db.execute(
            "SELECT fields, timestamp FROM records WHERE kind = 'resume.decision' AND run_id = ?",
            (run_id,),
        ).fetchall()
    return [{**json.loads(fields), "timestamp": stamp} for fields, stamp in rows]


def test_every_later_resume_refuses_until_decided(tmp_path: Path) -> None:
    ws, run_id = _killed_mid_write(tmp_path)
    for _ in range(3):  # not only the first resume: each one
        code, report = _resume(ws, run_id)
        assert code == 1
        error = report["error"]
        assert isinstance(error, dict)
        assert error["code"] == "resume.in_doubt" and error["step"] == "write"
        assert "--accept write" in str(error.get("hint"))
    assert (ws / "ledger.txt").read_text() == "entry\n"  # never written twice


def test_retry_runs_the_step_again_once_and_is_audited(tmp_path: Path) -> None:
    ws, run_id = _killed_mid_write(tmp_path)
    code, _ = _resume(ws, run_id)
    assert code == 1
    code, report = _resume(ws, run_id, "--retry", "write", "--approve", "all")
    assert code == 0 and report["status"] == "completed"
    assert (ws / "ledger.txt").read_text() == "entry\nentry\n"  # the operator asked for it
    code, report = _resume(ws, run_id)  # a finished run is not run again
    assert (ws / "ledger.txt").read_text() == "entry\nentry\n"
    decided = _decisions(run_id)
    assert len(decided) == 1
    assert decided[0]["decision"] == "retry" and decided[0]["step"] == "write"
    assert decided[0]["by"] and decided[0]["timestamp"]


def test_accept_records_the_observed_outputs_without_running(tmp_path: Path) -> None:
    ws, run_id = _killed_mid_write(tmp_path)
    receipt = json.dumps({"receipt": {"count": 1, "text": "entry"}})
    code, report = _resume(ws, run_id, "--accept", f"write={receipt}")
    assert code == 0, report
    assert report["status"] == "completed"
    assert (ws / "ledger.txt").read_text() == "entry\n"  # not written again
    shown = json.loads(_fd("runs", "show", run_id, "--format", "json").stdout)
    assert {s["id"]: s["status"] for s in shown["steps"]} == {
        "write": "completed",
        "wait": "completed",
    }
    decided = _decisions(run_id)
    assert len(decided) == 1 and decided[0]["decision"] == "accept"
    assert decided[0]["outputs"] == {"receipt": {"count": 1, "text": "entry"}}


def test_a_decision_for_a_step_not_in_doubt_is_refused(tmp_path: Path) -> None:
    ws, run_id = _killed_mid_write(tmp_path)
    code, report = _resume(ws, run_id, "--retry", "wait")
    assert code == 1
    error = report["error"]
    assert isinstance(error, dict) and error["code"] == "resume.not_in_doubt"
    assert (ws / "ledger.txt").read_text() == "entry\n"
