"""The one SDK client of a provider, built on first use or ahead of it.

`flightdeck.llm.warm` may build it in a background thread while the first
call wants it: one of them builds it, the other waits for that one. Once the
provider is closed no client is built again, so a warm-up that finishes late
leaves no open connections behind.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class ClientSlot:
    def __init__(self, factory: Callable[[], Any]) -> None:
        self._factory = factory
        self._client: Any = None
        self._lock = threading.Lock()
        self._closed = False

    def get(self) -> Any:
        """The client, built now if it is not yet (a failing factory raises)."""
        with self._lock:
            if self._client is None:
                self._client = self._factory()
            return self._client

    def prepare(self) -> bool:
        """Build the client ahead of the first call; True when this call built
        it. Nothing happens once closed, or when the factory fails: the first
        call reports that, in its context."""
        with self._lock:
            if self._client is not None or self._closed:
                return False
            try:
                self._client = self._factory()
            except Exception:
                return False
            return True

    async def aclose(self) -> None:
        """Close the client's connections, if one was built; none is built after."""
        with self._lock:
            self._closed = True
            client, self._client = self._client, None
        if client is not None:
            await client.close()
