"""Load a SKILL.md: parse, schema-validate, lint, and read the typed plan."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flightdeck.documents import (
    Diagnostic,
    Document,
    DocumentKind,
    LoadResult,
    merge_overlapping,
    parse_document,
)
from flightdeck.flightplan._canonical import content_hash
from flightdeck.flightplan._parsed import parse_skill
from flightdeck.flightplan.lint._lint import lint_read
from flightdeck.flightplan.model._models import FlightPlan


@dataclass(frozen=True)
class PlanLoad:
    """What loading a plan produced: schema and lint diagnostics together.
    `plan` is None only when the file could not be parsed at all."""

    path: Path | None
    document: Document | None
    plan: FlightPlan | None
    diagnostics: tuple[Diagnostic, ...]
    # Filled by the first `content_hash()`; from `load_plan`, shared by every
    # load of the same bytes in this process (`_parsed.py`).
    digest: list[str] = field(default_factory=list, compare=False, repr=False)
    # The document as parsed, from the cache entry the digest is shared with
    # (`_parsed.ParsedSkill.original`); None: hash `document` itself.
    original: Callable[[], tuple[Any, str]] | None = field(default=None, compare=False, repr=False)

    def content_hash(self) -> str:
        """The plan's content hash (`_canonical.content_hash` of the document
        as read), computed once per distinct file content in this process.
        Raises `CanonicalError` as that does; None document: ValueError."""
        if self.digest:
            return self.digest[0]
        if self.document is None:
            raise ValueError("no document: the file did not parse")
        # A hash shared with later loads of these bytes is taken from the
        # remembered parse: edits to `self.document` must not reach them.
        data, body = self.original() if self.original else (self.document.data, self.document.body)
        value = content_hash(data, body)
        self.digest[:] = [value]
        return value

    @property
    def ok(self) -> bool:
        return self.plan is not None and not any(d.is_error for d in self.diagnostics)

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.is_error)


def load_plan(path: str | Path, *, installed_actions: Collection[str] | None = None) -> PlanLoad:
    """Load + schema + lint a SKILL.md file. Never raises for bad input.
    Bytes parsed before in this process are not parsed again (`_parsed.py`)."""
    where = path if isinstance(path, Path) else Path(path)
    parsed = parse_skill(where, installed_actions)
    result = parsed.result
    return PlanLoad(
        result.path,
        result.document,
        parsed.plan,
        merge_overlapping(result.diagnostics, list(parsed.lint)),
        parsed.digest,
        parsed.original,
    )


def parse_plan(
    text: str | bytes,
    *,
    path: str | Path | None = None,
    installed_actions: Collection[str] | None = None,
) -> PlanLoad:
    """Like `load_plan` for text already in memory."""
    return _finish(parse_document(text, path=path, kind=DocumentKind.SKILL), installed_actions)


def _finish(result: LoadResult, installed_actions: Collection[str] | None) -> PlanLoad:
    document = result.document
    if document is None:
        return PlanLoad(result.path, None, None, result.diagnostics)
    plan, lint = lint_read(document, installed_actions=installed_actions)
    return PlanLoad(result.path, document, plan, merge_overlapping(result.diagnostics, lint))
