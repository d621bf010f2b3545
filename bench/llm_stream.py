"""Benchmark: streaming throughput of flightdeck.llm vs the raw SDK stream.

Starts FakeLLMServer, which sends one turn of 50,000 text deltas as fast as
it can, and consumes it, in the same process and run, four ways:

- the Anthropic SDK's raw event stream (`messages.create(stream=True)`), and
  flightdeck's `anthropic` provider on top of it;
- the OpenAI SDK's raw chunk stream, and flightdeck's `openai` provider.

Prints deltas per second (median of 5 round-robin runs) and provider/raw ratios: the cost
of flightdeck's event mapping on top of the SDK's own parsing.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakes import FakeLLMServer, Turn  # noqa: E402

from flightdeck.llm import Message, Request, TextBlock, TextDelta, create_provider  # noqa: E402

DELTAS = 50_000
RUNS = 5
REQUEST = Request(model="bench", messages=[Message("user", [TextBlock("go")])])
MESSAGES = [{"role": "user", "content": "go"}]


async def raw_anthropic(url: str) -> int:
    import anthropic

    client = anthropic.AsyncAnthropic(api_key="k", base_url=url, max_retries=0)
    stream = await client.messages.create(
        model="bench",
        max_tokens=10,
        messages=MESSAGES,
        stream=True,  # type: ignore[arg-type]
    )
    count = sum([1 async for e in stream if e.type == "content_block_delta"])
    await client.close()
    return count


async def raw_openai(url: str) -> int:
    import openai

    client = openai.AsyncOpenAI(api_key="k", base_url=url + "/v1", max_retries=0)
    stream = await client.chat.completions.create(
        model="bench",
        messages=MESSAGES,
        stream=True,  # type: ignore[arg-type]
    )
    count = sum([1 async for c in stream if c.choices and c.choices[0].delta.content])
    await client.close()
    return count


def provider_run(name: str) -> Callable[[str], Awaitable[int]]:
    async def run(url: str) -> int:
        base = url + "/v1" if name == "openai" else url
        provider = create_provider(name, api_key="k", base_url=base)
        count = sum([1 async for e in provider.stream(REQUEST) if isinstance(e, TextDelta)])
        await provider.aclose()  # type: ignore[attr-defined]
        return count

    return run


def deltas_per_second(consume: Callable[[str], Awaitable[int]]) -> float:
    with FakeLLMServer([Turn(deltas=DELTAS)]) as server:
        start = time.perf_counter()
        count = asyncio.run(consume(server.base_url))
        elapsed = time.perf_counter() - start
    assert count == DELTAS, count
    return DELTAS / elapsed


def main() -> None:
    ways = {
        "anthropic SDK raw": raw_anthropic,
        "anthropic provider": provider_run("anthropic"),
        "openai SDK raw": raw_openai,
        "openai provider": provider_run("openai"),
    }
    rates: dict[str, list[float]] = {label: [] for label in ways}
    for _ in range(RUNS):  # round-robin, so background load hits every way alike
        for label, consume in ways.items():
            rates[label].append(deltas_per_second(consume))
    results = {label: statistics.median(values) for label, values in rates.items()}
    for label, rate in results.items():
        print(f"{label:20s} {rate:10,.0f} deltas/s")
    for sdk in ("anthropic", "openai"):
        ratio = results[f"{sdk} provider"] / results[f"{sdk} SDK raw"]
        print(f"{sdk}: provider/raw = {ratio:.0%}")


if __name__ == "__main__":
    main()
