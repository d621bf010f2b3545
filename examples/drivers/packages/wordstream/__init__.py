"""An async-generator module used by the wordstream-sdk example driver."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

OPEN_STREAMS: set[int] = set()  # ids of generators still running (tests look at it)


class Streamer:
    """Built once per driver; `words` streams one chunk per word (a text delta)."""

    async def words(
        self, text: str, upper: bool = False, delay: int = 0
    ) -> AsyncIterator[dict[str, str]]:
        marker = id(object())
        OPEN_STREAMS.add(marker)
        try:
            words = text.split()
            for i, word in enumerate(words):
                if delay:
                    await asyncio.sleep(delay / 1000)
                delta = word.upper() if upper else word
                yield {"word": delta if i == len(words) - 1 else delta + " "}
        finally:
            OPEN_STREAMS.discard(marker)
