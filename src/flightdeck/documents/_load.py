"""Loading one manifest: read, split, parse, detect the kind, validate.

Nothing here raises for bad input: every problem becomes a located
diagnostic in the `LoadResult`.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flightdeck._bounded import TooLarge
from flightdeck.documents import _frontmatter, _kinds, _offline, _yaml
from flightdeck.documents._diagnostics import Diagnostic, Severity, locate
from flightdeck.documents._document import Document, DocumentKind, LoadResult, SourceMap
from flightdeck.documents._offline import ref_problems


@dataclass(frozen=True)
class Limits:
    """Caps that keep hostile input cheap to reject; users may raise them."""

    max_bytes: int = 5 * 1024 * 1024
    max_depth: int = 64
    max_alias_expansion: int = 10_000
    max_scalar_chars: int = 1024 * 1024
    max_int_digits: int = 100
    max_keys: int = 10_000  # per mapping
    max_diagnostics: int = 100  # per file; the rest are counted in one more


DEFAULT_LIMITS = Limits()


def validate_data(kind: DocumentKind | str, data: Any) -> list[Diagnostic]:
    """Schema diagnostics for frontmatter data (pointers only, no positions)."""
    resolved = _kinds.coerce_kind(kind)
    assert resolved is not None
    name = _kinds.schema_name(resolved, data)
    try:
        if _offline.shipped_is_valid(name, data):
            return []
        # Imported here: explaining needs jsonschema, which a valid document never does.
        from flightdeck.documents._schema_errors import fast_diagnostics, schema_diagnostics

        # One verdict: the fast validator decides; when the explaining one finds
        # nothing to say, the fast one's own errors are reported instead.
        return schema_diagnostics(name, data) or fast_diagnostics(name, data)
    except RecursionError:  # only reachable with a raised --max-depth
        return [Diagnostic("document.too_deep_to_check", "the data is nested too deeply to check")]


# Frontmatter fields that hold a user's JSON Schema: their `$ref`s must resolve offline.
_SCHEMA_FIELDS = {
    DocumentKind.TOOL: ("inputs", "outputs"),
    DocumentKind.IO: ("inputs", "outputs"),
    DocumentKind.ACTION: ("inputs", "outputs"),
}


def _ref_diagnostics(kind: DocumentKind, data: dict[str, Any], text: str) -> list[Diagnostic]:
    """Unresolvable `$ref`s in the schema fields of `data`, composed from the
    YAML `text`. A key of the data is spelt out in the text, or written with
    a backslash escape (only double-quoted scalars have escapes; folding
    lines adds spaces, never a character): a text with neither `$ref`,
    `$dynamicRef` nor a backslash has no reference to resolve, and skips the
    walk over the schemas (~20 us of a TOOL.md with large ones)."""
    if "$ref" not in text and "$dynamicRef" not in text and "\\" not in text:
        return []
    out: list[Diagnostic] = []
    for field in _SCHEMA_FIELDS.get(kind, ()):
        out += ref_problems(data.get(field), f"/{field}", "schema.unresolvable_ref")
    return out


def _as_path(path: str | Path) -> Path:
    # Path(a_path) parses it again (~10 us); a validate run passes Paths already.
    return path if isinstance(path, Path) else Path(path)


def _failed(path: Path | None, diag: Diagnostic) -> LoadResult:
    file = str(path) if path is not None else None
    return LoadResult(path, None, tuple(locate([diag], file, None)))


def parse_document(
    source: str | bytes,
    *,
    path: str | Path | None = None,
    kind: DocumentKind | str | None = None,
    limits: Limits | None = None,
) -> LoadResult:
    """Parse and validate manifest text (as read from `path`, if given)."""
    limits = limits or DEFAULT_LIMITS
    where = _as_path(path) if path is not None else None
    if isinstance(source, bytes) and b"\x00" in source:
        return _failed(
            where, Diagnostic("document.binary", "the file is binary, not a text manifest", line=1)
        )
    try:
        text = _frontmatter.decode(source) if isinstance(source, bytes) else source
        split = _frontmatter.split(_frontmatter.normalise(text))
    except _frontmatter.FrontmatterError as exc:
        return _failed(where, exc.diagnostic)
    try:
        data, source_map = _yaml.compose(
            split.frontmatter, line_offset=split.line_offset, limits=_yaml_limits(limits)
        )
    except _yaml.YamlError as exc:
        return _failed(where, exc.diagnostic)
    return _build(where, data, split, source_map, _kinds.coerce_kind(kind), limits)


@functools.lru_cache(maxsize=16)
def _yaml_limits(limits: Limits) -> _yaml.YamlLimits:
    # Once per Limits, not per document: a frozen dataclass costs ~2 us to build.
    return _yaml.YamlLimits(
        limits.max_depth,
        limits.max_alias_expansion,
        limits.max_scalar_chars,
        limits.max_int_digits,
        limits.max_keys,
    )


def _capped(problems: list[Diagnostic], cap: int) -> list[Diagnostic]:
    """The first `cap` diagnostics, then one that counts the rest."""
    if len(problems) <= cap:
        return problems
    shown, rest = problems[:cap], problems[cap:]
    more = Diagnostic(
        "document.too_many_diagnostics",
        f"{len(rest):,} more problems not shown",
        severity=max((d.severity for d in rest), key=_rank),
        pointer=rest[0].pointer,
        hint="fix the ones shown first",
    )
    return [*shown, more]


def _rank(severity: Severity) -> int:
    return (Severity.INFO, Severity.WARNING, Severity.ERROR).index(severity)


def _build(
    path: Path | None,
    data: Any,
    split: _frontmatter.Split,
    source_map: SourceMap,
    forced: DocumentKind | None,
    limits: Limits,
) -> LoadResult:
    file = str(path) if path is not None else None
    if not isinstance(data, dict):
        found = "empty" if data is None else f"a {type(data).__name__}"
        diag = Diagnostic(
            "document.not_a_mapping",
            f"the frontmatter must be a mapping of fields; it is {found}",
            line=2,
            column=1,
            hint="write 'key: value' lines between the '---' lines",
        )
        return _failed(path, diag)
    kind = forced or _kinds.kind_from_name(path) or _kinds.kind_from_data(data)
    if kind is None:
        diag = Diagnostic(
            "document.unknown_kind",
            "cannot tell what kind of manifest this is",
            hint="name the file ACTION.md, TOOL.md, DRIVER.md or SKILL.md, or pass --as KIND",
            line=1,
            column=1,
        )
        return _failed(path, diag)
    document = Document(kind, data, split.body, path, source_map, split.body_line)
    problems = validate_data(kind, data) + _ref_diagnostics(kind, data, split.frontmatter)
    diagnostics = tuple(locate(_capped(problems, limits.max_diagnostics), file, source_map))
    return LoadResult(path, document, diagnostics)


def _too_large(where: Path, said: str) -> LoadResult:
    hint = "raise the limit with --max-bytes if this is intended"
    return _failed(where, Diagnostic("document.too_large", said, hint=hint))


def load_document(
    path: str | Path,
    *,
    kind: DocumentKind | str | None = None,
    limits: Limits | None = None,
) -> LoadResult:
    """Read, parse and validate one manifest file."""
    limits = limits or DEFAULT_LIMITS
    where = _as_path(path)
    try:
        raw = _read(where, limits.max_bytes)
    except _Oversized as exc:
        return _too_large(
            where, f"the file is {exc.size:,} bytes; the limit is {limits.max_bytes:,}"
        )
    except TooLarge:
        return _too_large(where, f"the file goes on past the limit of {limits.max_bytes:,} bytes")
    except OSError as exc:
        return _failed(
            where, Diagnostic("document.unreadable", f"cannot read the file: {exc.strerror}")
        )
    return parse_document(raw, path=where, kind=kind, limits=limits)


class _Oversized(Exception):
    def __init__(self, size: int) -> None:
        self.size = size


# O_NONBLOCK: a FIFO named like a manifest would block `open` until someone
# writes to it (validate hung on one); it is opened at once, then refused.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0) | os.O_NONBLOCK


def read_bytes(path: Path, limit: int) -> bytes | None:
    """The bytes `load_document` would parse, or None where it reports the
    file as unreadable or too large."""
    try:
        return _read(path, limit)
    except (_Oversized, OSError):  # TooLarge is an OSError
        return None


def _read(path: Path, limit: int) -> bytes:
    """The bytes of `path`: `_Oversized` when its size says more than
    `limit`, `TooLarge` when reading goes on past it (a device or a pipe
    reports size 0 and may never end: /dev/zero).

    One descriptor, its size from `fstat`, and a read of exactly that size
    (plus one byte, to see the end): `Path.stat` then `Path.open(...).read
    (limit + 1)` cost ~20 us more per file, most of it a buffer of the whole
    limit allocated for every read."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        info = os.fstat(fd)
        if stat.S_ISFIFO(info.st_mode) or stat.S_ISSOCK(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        size = info.st_size
        if size > limit:
            raise _Oversized(size)
        chunks: list[bytes] = []
        total = 0
        want = size + 1
        while chunk := os.read(fd, min(want, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise TooLarge(path, limit)
            want = 1 << 16
    finally:
        os.close(fd)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
