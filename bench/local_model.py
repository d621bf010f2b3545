"""Benchmark: flightdeck's `local` provider against the raw `openai` SDK,
both streaming from the same real llama.cpp server (tests/local_model).

One server (llama.cpp's own, from the xllamacpp wheel, with Gemma 3 270M,
decoding greedily so both sides get the same tokens) answers the same prompt
to both sides, pair by pair, alternating which goes first. Per call: the time
to the first text, and tokens per second from the first text to the end (the
server's own completion token count). Each side builds its client once,
outside the timing, and makes one warm-up call. Both open a connection per
call, as flightdeck does for a loopback server (llama.cpp's server sometimes
drops a kept-alive connection: docs/llm.md), so the raw loop cannot fail
where flightdeck would not.

    .venv/bin/python bench/local_model.py [--pairs N]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _llama import llama_server  # noqa: E402
from _paired import Paired, machine, ms, save  # noqa: E402

from flightdeck.llm import (  # noqa: E402
    Message,
    Request,
    StreamDone,
    TextBlock,
    TextDelta,
    create_provider,
)

PROMPT = "Write a short paragraph about lighthouses."
MAX_TOKENS = 64


async def raw_call(client: Any) -> tuple[float, float]:
    start = time.perf_counter()
    first = 0.0
    tokens = 0
    stream = await client.chat.completions.create(
        model="bench",
        messages=[{"role": "user", "content": PROMPT}],
        max_tokens=MAX_TOKENS,
        stream=True,
        stream_options={"include_usage": True},
    )
    async for chunk in stream:
        if not first and chunk.choices and chunk.choices[0].delta.content:
            first = time.perf_counter()
        if chunk.usage is not None:
            tokens = chunk.usage.completion_tokens
    end = time.perf_counter()
    return first - start, tokens / (end - first)


async def flightdeck_call(provider: Any) -> tuple[float, float]:
    request = Request(
        model="", messages=[Message("user", [TextBlock(PROMPT)])], max_tokens=MAX_TOKENS
    )
    start = time.perf_counter()
    first = 0.0
    tokens = 0
    async for event in provider.stream(request):
        if not first and isinstance(event, TextDelta):
            first = time.perf_counter()
        if isinstance(event, StreamDone):
            tokens = event.response.usage.output_tokens
    end = time.perf_counter()
    return first - start, tokens / (end - first)


async def run(base_url: str, pairs: int) -> tuple[Paired, Paired]:
    import openai

    from flightdeck.llm._openai import fresh_connections

    client = openai.AsyncOpenAI(
        api_key="not-needed", base_url=base_url, max_retries=0, http_client=fresh_connections()
    )
    provider = create_provider("local", base_url=base_url, model="bench", env={})
    await raw_call(client)
    await flightdeck_call(provider)
    first_raw: list[float] = []
    first_fd: list[float] = []
    rate_raw: list[float] = []
    rate_fd: list[float] = []
    for i in range(pairs):
        order = [("raw", client), ("fd", provider)]
        for side, target in order if i % 2 == 0 else order[::-1]:
            if side == "raw":
                ttft, rate = await raw_call(target)
                first_raw.append(ttft)
                rate_raw.append(1 / rate)  # seconds per token: B/A is the overhead
            else:
                ttft, rate = await flightdeck_call(target)
                first_fd.append(ttft)
                rate_fd.append(1 / rate)
    await client.close()
    await provider.aclose()  # type: ignore[attr-defined]
    return Paired(first_raw, first_fd), Paired(rate_raw, rate_fd)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=9)
    args = parser.parse_args()
    with llama_server() as server:
        if server is None:
            return
        first, per_token = asyncio.run(run(server.v1, args.pairs))
    lines = [
        "## Local model server (`bench/local_model.py`)",
        "",
        f"llama.cpp's server (xllamacpp) with Gemma 3 270M on {machine()}; the same prompt,",
        f"{MAX_TOKENS} tokens greedy, {args.pairs} pairs alternating; raw = the `openai` SDK's",
        "streaming loop, flightdeck = the `local` provider on the same SDK.",
        "",
        "| measure | raw SDK | flightdeck | flightdeck/raw |",
        "|---|---|---|---|",
        f"| time to first text | {ms(first.a_median)} | {ms(first.b_median)} | {first.spread()} |",
        f"| time per token | {ms(per_token.a_median)} | {ms(per_token.b_median)}"
        f" | {per_token.spread()} |",
        "",
        f"Tokens per second: raw {1 / per_token.a_median:.1f}, flightdeck"
        f" {1 / per_token.b_median:.1f}.",
    ]
    save("local_model", "\n".join(lines))


if __name__ == "__main__":
    main()
