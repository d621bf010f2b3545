"""The UI's routes through Starlette's test client: what each page shows,
who may change anything, and that looking changes nothing."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from flightdeck.agent import SessionStore
from flightdeck.llm import Message, TextBlock, ToolUseBlock
from flightdeck.ui import UiConfig, create_app

from .conftest import DONE, PAUSED, Site

DECIDE = f"/runs/{PAUSED}/steps/write/decision"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_without_the_token_every_page_is_refused(site: Site) -> None:
    for path in ("/runs", f"/runs/{PAUSED}", "/audit", "/audit.json", "/plans", "/sessions"):
        response = site.client.get(path)
        assert response.status_code == 403, path
        assert "ui.unauthorised" in response.text
    wrong = site.client.get("/runs?token=not-the-token")
    assert wrong.status_code == 403


def test_the_token_becomes_a_cookie_and_leaves_the_url(site: Site) -> None:
    response = site.client.get(f"/runs?status=completed&token={site.config.secrets.token}")
    assert response.status_code == 200
    assert str(response.url) == "http://127.0.0.1:8765/runs?status=completed"
    cookie = response.history[0].headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie
    page = site.client.get("/audit")  # the cookie alone now suffices
    assert page.status_code == 200
    assert page.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert page.headers["referrer-policy"] == "no-referrer"


def test_a_decision_without_the_token_changes_nothing(site: Site) -> None:
    csrf = site.config.secrets.csrf
    response = site.client.post(DECIDE, data={"decision": "approve", "csrf": csrf})
    assert response.status_code == 403
    assert not site.resumed.exists()
    assert [r.kind for r in site.audit() if r.kind == "ui.approval"] == []


@pytest.mark.parametrize("csrf", [None, "wrong"])
def test_a_decision_without_the_csrf_token_changes_nothing(site: Site, csrf: str | None) -> None:
    site.login()
    form = {"decision": "approve"} | ({"csrf": csrf} if csrf else {})
    response = site.client.post(DECIDE, data=form)
    assert response.status_code == 403 and "ui.csrf" in response.text
    assert not site.resumed.exists()
    assert [r for r in site.audit() if r.kind == "ui.approval"] == []


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        # Another program on this machine: the host name is allowed, the
        # origin (scheme, host, port) is not this server's.
        "http://127.0.0.1:8766",
        "http://localhost:8765",
        "http://127.0.0.1",
        "https://127.0.0.1:8765",
        "null",
        "http://127.0.0.1:8765/runs",
    ],
)
def test_a_cross_origin_decision_is_refused(site: Site, origin: str) -> None:
    """With the right cookie and CSRF token, a write from any other origin
    is refused (docs/errors.md: 403 for another origin) and changes nothing."""
    site.login()
    form = {"decision": "approve", "csrf": site.config.secrets.csrf}
    response = site.client.post(
        DECIDE, data=form, headers={"Origin": origin}, follow_redirects=False
    )
    assert response.status_code == 403 and "ui.csrf" in response.text
    assert not site.resumed.exists()
    assert [r for r in site.audit() if r.kind == "ui.approval"] == []


@pytest.mark.parametrize(
    ("host", "origin"),
    [("127.0.0.1:8765", "http://127.0.0.1:8765"), ("[::1]:8765", "http://[::1]:8765")],
)
def test_a_same_origin_decision_is_accepted(site: Site, host: str, origin: str) -> None:
    site.login()
    form = {"decision": "approve", "csrf": site.config.secrets.csrf}
    response = site.client.post(
        DECIDE, data=form, headers={"Host": host, "Origin": origin}, follow_redirects=False
    )
    assert response.status_code == 303, response.text
    site.client.app.state.pages.steering.wait(30)  # type: ignore[attr-defined]
    assert site.resumed.exists()


def test_every_response_carries_the_security_headers(site: Site) -> None:
    for response in (site.client.get("/runs"), site.client.get("/runs?token=wrong")):
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["referrer-policy"] == "no-referrer"
        assert "default-src 'self'" in response.headers["content-security-policy"]


def test_a_paused_run_shows_no_end_time(site: Site) -> None:
    """A run paused for approval has not finished: no "finished" time and no
    duration, on its page or in the list (the journal records when it paused)."""
    site.login()
    page = site.client.get(f"/runs/{PAUSED}")
    assert page.status_code == 200
    assert "finished" not in page.text.split('id="run-status"', 1)[1].split("</p>", 1)[0]
    row = site.client.get("/runs").text.split(PAUSED, 2)[-1].split("</tr>", 1)[0]
    assert " s</td>" not in row
    done = site.client.get(f"/runs/{DONE}").text
    assert "finished 20" in done


def test_a_foreign_host_header_is_refused(site: Site) -> None:
    """DNS rebinding: a page on evil.example re-pointed at 127.0.0.1."""
    token = site.config.secrets.token
    response = site.client.get(f"/runs?token={token}", headers={"Host": "evil.example:8765"})
    assert response.status_code == 403 and "ui.bad_host" in response.text


@pytest.mark.parametrize("decision", ["approve", "deny"])
def test_deciding_audits_the_decision_and_resumes_the_run(site: Site, decision: str) -> None:
    site.login()
    page = site.client.get(f"/runs/{PAUSED}")
    assert 'data-state="pending-approval"' in page.text and site.config.secrets.csrf in page.text
    response = site.client.post(
        DECIDE,
        data={"decision": decision, "csrf": site.config.secrets.csrf},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200, response.text
    assert "the run is resuming" in response.text
    site.client.app.state.pages.steering.wait(30)  # type: ignore[attr-defined]
    args = json.loads(site.resumed.read_text())
    assert args[:3] == ["launch", "--resume", PAUSED]
    approvals = Path(args[args.index("--approvals") + 1])
    assert json.loads(approvals.read_text()) == {"write": decision}
    decided = [r for r in site.audit() if r.kind == "ui.approval"]
    assert len(decided) == 1 and decided[0].run_id == PAUSED
    assert decided[0].fields["origin"] == "ui" and decided[0].fields["decision"] == decision


def test_only_a_pending_step_can_be_decided(site: Site) -> None:
    site.login()
    csrf = site.config.secrets.csrf
    done = site.client.post(
        f"/runs/{PAUSED}/steps/read/decision", data={"decision": "approve", "csrf": csrf}
    )
    assert done.status_code == 409 and "ui.not_pending" in done.text
    odd = site.client.post(DECIDE, data={"decision": "maybe", "csrf": csrf})
    assert odd.status_code == 409 and "ui.bad_decision" in odd.text
    assert not site.resumed.exists()


def _store_rows(site: Site) -> list[object]:
    journal = site.journal()
    rows = [(journal.run(r), journal.steps(r), journal.outputs(r)) for r in (PAUSED, DONE)]
    return [rows, site.audit()]


def test_looking_writes_nothing(site: Site) -> None:
    if site.url is not None:  # PostgreSQL: the same rows before and after
        before_rows = _store_rows(site)
        site.login()
        for path in ("/runs", f"/runs/{PAUSED}", f"/runs/{DONE}", "/audit", "/audit.json"):
            assert site.client.get(path).status_code == 200, path
        assert _store_rows(site) == before_rows
        return
    journal, audit = site.data / "runs.sqlite3", site.data / "audit.sqlite3"
    before = {path: _digest(path) for path in (journal, audit)}
    site.login()
    for path in ("/runs", f"/runs/{PAUSED}", f"/runs/{DONE}", "/audit", "/audit.json"):
        assert site.client.get(path).status_code == 200, path
    assert {path: _digest(path) for path in (journal, audit)} == before
    assert not (site.data / "trust.json").exists()


def test_an_empty_data_directory_is_shown_empty_and_not_created(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    config = UiConfig(data=tmp_path / "nothing")
    client = TestClient(create_app(config), base_url="http://localhost")
    response = client.get(f"/runs?token={config.secrets.token}")
    assert response.status_code == 200 and "no runs yet" in response.text
    assert client.get("/audit").status_code == 200
    assert not (tmp_path / "nothing").exists()


def test_runs_list_filters_and_searches(site: Site) -> None:
    site.login()
    both = site.client.get("/runs").text
    assert PAUSED in both and DONE in both
    completed = site.client.get("/runs?status=completed").text
    assert DONE in completed and PAUSED not in completed
    searched = site.client.get("/runs?q=ledger").text
    assert PAUSED in searched and DONE not in searched


def test_run_page_shows_steps_graph_outputs_and_audit(site: Site) -> None:
    site.login()
    page = site.client.get(f"/runs/{PAUSED}").text
    assert '<svg xmlns="http://www.w3.org/2000/svg"' in page
    assert 'data-step="write" data-state="pending-approval"' in page
    assert "aileron:ledger.read" in page  # the step's audit record
    assert f'data-live="/runs/{PAUSED}/events"' in page
    done = site.client.get(f"/runs/{DONE}").text
    assert "out.json" in done and "{&#34;n&#34;: 3}" in done
    assert "# Weekly report" in done  # a published text output, read from its file
    assert "data-live" not in done  # a finished run is not followed
    missing = site.client.get("/runs/run-nope")
    assert missing.status_code == 404 and "runs.unknown" in missing.text


def test_run_events_announce_changes(site: Site) -> None:
    """One event when the stream opens, one when a step changes, none idle."""

    site.config.stream_seconds = 1.5
    site.login()
    events: list[str] = []
    with site.client.stream("GET", f"/runs/{PAUSED}/events") as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        for line in stream.iter_lines():
            if line.startswith("event:"):
                events.append(line)
                if len(events) == 1:  # a resumed launch moves the step on
                    journal = site.journal()
                    journal.step_started(PAUSED, "write", "action-call", "approved:file")
                    journal.close()
    assert events == ["event: change", "event: change"]


def test_audit_filters_and_export(site: Site) -> None:
    site.login()
    page = site.client.get("/audit?kind=launch.action_call").text
    assert "aileron:ledger.read" in page and "1 record(s)" in page
    exported = site.client.get("/audit.json?run=" + DONE)
    assert exported.headers["content-disposition"].startswith("attachment")
    assert [r["kind"] for r in exported.json()] == ["launch.run"]
    assert site.client.get("/audit.json?effect=read").json()[0]["fields"]["host"] == "api.x"
    assert site.client.get("/audit.json?q=api.x").json()[0]["kind"] == "launch.action_call"
    bad = site.client.get("/audit?since=yesterday-ish")
    assert bad.status_code == 400 and "audit.bad_filter" in bad.text


def test_sessions_show_transcripts(site: Site) -> None:
    store = SessionStore(site.data / "sessions")
    session = store.create("s1", title="tidy notes")
    session.append_messages(
        [
            Message("user", [TextBlock("please tidy")]),
            Message("assistant", [ToolUseBlock("t1", "Read", {"path": "notes.md"})]),
        ]
    )
    site.login()
    assert "tidy notes" in site.client.get("/sessions").text
    page = site.client.get("/sessions/s1").text
    assert "please tidy" in page and "tool call Read" in page and "notes.md" in page
    assert site.client.get("/sessions/nope").status_code == 404


def test_plans_page_lists_the_store(site: Site) -> None:
    site.login()
    assert "no frozen plans" in site.client.get("/plans").text


def test_a_step_of_a_run_still_running_cannot_be_decided(site: Site) -> None:
    """Another branch still runs: a resume now would be a second process on the run."""

    journal = site.journal()
    journal.set_run_status(PAUSED, "running")
    journal.close()
    site.login()
    assert "Approve" not in site.client.get(f"/runs/{PAUSED}").text
    csrf = site.config.secrets.csrf
    response = site.client.post(DECIDE, data={"decision": "approve", "csrf": csrf})
    assert response.status_code == 409 and "ui.run_not_paused" in response.text
    assert not site.resumed.exists()


def test_events_of_an_unknown_run_are_a_404(site: Site) -> None:
    site.login()
    assert site.client.get("/runs/run-nope/events").status_code == 404


def test_an_allowed_host_name_is_served(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    config = UiConfig(data=tmp_path, bound="0.0.0.0", extra_hosts=("box.internal",))
    client = TestClient(create_app(config), base_url="http://box.internal:8765")
    assert client.get(f"/runs?token={config.secrets.token}").status_code == 200
    other = TestClient(create_app(config), base_url="http://elsewhere:8765")
    assert other.get(f"/runs?token={config.secrets.token}").status_code == 403


def test_two_decisions_at_once_start_one_resume(site: Site) -> None:
    """Two tabs deciding the same paused run at the same moment: one resume."""
    import threading

    steering = site.client.app.state.pages.steering  # type: ignore[attr-defined]
    results: list[object] = []
    barrier = threading.Barrier(2)

    def decide() -> None:
        barrier.wait()
        try:
            results.append(steering.decide(PAUSED, "write", "approve"))
        except Exception as exc:  # the loser's refusal
            results.append(getattr(exc, "code", exc))

    threads = [threading.Thread(target=decide) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    steering.wait(30)
    assert sorted(map(str, results))[0] == "ui.resume_running", results
    assert len([r for r in site.audit() if r.kind == "ui.approval"]) == 1


class _Announced(Exception):
    pass


def test_the_url_is_printed_only_once_the_server_listens(tmp_path: Path) -> None:
    """Whoever opens the printed URL at once is served, never refused: the
    socket listens before the line is written."""
    import socket

    from flightdeck.ui import serve

    reached: list[str] = []

    def announce(line: str) -> None:
        if "token=" not in line:
            return
        port = int(line.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5):
                reached.append("connected")
        except ConnectionRefusedError:
            reached.append("refused")
        raise _Announced

    with pytest.raises(_Announced):
        serve(UiConfig(data=tmp_path), 0, open_browser=False, announce=announce)
    assert reached == ["connected"]


@pytest.mark.parametrize("decision", ["approve", "deny"])
def test_a_temporal_run_is_decided_by_a_signal_not_a_resume(site: Site, decision: str) -> None:
    """A run held by its Temporal workflow is not resumed by a new launch
    (that is refused as `temporal.run_open`): the page sends the decision to
    the workflow with `runs approve`, on the cluster the run recorded."""

    journal = site.journal()
    journal.set_run_executor(PAUSED, "temporal", {"address": "127.0.0.1:7233"})
    journal.close()
    site.login()
    response = site.client.post(
        DECIDE,
        data={"decision": decision, "csrf": site.config.secrets.csrf},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200, response.text
    site.client.app.state.pages.steering.wait(30)  # type: ignore[attr-defined]
    args = json.loads(site.resumed.read_text())
    expected = ["runs", "approve", PAUSED, "write", *(["--deny"] if decision == "deny" else [])]
    assert args[: len(expected)] == expected
    assert "--resume" not in args
    decided = [r for r in site.audit() if r.kind == "ui.approval"]
    assert len(decided) == 1 and decided[0].fields["decision"] == decision


def test_a_journal_from_before_executors_were_recorded_is_read(tmp_path: Path) -> None:
    """The page never migrates a journal: one without the executor column
    shows its runs, and a decision on one of them resumes it as before."""
    import sqlite3

    from flightdeck.ui._data import Reader

    path = tmp_path / "runs.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE runs (run_id TEXT PRIMARY KEY, plan_name TEXT, plan_path TEXT,"
            " content_hash TEXT, status TEXT, started_at TEXT, finished_at TEXT,"
            " launch_time TEXT, inputs TEXT, options TEXT, error TEXT)"
        )
        conn.execute(
            "CREATE TABLE steps (run_id TEXT, step_id TEXT, kind TEXT, status TEXT,"
            " started_at TEXT, finished_at TEXT, attempts INTEGER, result TEXT, error TEXT,"
            " approval TEXT)"
        )
        conn.execute(
            "CREATE TABLE outputs (run_id TEXT, name TEXT, path TEXT, mime_type TEXT,"
            " sha256 TEXT, bytes INTEGER, content TEXT)"
        )
        conn.execute(
            "INSERT INTO runs VALUES ('r1', 'p', '/p', NULL, 'pending-approval',"
            " '2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z', '2026-01-01T00:00:00Z',"
            " '{}', '{}', NULL)"
        )
    run = Reader(path, tmp_path / "audit.sqlite3").run("r1")
    assert run is not None and run["executor"] is None and run["finished_at"] is None
