"""`flightdeck call` as a process, against examples/drivers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXE = str(Path(sys.executable).parent / "flightdeck")
WS = str(ROOT / "examples" / "drivers")


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EXE, "call", *args, "--workspace", WS],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def test_call_prints_the_result() -> None:
    proc = run("text.stats", "--driver", "textstats-local", "--input", '{"text": "a b a"}')
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["words"] == 3


def test_call_json_format_and_verbose_explanation() -> None:
    proc = run("text.stats", "--input", '{"text": "x"}', "--format", "json", "--verbose")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["driver"] == "textstats-local" and out["output"]["chars"] == 1
    assert "text.stats: chose textstats-local" in proc.stderr
    assert "rejected openai-sdk" in proc.stderr  # refused: no OPENAI_API_KEY
    assert "import flightdeck_local_textstats_local:" in proc.stderr


def test_streaming_prints_chunks_as_json_lines() -> None:
    proc = run("text.word-stream", "--input", '{"text": "one two three"}', "--format", "json")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [x.get("chunk") for x in lines[:-1]] == ["one ", "two ", "three"]
    assert lines[-1] == {
        "done": True,
        "tool": "text.word-stream",
        "driver": "wordstream-sdk",
        "chunks": 3,
    }


def test_streaming_text_output() -> None:
    proc = run("text.word-stream", "--input", '{"text": "a b", "upper": true}')
    assert proc.returncode == 0 and proc.stdout == "A B\n"


def test_call_errors_exit_1_with_code() -> None:
    proc = run(
        "text.stats", "--driver", "textstats-local", "--input", '{"nope": 1}', "--format", "json"
    )
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["error"]["code"] == "input_invalid"
    text = run("text.stats", "--driver", "missing-driver")
    assert text.returncode == 1 and "no_driver" in text.stderr


def test_refused_driver_reports_the_refusal() -> None:
    proc = run(
        "chat.completion",
        "--driver",
        "openai-sdk",
        "--format",
        "json",
        "--input",
        '{"messages": [{"role": "user", "content": "x"}]}',
    )
    assert proc.returncode == 1
    err = json.loads(proc.stdout)["error"]
    assert err["code"] == "function_ref_unresolvable" and err["line"]


def test_bad_json_input_is_a_usage_error() -> None:
    proc = run("text.stats", "--input", "{not json")
    assert proc.returncode == 2 and "not JSON" in proc.stderr


def drivers_cmd(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EXE, "drivers", *args, "--workspace", WS], capture_output=True, text=True, timeout=60
    )


def test_drivers_list_reads_manifests_only() -> None:
    proc = drivers_cmd("list", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    rows = {r["id"]: r for r in json.loads(proc.stdout)}
    assert set(rows) == {"openai-sdk", "openai-stream-sdk", "textstats-local", "wordstream-sdk"}
    assert rows["wordstream-sdk"]["runnable"] is True


def test_drivers_show_registers_or_explains_the_refusal() -> None:
    ok = drivers_cmd("show", "wordstream-sdk", "--format", "json")
    assert ok.returncode == 0, ok.stderr
    info = json.loads(ok.stdout)
    assert info["tools"]["text.word-stream"]["streaming"] is True
    assert info["import"]["module"] == "flightdeck_local_wordstream_sdk"
    refused = drivers_cmd("show", "openai-sdk")
    assert refused.returncode == 1 and "function_ref_unresolvable" in refused.stderr


def test_streaming_chunks_are_printed_as_they_arrive() -> None:
    """The first chunk is readable while the generator is still sleeping before the rest."""
    proc = subprocess.Popen(
        [
            EXE,
            "call",
            "text.word-stream",
            "--workspace",
            WS,
            "--format",
            "json",
            "--input",
            '{"text": "w1 w2 w3 w4", "delay_ms": 400}',
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())
        assert first == {"chunk": "w1 "}
        assert proc.poll() is None  # three more words, 400 ms apart, are still to come
        rest = proc.stdout.read()
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == 0
    assert rest.count('"chunk"') == 3
