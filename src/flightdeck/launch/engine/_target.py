"""The plan a run walks, as verification found it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from flightdeck.flightplan import FlightPlan


@dataclass(frozen=True)
class VerifiedTarget:
    plan: FlightPlan
    path: Path
    content_hash: str
    version: str | None = None
    publisher: str | None = None
    signer: str | None = None
    unsigned: bool = False
