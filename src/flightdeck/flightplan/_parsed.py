"""Parsing, schema and lint of a SKILL.md, remembered per process by its bytes.

A long-lived process (a Temporal worker, `flightdeck ui` resuming runs, a
library caller) launches the same plans again and again; parsing, schema
validation and lint of a 1,000-step plan cost ~45 ms each time. These are
pure functions of the file's bytes (and its path, which diagnostics name, and
the installed actions lint is told about), so their result is remembered
here under the SHA-256 of the bytes and read back when the same bytes come
again. Nothing else is remembered: the file is read on every call, and
signatures, the lock, the keyring and the trust state are checked as before
by the caller (docs/decisions.md, "Parse cache").

Why this cannot be poisoned: the cache lives in this process's memory only
(never a file an attacker with write access to the store could edit), an
entry is reached only through the digest of the bytes just read, and its
value is what a full parse of exactly those bytes produced in this process,
with this flightdeck's code and schemas. A changed byte is a miss.

The content hash (JCS of the frontmatter + the body, ~2 ms for 1,000 steps)
is a function of the same bytes: computed when first asked for, then kept
with the entry.

Each hit gets fresh frontmatter data (the remembered copy is marshalled
bytes, ~0.5 ms to load for 1,000 steps) and a freshly read plan, so a caller
that edits what it got cannot change what the next caller gets. Diagnostics
and the source map are immutable values, and are shared; so are what the
first read computed from the steps, which a launch would otherwise compute
again (~6 ms for 1,000 steps): the step graph (tuples and a read-only
mapping) and each step's own fields, parsed bindings and dependencies
(strings, tuples and frozen values; `_read.step_stamp`), all taken before
the first caller got the plan. A hit's steps are new objects made from
those, whose `raw`, `references` and trust contract are views of the
hit's own fresh data, as a fresh read's are.
"""

from __future__ import annotations

import hashlib
import marshal
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from flightdeck.documents import (
    Diagnostic,
    Document,
    DocumentKind,
    LoadResult,
    SourceMap,
    load_document,
    parse_document,
)
from flightdeck.documents import Limits as _Limits
from flightdeck.flightplan.lint._lint import lint_read
from flightdeck.flightplan.model._graph import StepGraph
from flightdeck.flightplan.model._models import FlightPlan
from flightdeck.flightplan.model._read import StepStamp, read_again, step_stamp

MAX_ENTRIES = 32
# Roughly the memory all entries hold together. The source map dominates: a
# 1,000-step plan's is ~1.9 MB (~125 bytes per located key or value) beside
# ~80 KB of marshalled data, so each entry is weighed by both.
MAX_WEIGHT = 64 * 1024 * 1024
_PER_POSITION = 128
_MAX_FILE = _Limits().max_bytes

Key = tuple[bytes, str, frozenset[str] | None]


@dataclass(frozen=True)
class _Entry:
    blob: bytes  # marshal of the frontmatter data
    weight: int  # estimated bytes held (`_weigh`)
    body: str
    source_map: SourceMap
    body_line: int
    diagnostics: tuple[Diagnostic, ...]  # schema's, located
    lint: tuple[Diagnostic, ...]  # lint's, located
    digest: list[str]  # the content hash once someone asked (`PlanLoad.content_hash`)
    graph: StepGraph | None  # the plan's, immutable; None: no plan was read
    stamps: tuple[StepStamp, ...]  # each step's, in order (`_read.step_stamp`)

    def original(self) -> tuple[Any, str]:
        """A fresh copy of the frontmatter data, and the body."""
        return marshal.loads(self.blob), self.body


@dataclass(frozen=True)
class ParsedSkill:
    """One SKILL.md parsed, validated and linted; fresh objects on every call."""

    result: LoadResult
    plan: FlightPlan | None
    lint: tuple[Diagnostic, ...]
    # The content hash of these bytes, once computed: shared with the cache
    # entry, so a launch of the same bytes again does not hash them again.
    digest: list[str] = field(default_factory=list, compare=False, repr=False)
    # The frontmatter data (a fresh copy) and body of the remembered entry:
    # what the shared `digest` is computed from, never the caller's copy,
    # which the caller may have edited. None when nothing was remembered.
    original: Callable[[], tuple[Any, str]] | None = field(default=None, compare=False, repr=False)


