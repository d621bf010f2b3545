"""The fake model server speaks both wire formats over real HTTP (checked
with plain httpx, independent of our providers)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.fakes import FakeLLMServer, ToolCall, Turn


def _events(body: str) -> list[tuple[str, dict[str, object]]]:
    out = []
    for block in body.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((lines.get("event", ""), json.loads(lines["data"])))
    return out


def test_anthropic_stream_has_full_event_sequence() -> None:
    turn = Turn(text="Hello", thinking="hm", tool_calls=[ToolCall("Write", {"a": 1})])
    with FakeLLMServer([turn]) as server:
        body = {"model": "m", "stream": True, "messages": []}
        response = httpx.post(server.base_url + "/v1/messages", json=body)
    names = [name for name, _ in _events(response.text)]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    deltas = [d["delta"]["type"] for n, d in _events(response.text) if n == "content_block_delta"]  # type: ignore[index]
    assert {"thinking_delta", "signature_delta", "text_delta", "input_json_delta"} <= set(deltas)
    assert server.requests == [body]


def test_openai_stream_ends_with_usage_and_done() -> None:
    with FakeLLMServer([Turn(text="Hi", usage={"cache_read_tokens": 5})]) as server:
        response = httpx.post(
            server.base_url + "/v1/chat/completions", json={"model": "m", "stream": True}
        )
    chunks = [b.removeprefix("data: ") for b in response.text.strip().split("\n\n")]
    assert chunks[-1] == "[DONE]"
    usage = json.loads(chunks[-2])["usage"]
    assert usage["prompt_tokens_details"]["cached_tokens"] == 5


def test_error_turn_and_exhausted_script() -> None:
    with FakeLLMServer([Turn(error=429)]) as server:
        first = httpx.post(server.base_url + "/v1/messages", json={"model": "m"})
        second = httpx.post(server.base_url + "/v1/messages", json={"model": "m"})
    assert first.status_code == 429 and first.headers["retry-after"] == "0"
    assert first.json()["error"]["type"] == "rate_limit_error"
    assert second.json()["content"] == [{"type": "text", "text": "done"}]


def test_cut_stream_is_an_incomplete_body() -> None:
    with FakeLLMServer([Turn(text="abcdef", cut_after=3)]) as server:
        url = server.base_url + "/v1/messages"
        try:
            httpx.post(url, json={"model": "m", "stream": True})
        except httpx.RemoteProtocolError:
            return
    raise AssertionError("a cut stream must not end as a complete response")


def test_deltas_count_is_exact() -> None:
    with FakeLLMServer([Turn(deltas=1000)]) as server:
        url = server.base_url + "/v1/chat/completions"
        response = httpx.post(url, json={"model": "m", "stream": True})
    contents = [c for c in response.text.split("\n\n") if '"content": "x"' in c]
    assert len(contents) == 1000


def test_api_key_is_checked() -> None:
    with FakeLLMServer([], api_key="right") as server:
        url = server.base_url + "/v1/messages"
        assert httpx.post(url, json={}, headers={"x-api-key": "wrong"}).status_code == 401
        assert httpx.post(url, json={}, headers={"x-api-key": "right"}).status_code == 200


def test_runs_as_a_process(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "from file", "tool_calls": [{"name": "Read"}]}]))
    port_file = tmp_path / "port"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fakes",
            "--script",
            str(script),
            "--port-file",
            str(port_file),
        ],
        cwd=Path(__file__).parents[2],
    )
    try:
        deadline = time.monotonic() + 60  # generous: only a broken server waits it out
        while not (port_file.exists() and port_file.read_text().strip()):
            assert proc.poll() is None and time.monotonic() < deadline, "server did not start"
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port_file.read_text()}/v1/messages"
        content = httpx.post(url, json={"model": "m"}).json()["content"]
        assert content[0] == {"type": "text", "text": "from file"}
        assert content[1]["name"] == "Read" and content[1]["id"].startswith("toolu_")
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


def test_paths_the_fake_does_not_serve_are_404_and_logged() -> None:
    with FakeLLMServer([Turn(text="kept")]) as server:
        probe = httpx.get(server.base_url + "/api/hello")
        count = httpx.post(server.base_url + "/v1/messages/count_tokens", json={})
        remaining = server.remaining
    assert probe.status_code == 404 and count.status_code == 404
    assert server.unknown == ["GET /api/hello", "POST /v1/messages/count_tokens"]
    assert remaining == 1  # neither consumed a scripted turn
