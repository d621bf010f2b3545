"""`flightdeck agent --json-stream` against the real llama.cpp server: the
stream, stop, the context limit, a killed server and a forced tool call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agent._process import AgentProcess
from tests.local_model.conftest import LocalServer, local_env

# The model is small and the machine may be busy: generous, never a hang.
SLOW = 120.0


def local(server: LocalServer, ws: Path, *extra: str, **env: str) -> AgentProcess:
    args = ("--provider", "local", "--base-url", server.v1, *extra)
    return AgentProcess(*args, env=local_env(**env), workspace=ws)


def msg(msg_id: str, text: str) -> dict[str, Any]:
    return {"type": "message", "msg_id": msg_id, "input": text}


def kinds(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def text_of(events: list[dict[str, Any]]) -> str:
    return "".join(e["text"] for e in events if e["type"] == "text_delta")


def test_a_prompt_is_answered_with_streamed_tokens_and_usage(llama: LocalServer, ws: Path) -> None:
    with local(llama, ws, "--max-tokens", "24") as agent:
        assert agent.next(SLOW)["type"] == "ready"
        agent.send(msg("m1", "Write one sentence about the sea."))
        events = agent.until("stream_end", SLOW)
        assert kinds(events)[0] == "stream_start" and "error" not in kinds(events)
        deltas = [e for e in events if e["type"] == "text_delta"]
        assert len(deltas) >= 2 and text_of(events).strip()  # streamed, not one block
        usage = events[-1]["usage"]
        assert 0 < usage["output_tokens"] <= 24
        # llama.cpp counts the prompt it reused from its cache as cached tokens
        assert usage["input_tokens"] + usage["cache_read_tokens"] > 0
        agent.close_stdin()
        assert agent.wait(SLOW) == 0


def test_the_local_preset_finds_the_server_and_its_model(llama: LocalServer, ws: Path) -> None:
    """`--provider local` without a URL asks each listed address in turn (the
    first has no server) and uses the first model the server lists."""
    servers = f"http://127.0.0.1:1/v1 {llama.v1}"
    with AgentProcess(
        "--provider", "local", "--max-tokens", "8",
        env=local_env(FLIGHTDECK_LOCAL_SERVERS=servers), workspace=ws,
    ) as agent:  # fmt: skip
        assert agent.next(SLOW)["type"] == "ready"
        agent.send(msg("m1", "Say hello."))
        events = agent.until("stream_end", SLOW)
        assert "error" not in kinds(events) and events[-1]["usage"]["output_tokens"] > 0


def test_stop_mid_stream_ends_the_turn_and_the_session_goes_on(
    llama: LocalServer, ws: Path
) -> None:
    with local(llama, ws, "--max-tokens", "48") as agent:
        agent.next(SLOW)
        agent.send(msg("m1", "Tell a long story about a lighthouse."))
        agent.until("text_delta", SLOW)
        agent.send({"type": "stop"})
        events = agent.until("stream_end", SLOW)
        assert events[-1]["msg_id"] == "m1" and "error" not in kinds(events)
        agent.send(msg("m2", "Say hello."))
        again = agent.until("stream_end", SLOW)
        assert again[0] == {"type": "stream_start", "msg_id": "m2"}
        assert text_of(again).strip() and "error" not in kinds(again)


def test_a_prompt_over_the_context_window_is_a_clear_error_and_the_session_goes_on(
    llama: LocalServer, ws: Path
) -> None:
    with local(llama, ws, "--max-tokens", "16") as agent:
        agent.next(SLOW)
        agent.send(msg("m1", "word " * 3000))  # ~3,000 tokens into a 2,048-token context
        events = agent.until("stream_end", SLOW)
        errors = [e["error"] for e in events if e["type"] == "error"]
        assert len(errors) == 1 and "info" not in kinds(events)  # not retried
        assert errors[0]["code"] == "provider_error" and errors[0]["retryable"] is False
        assert "context_too_long" in errors[0]["message"]
        assert "exceeds the available context size" in errors[0]["message"]
        agent.send(msg("m2", "Say hello."))
        again = agent.until("stream_end", SLOW)
        assert "error" not in kinds(again) and text_of(again).strip()


def test_a_server_killed_mid_stream_is_a_retryable_error_not_a_hang(
    own_llama: LocalServer, ws: Path
) -> None:
    (ws / "flightdeck.toml").write_text("[agent]\nretry_delay = 0.01\nmax_retries = 1\n")
    with local(own_llama, ws, "--max-tokens", "400") as agent:
        agent.next(SLOW)
        agent.send(msg("m1", "Tell a long story about a lighthouse."))
        agent.until("text_delta", SLOW)
        own_llama.kill()
        events = agent.until("stream_end", SLOW)
        infos = [e["message"] for e in events if e["type"] == "info"]
        errors = [e["error"] for e in events if e["type"] == "error"]
        assert infos == ["Stream interrupted, retrying... (1/1)"], infos
        assert len(errors) == 1 and errors[0]["retryable"] is True, errors
        assert "connection_error" in errors[0]["message"]  # the retry found no server
        agent.close_stdin()
        assert agent.wait(SLOW) == 0


def test_a_forced_tool_call_reaches_approval_and_its_result_goes_back_to_the_model(
    llama: LocalServer, ws: Path
) -> None:
    """`tool_choice = "required"` makes llama.cpp constrain the answer to a
    tool call (a grammar from the tools' schemas); the call is asked for,
    approved, run, and the model is called again with its result."""
    (ws / "flightdeck.toml").write_text(
        "[agent]\nretry_delay = 0.01\nmax_turns = 2\n"
        '[providers.local]\ntool_choice = "required"\nparallel_tool_calls = false\n'
    )
    # Without the agent's system prompt this model, decoding greedily, calls
    # Read; with it, it writes prose around the call (docs/llm.md).
    with local(llama, ws, "--max-tokens", "96", "--system-prompt", "") as agent:
        agent.next(SLOW)
        agent.send(msg("m1", "Read the file notes.txt"))
        events = agent.until("tool_request", SLOW)
        first = events[-1]
        assert first["tool"]["name"] == "Read", first
        assert first["tool"]["args"]["file_path"] == "notes.txt"
        rest = _answer_until_end(agent, first)
        results = [e for e in rest if e["type"] == "tool_result"]
        assert results and results[0]["call_id"] == first["call_id"]
        assert results[0]["status"] == "success", results[0]
        after = rest[rest.index(results[0]) + 1 :]
        # the second model call, made with the result, streamed its own answer
        assert {"text_delta", "tool_request", "error"} & set(kinds(after)), kinds(after)
        assert "error" not in kinds(after), after


READ_ONLY = {"Read", "Glob", "Grep"}


def _answer_until_end(agent: AgentProcess, request: dict[str, Any]) -> list[dict[str, Any]]:
    """Approve read-only tools, deny the rest (the model chose them: a denial
    is a result the model gets back too), until the turn ends."""
    seen: list[dict[str, Any]] = []
    while True:
        if request["tool"]["name"] in READ_ONLY:
            agent.send({"type": "tool_approve", "call_id": request["call_id"], "scope": "once"})
        else:
            agent.send({"type": "tool_deny", "call_id": request["call_id"]})
        while (event := agent.next(SLOW))["type"] not in ("tool_request", "stream_end"):
            seen.append(event)
        seen.append(event)
        if event["type"] == "stream_end":
            return seen
        request = event