_entries: OrderedDict[Key, _Entry] = OrderedDict()
_size = 0
_lock = threading.Lock()


def parse_skill(path: Path, installed_actions: Collection[str] | None = None) -> ParsedSkill:
    """`load_document` + `lint_read` of the SKILL.md at `path`, from memory
    when these exact bytes (at this path) were parsed before in this process."""
    try:
        raw = path.read_bytes() if path.stat().st_size <= _MAX_FILE else None
    except OSError:
        raw = None
    if raw is None:  # too large or unreadable: the loader says so, located
        return _fresh(load_document(path, kind=DocumentKind.SKILL), installed_actions)
    installed = frozenset(installed_actions) if installed_actions is not None else None
    key: Key = (hashlib.sha256(raw).digest(), str(path), installed)
    with _lock:
        entry = _entries.get(key)
        if entry is not None:
            _entries.move_to_end(key)
    if entry is not None:
        return _from_entry(path, entry)
    parsed = _fresh(parse_document(raw, path=path, kind=DocumentKind.SKILL), installed_actions)
    entry = _remember(key, parsed)
    return parsed if entry is None else replace(parsed, original=entry.original)


def clear() -> None:
    """Forget every entry (tests, and benchmarks of a first launch)."""
    global _size
    with _lock:
        _entries.clear()
        _size = 0


def _fresh(result: LoadResult, installed_actions: Collection[str] | None) -> ParsedSkill:
    if result.document is None:
        return ParsedSkill(result, None, ())
    plan, lint = lint_read(result.document, installed_actions=installed_actions)
    return ParsedSkill(result, plan, tuple(lint))


def _from_entry(path: Path, entry: _Entry) -> ParsedSkill:
    data = marshal.loads(entry.blob)
    document = Document(
        DocumentKind.SKILL, data, entry.body, path, entry.source_map, entry.body_line
    )
    result = LoadResult(path, document, entry.diagnostics)
    plan = read_again(data, entry.body, entry.stamps if entry.graph is not None else None)
    if entry.graph is not None:
        plan.__dict__["graph"] = entry.graph  # what `cached_property` would store
    return ParsedSkill(result, plan, entry.lint, entry.digest, entry.original)


def _remember(key: Key, parsed: ParsedSkill) -> _Entry | None:
    global _size
    document = parsed.result.document
    if document is None:
        return None  # unparseable files are cheap to refuse again
    try:
        # Taken before the caller sees the data, so nothing it does reaches here.
        blob = marshal.dumps(document.data)
    except ValueError:  # not plain JSON data (cannot happen from the loader)
        return None
    weight = _weigh(blob, document.source_map)
    if weight > MAX_WEIGHT // 4:  # a huge plan would push out every other entry
        return None
    plan = parsed.plan
    graph = plan.graph if plan is not None else None
    stamps = tuple(map(step_stamp, plan.steps)) if plan is not None else ()
    entry = _Entry(
        blob,
        weight,
        document.body,
        document.source_map,
        document.body_line,
        parsed.result.diagnostics,
        parsed.lint,
        parsed.digest,
        graph,
        stamps,
    )
    with _lock:
        old = _entries.pop(key, None)
        if old is not None:
            _size -= old.weight
        _entries[key] = entry
        _size += weight
        while len(_entries) > MAX_ENTRIES or _size > MAX_WEIGHT:
            _, dropped = _entries.popitem(last=False)
            _size -= dropped.weight
    return entry


def _weigh(blob: bytes, source_map: SourceMap) -> int:
    return len(blob) + _PER_POSITION * (len(source_map.values) + len(source_map.keys))
