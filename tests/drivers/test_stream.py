"""Streaming through async generators (AIP-33 § Streaming, § Security: generators leak)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from flightdeck.drivers import DriverCallError, SdkDriver, call_tool, load_driver, stream_tool
from tests.drivers._ws import add_driver, sdk_driver, workspace

STREAM_MODULE = """
import asyncio

OPEN = set()
CLOSED = []


async def chunks(value):
    marker = object()
    OPEN.add(id(marker))
    try:
        for i in range(value.get("times", 3)):
            await asyncio.sleep(0.001 if value["text"] != "slow" else 5)
            yield {"delta": {"content": f"c{i}"}} if i != 1 or value["text"] != "gap" else {"x": 1}
    finally:
        OPEN.discard(id(marker))
        CLOSED.append(id(marker))


def returns_stream(value):
    return chunks(value)


async def broken(value):
    yield {"delta": {"content": "ok"}}
    raise RuntimeError("stream broke")
"""


def make(tmp_path: Path, ref: str = "chunks", extract: str = "$.delta.content") -> SdkDriver:
    ws = workspace(tmp_path)
    sdk = {"result_extract": extract, "streaming": {"mode": "async-iterator"}}
    return load_driver(add_driver(ws, sdk_driver(function_ref=ref, sdk=sdk), STREAM_MODULE))


def collect(driver: SdkDriver, value: Any, limit: int | None = None) -> list[Any]:
    async def go() -> list[Any]:
        out: list[Any] = []
        stream = stream_tool("text.echo", value, driver=driver)
        async for chunk in stream:
            out.append(chunk)
            if limit is not None and len(out) >= limit:
                break
        await stream.aclose()  # type: ignore[attr-defined]
        return out

    return asyncio.run(go())


def module(driver: SdkDriver) -> Any:
    assert driver.import_report is not None
    return driver.import_report.module


@pytest.mark.parametrize("ref", ["chunks", "returns_stream"])
def test_aip33_chunks_yield_as_they_come_with_extract_per_chunk(tmp_path: Path, ref: str) -> None:
    driver = make(tmp_path, ref)
    assert collect(driver, {"text": "t"}) == ["c0", "c1", "c2"]
    assert set() == module(driver).OPEN


def test_chunks_the_path_does_not_match_are_skipped(tmp_path: Path) -> None:
    assert collect(make(tmp_path), {"text": "gap"}) == ["c0", "c2"]


def test_a_stream_where_nothing_matches_is_extract_no_match(tmp_path: Path) -> None:
    with pytest.raises(DriverCallError) as info:
        collect(make(tmp_path, extract="$.nope"), {"text": "t"})
    assert info.value.code == "extract_no_match"


def test_aip33_early_stop_closes_the_generator(tmp_path: Path) -> None:
    driver = make(tmp_path)
    assert collect(driver, {"text": "t", "times": 50}, limit=2) == ["c0", "c1"]
    assert set() == module(driver).OPEN
    assert len(module(driver).CLOSED) == 1


def test_aip33_cancellation_closes_the_generator(tmp_path: Path) -> None:
    driver = make(tmp_path)

    async def go() -> None:
        async def consume() -> None:
            async for _ in stream_tool("text.echo", {"text": "slow"}, driver=driver):
                pass

        task = asyncio.create_task(consume())
        deadline = asyncio.get_running_loop().time() + 30  # generous on a loaded machine
        while not module(driver).OPEN and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.001)
        assert module(driver).OPEN  # the generator is running
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    assert set() == module(driver).OPEN
    assert len(module(driver).CLOSED) == 1


def test_error_inside_the_stream_is_driver_call_failed(tmp_path: Path) -> None:
    with pytest.raises(DriverCallError) as info:
        collect(make(tmp_path, "broken"), {"text": "t"})
    assert info.value.code == "driver_call_failed"
    assert "stream broke" in info.value.message


def test_call_tool_on_a_streaming_binding_joins_text_chunks(tmp_path: Path) -> None:
    driver = make(tmp_path)
    result = asyncio.run(call_tool("text.echo", {"text": "t"}, driver=driver))
    assert result.output == "c0c1c2"


def test_example_wordstream_driver_streams_words(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2] / "examples" / "drivers"
    driver = load_driver(root / ".drivers" / "wordstream-sdk")
    chunks: list[Any] = []

    async def go() -> None:
        agen = stream_tool("text.word-stream", {"text": "a b c d", "upper": True}, driver=driver)
        async for chunk in agen:
            chunks.append(chunk)
            if len(chunks) == 2:
                break
        await agen.aclose()  # type: ignore[attr-defined]

    asyncio.run(go())
    assert chunks == ["A ", "B "]
    assert set() == module(driver).OPEN_STREAMS
