"""`flightdeck config`, `flightdeck audit` and `flightdeck completion` as processes."""

from __future__ import annotations

import json
from pathlib import Path

from flightdeck.audit import AuditRecord, JsonlAuditSink, SQLiteAuditSink
from tests.cli._run import run


def _user_config(home: Path, text: str) -> Path:
    path = home / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_config_path_names_every_location(fd_home: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "flightdeck.toml").write_text("")
    proc = run("config", "path", "--format", "json", cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["user_file"] == str(fd_home / "config" / "config.toml")
    assert data["user_file_exists"] is False
    assert data["project_file"] == str(workspace / "flightdeck.toml")
    assert data["project_file_exists"] is True
    assert data["data_dir"] == str(fd_home / "data")


def test_config_show_says_where_each_value_came_from(fd_home: Path, tmp_path: Path) -> None:
    user = _user_config(
        fd_home,
        '[agent]\nprovider = "anthropic"\nmodel = "m1"\napi_key = "sk-very-secret"\n'
        "[agent.sandbox]\nmode = 'bwrap'\n",
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    project = workspace / "flightdeck.toml"
    project.write_text('[agent]\nmodel = "m2"\nsandbox = "off"\nmax_tokens = 5\n')
    proc = run(
        "config",
        "show",
        "--format",
        "json",
        "--workspace",
        str(workspace),
        env={"FLIGHTDECK_KEY_PASSPHRASE": "hunter2", "FLIGHTDECK_SECRET_GH": "ghp_x"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "sk-very-secret" not in proc.stdout and "hunter2" not in proc.stdout
    assert "ghp_x" not in proc.stdout
    settings = {s["key"]: s for s in json.loads(proc.stdout)}
    assert settings["agent.provider"]["source"] == str(user)
    assert (settings["agent.model"]["value"], settings["agent.model"]["source"]) == (
        "m2",
        str(project),
    )
    # The project's scalar replaced the user's table: its leaf is gone.
    assert "agent.sandbox.mode" not in settings and settings["agent.sandbox"]["value"] == "off"
    assert settings["agent.api_key"] == {
        "key": "agent.api_key",
        "value": None,
        "source": str(user),
        "secret": True,
    }
    assert settings["agent.max_tokens"]["value"] == 5  # a word match, not a substring
    assert settings["FLIGHTDECK_KEY_PASSPHRASE"]["secret"] is True
    assert settings["FLIGHTDECK_SECRET_GH"]["value"] is None
    assert settings["FLIGHTDECK_HOME"]["value"] == str(fd_home)


def test_config_show_reports_a_broken_file_with_its_code(fd_home: Path) -> None:
    _user_config(fd_home, "[agent\n")
    proc = run("config", "show")
    assert proc.returncode == 1
    assert "[config.invalid]" in proc.stderr and "Traceback" not in proc.stderr
    proc = run("config", "show", "--format", "json")
    assert json.loads(proc.stdout)["error"]["code"] == "config.invalid"


def _store(fd_home: Path) -> None:
    sink = SQLiteAuditSink(fd_home / "data" / "audit.sqlite3")
    records = [
        AuditRecord("launch.start", "run-a", {"plan": "digest"}, "2026-01-01T00:00:00.000000Z"),
        AuditRecord(
            "launch.action_call",
            "run-a",
            {"actionRef": "aileron:metrics.query", "result": "ok"},
            "2026-01-01T00:00:01.000000Z",
        ),
        AuditRecord("launch.start", "run-b", {"plan": "other"}, "2026-01-02T00:00:00.000000Z"),
        AuditRecord(
            "agent.tool_call",
            "sess-1",
            {"tool": "notes.append", "ok": False, "code": "driver.error"},
            "2026-01-03T00:00:00.000000Z",
        ),
        AuditRecord("agent.tool_call", "sess-1", {"tool": "notes.append", "ok": True}),
    ]
    for record in records:
        sink.record(record)
    sink.close()


def _kinds(*args: str) -> list[tuple[str, str | None]]:
    proc = run("audit", "list", "--format", "json", *args)
    assert proc.returncode == 0, proc.stderr
    return [(r["kind"], r["run_id"]) for r in json.loads(proc.stdout)]


def test_audit_list_filters(fd_home: Path) -> None:
    _store(fd_home)
    assert len(_kinds()) == 5
    assert _kinds("--plan", "digest") == [
        ("launch.start", "run-a"),
        ("launch.action_call", "run-a"),
    ]
    assert _kinds("--action", "aileron:metrics.query") == [("launch.action_call", "run-a")]
    assert _kinds("--kind", "agent.") == [("agent.tool_call", "sess-1")] * 2
    assert _kinds("--kind", "agent.tool_call", "--where", "ok=false") == [
        ("agent.tool_call", "sess-1")
    ]
    assert _kinds("--where", "action_ref=aileron:metrics.query") == [  # either casing
        ("launch.action_call", "run-a")
    ]
    assert _kinds("--since", "2026-01-02", "--until", "2026-01-03T00:00:00Z") == [
        ("launch.start", "run-b"),
        ("agent.tool_call", "sess-1"),
    ]
    assert _kinds("--since", "1h") == [("agent.tool_call", "sess-1")]  # only the fresh one
    assert _kinds("--run", "run-b") == [("launch.start", "run-b")]
    assert _kinds("-n", "1") == [("agent.tool_call", "sess-1")]


def test_audit_text_table_and_show(fd_home: Path) -> None:
    _store(fd_home)
    proc = run("audit", "list", "--kind", "launch.")
    assert proc.returncode == 0
    header, *rows = proc.stdout.splitlines()
    assert header.split() == ["time", "kind", "run", "fields"]
    assert len(rows) == 3 and "plan=digest" in rows[0]
    proc = run("audit", "show", "run-a")
    assert proc.returncode == 0 and '"actionRef": "aileron:metrics.query"' in proc.stdout
    proc = run("audit", "show", "run-zzz")
    assert proc.returncode == 1 and "no audit records for run run-zzz" in proc.stdout


def test_audit_reads_another_store_and_refuses_bad_filters(fd_home: Path, tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    JsonlAuditSink(path).record(AuditRecord("io.stage", "r1", {"key": "src"}))
    proc = run("audit", "list", "--store", f"jsonl:{path}", "--format", "json")
    assert [r["kind"] for r in json.loads(proc.stdout)] == ["io.stage"]
    proc = run("audit", "list", "--store", str(tmp_path / "missing.db"))
    assert proc.returncode == 1 and "[audit.bad_filter]" in proc.stderr
    assert not (tmp_path / "missing.db").exists()  # reading never creates a store
    for bad in (["--since", "yesterday"], ["--where", "novalue"]):
        proc = run("audit", "list", *bad)
        assert proc.returncode == 2 and "[audit.bad_filter]" in proc.stderr
        assert "Traceback" not in proc.stderr


def test_completion_script_completes_through_the_program() -> None:
    proc = run("completion", "bash")
    assert proc.returncode == 0 and "_FLIGHTDECK_COMPLETE=bash_complete" in proc.stdout
    # What the installed script asks the program when the user presses Tab.
    proc = run(
        env={
            "_FLIGHTDECK_COMPLETE": "bash_complete",
            "COMP_WORDS": "flightdeck au",
            "COMP_CWORD": "1",
        }
    )
    assert proc.stdout.split() == ["plain,audit"]
    proc = run(
        env={
            "_FLIGHTDECK_COMPLETE": "bash_complete",
            "COMP_WORDS": "flightdeck completion ",
            "COMP_CWORD": "2",
        }
    )
    assert proc.stdout.split() == ["plain,bash", "plain,fish", "plain,zsh"]
    for shell in ("zsh", "fish"):
        assert "_FLIGHTDECK_COMPLETE" in run("completion", shell).stdout


def test_a_damaged_jsonl_store_is_reported_never_a_traceback(tmp_path: Path) -> None:
    good = json.dumps({"kind": "io.stage", "run_id": "r1", "timestamp": "t", "fields": {}})
    cases = {
        # name: (bytes, exit code, what stderr says, kinds listed)
        "binary": (b"\xff\xfe\x00garbage\n", 1, '"code": "audit.store_corrupt"', None),
        "deep": (b"[" * 100_000 + b"\n", 1, '"code": "audit.store_corrupt"', None),
        "foreign": (b'{"kind": 1, "timestamp": "t"}\n', 1, '"code": "audit.store_corrupt"', None),
        "mixed": (
            f"{good}\nnot json\n\xe9\n".encode("latin-1")
            + b'{"kind":"x","run_id":["a"],"timestamp":"t"}\n',
            0,
            "(line 2, 3, 4) [audit.line_unreadable]",
            ["io.stage"],
        ),
        # a crash cut the first write short: nothing recorded yet, not damage
        "torn": (b'{"kind": "io.st', 0, "(line 1) [audit.line_unreadable]", []),
    }
    for name, (data, code, said, kinds) in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(data)
        proc = run("audit", "list", "--store", f"jsonl:{path}", "--format", "json")
        assert proc.returncode == code, (name, proc.stderr)
        # an error is the JSON document on stdout; a warning goes to stderr
        assert said in proc.stdout + proc.stderr, (name, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr, name
        if kinds is not None:
            assert [r["kind"] for r in json.loads(proc.stdout)] == kinds, name
        assert path.read_bytes() == data  # reading never rewrites the store
    folder = tmp_path / "folder.jsonl"
    folder.mkdir()
    proc = run("audit", "list", "--store", f"jsonl:{folder}")
    assert proc.returncode == 1 and "[audit.bad_filter]" in proc.stderr
    assert "Traceback" not in proc.stderr
