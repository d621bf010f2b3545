"""Approving or denying a paused step from the page.

A launch that meets a step needing approval, with nobody to ask, journals
the step `pending-approval`, ends with exit status 3, and continues only
when resumed (`flightdeck launch --resume RUN --approve STEP`). So a
decision made on the page is carried out the same way a person at a
terminal would: the UI audits it (`ui.approval`, origin `ui`, who), writes
it to an approvals file and starts `flightdeck launch --resume RUN
--approvals FILE` as its own process. The resumed launch re-verifies the
plan, journals the decision as `approved:file` / `denied:file` and runs on;
the run page follows it through the journal. A run on Temporal is held by
its workflow rather than by a launch that ended: the decision is sent to it
with `flightdeck runs approve RUN STEP [--deny]` (the cluster its launch
recorded), and its workers carry on.

Only one resume per run at a time: a second decision while one runs is
refused (`ui.resume_running`) rather than racing it on the same run.
"""

from __future__ import annotations

import getpass
import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from flightdeck.audit import AuditRecord, AuditSink
from flightdeck.ui._data import Reader
from flightdeck.ui._errors import UiError

DECISIONS = ("approve", "deny")


def _operator() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


@dataclass
class Steering:
    reader: Reader
    audit: AuditSink
    work_dir: Path  # approvals files and resume logs
    workspace: Path | None = None
    launcher: tuple[str, ...] = (sys.executable, "-m", "flightdeck")
    _running: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    # Held from the checks to the spawn: two tabs deciding the same paused run
    # at once must not both pass "not resuming" and start two resumes.
    _deciding: threading.Lock = field(default_factory=threading.Lock)

    def resuming(self, run_id: str) -> bool:
        with self._lock:
            process = self._running.get(run_id)
            if process is not None and process.poll() is not None:
                del self._running[run_id]
                process = None
            return process is not None

    def decide(self, run_id: str, step_id: str, decision: str) -> dict[str, object]:
        with self._deciding:
            return self._decide(run_id, step_id, decision)

    def _decide(self, run_id: str, step_id: str, decision: str) -> dict[str, object]:
        if decision not in DECISIONS:
            raise UiError("ui.bad_decision", f"decision must be approve or deny, not {decision!r}")
        run = self.reader.run(run_id)
        if run is None:
            raise UiError("runs.unknown", f"no run {run_id}")
        step = next((s for s in run["steps"] if s["id"] == step_id), None)
        if step is None or step["status"] != "pending-approval":
            raise UiError(
                "ui.not_pending",
                f"step {step_id} of run {run_id} is not waiting for approval",
                hint="reload the page: someone may have decided it already",
            )
        if run["status"] != "pending-approval":
            # Another branch of the launch is still running (or the run ended
            # otherwise): a resume now would be a second process on the run.
            raise UiError(
                "ui.run_not_paused",
                f"run {run_id} is {run['status']}, not paused for approval",
                hint="decide once the launch has paused (status pending-approval)",
            )
        if self.resuming(run_id):
            raise UiError(
                "ui.resume_running",
                f"run {run_id} is being resumed; decide once that resume has paused or ended",
            )
        fields: dict[str, object] = {
            "step": step_id,
            "decision": decision,
            "origin": "ui",
            "by": _operator(),
        }
        self.audit.record(AuditRecord("ui.approval", run_id, fields))
        self._resume(run_id, step_id, decision, temporal=run.get("executor") == "temporal")
        return fields

    def _resume(self, run_id: str, step_id: str, decision: str, *, temporal: bool) -> None:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        if temporal:
            # A Temporal run is held by its workflow, not by a launch that
            # ended: the decision is a signal to it, on the cluster the run
            # recorded (`runs approve`), and its workers carry on.
            args = [*self.launcher, "runs", "approve", run_id, step_id]
            args += ["--deny"] if decision == "deny" else []
        else:
            approvals = self.work_dir / f"{run_id}.approvals.json"
            approvals.write_text(json.dumps({step_id: decision}), "utf-8")
            args = [*self.launcher, "launch", "--resume", run_id, "--approvals", str(approvals)]
        if self.workspace is not None:
            args += ["--workspace", str(self.workspace)]
        log = (self.work_dir / f"{run_id}.resume.log").open("ab")
        try:
            process = subprocess.Popen(
                [*args, "--format", "json"],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=os.environ.copy(),
                # Its own session: stopping the UI with Ctrl-C does not stop the run.
                start_new_session=True,
            )
        except OSError as exc:
            raise UiError("ui.resume_failed", f"cannot start the resume: {exc}") from None
        finally:
            log.close()
        with self._lock:
            self._running[run_id] = process

    def wait(self, timeout: float | None = None) -> None:
        """Wait for the resumes this process started (tests, shutdown)."""
        with self._lock:
            running = list(self._running.values())
        for process in running:
            process.wait(timeout)
