"""Outputs over one chunk kept in the run journal in 1 MiB rows, on both
backends (the `backend` fixture): a launch keeps a 17 MiB output (over the
16 MiB the store once held) and `runs outputs --out-dir` reassembles it
byte for byte; a chunk removed or changed is named by its code and leaves
nothing in the folder; an output over `[store] max_output_bytes` is refused
before it is published."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from flightdeck.launch import Journal, LaunchError
from flightdeck.launch.engine._output_store import CHUNK_BYTES
from flightdeck.launch.engine._report import write_outputs
from tests.launch.conftest import Harness, contract, write_plan
from tests.launch.test_cli_resume import FD

MiB = 1024 * 1024


def _text(size: int) -> str:
    """`size` bytes of UTF-8 that differ chunk to chunk, with two-byte
    characters straddling chunk borders."""
    unit = "chunk é " + "x" * 90 + "\n"  # 100 bytes
    text = "".join(f"{n:08d}{unit}"[: len(unit)] for n in range(size // len(unit.encode())))
    return text + "é" * ((size - len(text.encode())) // 2)


def _plan(tmp_path: Path, target: str) -> Path:
    publish = {"target": "file", "path": "big.txt"} if target == "file" else {"target": "none"}
    (tmp_path / "plan").mkdir(exist_ok=True)
    return write_plan(
        tmp_path / "plan",
        actions={"aileron:m.big": contract()},
        outputs=[
            {"name": "big.txt", "mimeType": "text/plain", "encoding": "utf-8", "publish": publish}
        ],
        steps=[
            {
                "id": "make",
                "kind": "action-call",
                "actionRef": "aileron:m.big",
                "outputs": ["text"],
                "materializesOutput": "big.txt",
            }
        ],
    )


def _harness(tmp_path: Path, backend: str, text: str) -> Harness:
    harness = Harness(tmp_path)
    if backend == "postgres":
        harness.journal = Journal()  # the configured PostgreSQL store
    harness.handlers["m.big"] = lambda call: {"text": text}
    return harness


def _sql(journal: Journal, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """A statement on the journal's own tables, as someone editing the store
    outside flightdeck would send it."""
    if journal.url is None:
        import sqlite3

        with sqlite3.connect(journal.path) as conn:
            return conn.execute(sql, args).fetchall()
    import psycopg

    with psycopg.connect(journal.url, autocommit=True) as conn:
        cursor = conn.execute(sql.replace("?", "%s"), args)
        return cursor.fetchall() if cursor.description else []


def test_a_large_output_is_kept_in_chunks_and_written_back_whole(
    backend: str, tmp_path: Path
) -> None:
    """17 MiB: kept in the store on both backends (`publish: none` on
    SQLite, a published file on PostgreSQL, which keeps those too), in 17
    chunk rows, and reassembled from them on another home's command."""
    text = _text(17 * MiB + 321)
    data = text.encode()
    target = "file" if backend == "postgres" else "none"
    harness = _harness(tmp_path, backend, text)
    result = harness.run(_plan(tmp_path, target))
    assert result.status == "completed", result.error
    rows = _sql(harness.journal, "SELECT content, chunks, bytes FROM outputs")
    assert rows == [(None, 18, len(data))]
    sizes = _sql(harness.journal, "SELECT seq, length(data) FROM output_chunks ORDER BY seq")
    assert sizes == [(n, CHUNK_BYTES) for n in range(17)] + [(17, len(data) - 17 * CHUNK_BYTES)]
    if target == "file":
        (tmp_path / "out" / "big.txt").unlink()  # from the store, not the published file
    written = write_outputs(result.run_id, harness.journal, tmp_path / "fetched")
    assert (tmp_path / "fetched" / "big.txt").read_bytes() == data
    assert written[0]["sha256"] == hashlib.sha256(data).hexdigest()
    assert "content" not in written[0] and "chunks" not in written[0]
    # A resume concluding again (or a replaced output) leaves one set of chunks.
    harness.journal.output(result.run_id, {**written[0], "bytes": 2, "sha256": "s"}, "ab")
    assert _sql(harness.journal, "SELECT count(*) FROM output_chunks") == [(0,)]


