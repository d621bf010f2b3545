"""What a validate run is asked for: `ValidateOptions`.

A leaf of the package: the pipeline (`_run`) reads it to load each file and
the kind checks (`_checks`) to find workspaces and libraries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from flightdeck.documents import DocumentKind, Limits


@dataclass(frozen=True)
class ValidateOptions:
    kind: DocumentKind | None = None  # `--as KIND`: overrides detection
    limits: Limits = field(default_factory=Limits)
    strict: bool = False
    libraries: tuple[Path, ...] = ()
    workspace: Path | None = None
    # `--catalog FILE`: environment.tools are judged against this tool
    # catalog; else against each workspace's `[catalog] file`, if set.
    catalog: Path | None = None
