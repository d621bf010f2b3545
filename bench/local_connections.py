"""How often llama.cpp's server drops a kept-alive connection under the next
request, against a connection per call (what flightdeck uses for a loopback
server, `flightdeck.llm._openai.fresh_connections`).

Two `openai` SDK clients take turns on one server (tests/local_model's), each
streaming 64 tokens; per mode, ROUNDS rounds of both. A failed call is one
the server ended before answering ("Server disconnected without sending a
response"). Counts, not timings: the figure docs/llm.md quotes.

    .venv/bin/python bench/local_connections.py [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from _llama import llama_server  # noqa: E402


async def _call(client: Any) -> bool:
    try:
        stream = await client.chat.completions.create(
            model="bench",
            messages=[{"role": "user", "content": "Write a short paragraph about lighthouses."}],
            max_tokens=64,
            stream=True,
        )
        async for _ in stream:
            pass
    except Exception:
        return False
    return True


async def _mode(base_url: str, rounds: int, fresh: bool) -> tuple[int, int]:
    import openai

    from flightdeck.llm._openai import fresh_connections

    def client() -> Any:
        extra = {"http_client": fresh_connections()} if fresh else {}
        return openai.AsyncOpenAI(api_key="x", base_url=base_url, max_retries=0, **extra)

    a, b = client(), client()
    failed = calls = 0
    for i in range(rounds):
        for c in (a, b) if i % 2 == 0 else (b, a):
            calls += 1
            failed += not await _call(c)
    await a.close()
    await b.close()
    return failed, calls


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    with llama_server() as server:
        if server is None:
            return
        kept = asyncio.run(_mode(server.v1, args.rounds, fresh=False))
        fresh = asyncio.run(_mode(server.v1, args.rounds, fresh=True))
    print(f"kept-alive connections: {kept[0]} of {kept[1]} calls dropped")
    print(f"a connection per call:  {fresh[0]} of {fresh[1]} calls dropped")


if __name__ == "__main__":
    main()
