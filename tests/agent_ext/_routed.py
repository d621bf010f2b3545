"""A scripted provider that routes each request by who is asking: the parent
agent or a named sub-agent (read from the system prompt), so concurrent
sub-agents get deterministic scripts."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

from flightdeck.llm import Request, StreamEvent
from tests.agent._harness import Step, StepProvider

_SUB = re.compile(r"sub-agent of flightdeck named (\S+),")


def who(request: Request) -> str:
    match = _SUB.search(request.system or "")
    return match.group(1) if match else "parent"


class RoutedProvider:
    name = "routed"

    def __init__(self, scripts: dict[str, list[Step]]) -> None:
        self.providers = {key: StepProvider(steps) for key, steps in scripts.items()}
        self.requests: list[tuple[str, Request]] = []

    def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        key = who(request)
        self.requests.append((key, request))
        return self.providers.setdefault(key, StepProvider([])).stream(request)

    def of(self, key: str) -> list[Request]:
        return [r for k, r in self.requests if k == key]
