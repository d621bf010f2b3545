"""Progress events a launch emits (the CLI renders them on a terminal)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class LaunchEvent:
    kind: str  # run_started | step_started | step_finished | run_finished
    run_id: str
    step_id: str | None = None
    status: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)


EventSink = Callable[[LaunchEvent], None]


def ignore(_: LaunchEvent) -> None:
    return None