def _stored_run(journal: Journal) -> None:
    journal.create_run(
        "r1", plan_name="p", plan_path="/p/SKILL.md", content_hash=None,
        launch_time="2026-01-01T00:00:00Z", inputs={}, options={"out_dir": "/elsewhere"},
    )  # fmt: skip
    for name, content in (("small.txt", "small"), ("big.txt", _text(3 * MiB + 5))):
        data = content.encode()
        record = {"name": name, "path": None, "mime_type": "text/plain"}
        record |= {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        journal.output("r1", record, content)


@pytest.mark.parametrize(
    ("damage", "code"),
    [
        ("DELETE FROM output_chunks WHERE seq = 2", "output.chunk_missing"),
        ("UPDATE output_chunks SET data = data || data WHERE seq = 1", "output.chunk_corrupt"),
        ("UPDATE output_chunks SET sha256 = 'x' WHERE seq = 3", "output.chunk_corrupt"),
        ("UPDATE outputs SET sha256 = 'x' WHERE name = 'big.txt'", "output.changed"),
    ],
)
def test_a_damaged_chunk_is_named_and_nothing_is_written(
    backend: str, tmp_path: Path, damage: str, code: str
) -> None:
    journal = Journal()
    _stored_run(journal)
    _sql(journal, damage)
    out = tmp_path / "fetched"
    with pytest.raises(LaunchError) as caught:
        write_outputs("r1", journal, out)
    assert caught.value.code == code
    assert "big.txt" in caught.value.message
    # The small output was staged before the big one failed: neither is there,
    # whole or in part, nor a temporary file.
    assert [p for p in out.rglob("*") if p.is_file()] == []


def test_runs_outputs_names_a_missing_chunk(backend: str, tmp_path: Path, fd_home: Path) -> None:
    journal = Journal()
    _stored_run(journal)
    _sql(journal, "DELETE FROM output_chunks WHERE seq = 0")
    out = tmp_path / "fetched"
    shown = subprocess.run(
        [FD, "runs", "outputs", "r1", "--out-dir", str(out), "--format", "json"],
        capture_output=True, text=True, timeout=60, env={**os.environ},
    )  # fmt: skip
    assert shown.returncode == 1 and "Traceback" not in shown.stderr, shown.stderr
    error = json.loads(shown.stdout)["error"]
    assert error["code"] == "output.chunk_missing" and "chunk 0 of 4" in error["message"]
    assert [p for p in out.rglob("*") if p.is_file()] == []
    # Kept again (a resume concluding anew): the command writes both.
    record = {"name": "big.txt", "path": None, "mime_type": "text/plain", "bytes": 4}
    journal.output("r1", {**record, "sha256": hashlib.sha256(b"fine").hexdigest()}, "fine")
    fixed = subprocess.run(
        [FD, "runs", "outputs", "r1", "--out-dir", str(out), "--format", "json"],
        capture_output=True, text=True, timeout=60, env={**os.environ},
    )  # fmt: skip
    assert fixed.returncode == 0, fixed.stderr + fixed.stdout
    assert (out / "big.txt").read_text() == "fine" and (out / "small.txt").read_text() == "small"


def test_an_output_over_the_store_limit_is_refused_before_it_is_published(
    backend: str, tmp_path: Path, fd_home: Path
) -> None:
    (fd_home / "config").mkdir(parents=True, exist_ok=True)
    config = fd_home / "config" / "config.toml"
    config.write_text("[store]\nmax_output_bytes = 2000000\n")
    target = "file" if backend == "postgres" else "none"
    harness = _harness(tmp_path, backend, _text(2 * MiB))
    result = harness.run(_plan(tmp_path, target))
    assert result.status == "failed" and result.error is not None
    assert (result.error.code, result.error.step) == ("output.too_large", "make")
    assert "2000000" in result.error.message and "max_output_bytes" in str(result.error.hint)
    assert not (tmp_path / "out" / "big.txt").exists()
    assert _sql(harness.journal, "SELECT count(*) FROM output_chunks") == [(0,)]
    # Under the limit it is kept; a limit that is not a number is the config's error.
    config.write_text("[store]\nmax_output_bytes = 3000000\n")
    assert harness.run(_plan(tmp_path, target)).status == "completed"
    config.write_text('[store]\nmax_output_bytes = "big"\n')
    failed = harness.run(_plan(tmp_path, target))
    assert failed.error is not None and failed.error.code == "config.invalid"


def test_a_file_output_on_sqlite_is_not_held_to_the_store_limit(
    tmp_path: Path, fd_home: Path
) -> None:
    """SQLite keeps no copy of a published file, so its size is not the
    store's business."""
    (fd_home / "config").mkdir(parents=True, exist_ok=True)
    (fd_home / "config" / "config.toml").write_text("[store]\nmax_output_bytes = 10\n")
    harness = _harness(tmp_path, "sqlite", _text(2 * MiB))
    assert harness.run(_plan(tmp_path, "file")).status == "completed"
    assert (tmp_path / "out" / "big.txt").stat().st_size == len(_text(2 * MiB).encode())
