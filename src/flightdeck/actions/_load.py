"""`load_action(path)`: an ACTION.md (or its folder) as an `ActionHandle`.

Parsing reads the one file and nothing else: no registry lookups, no network.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

from flightdeck.actions._define import ActionHandle, define_action
from flightdeck.actions._errors import ActionDefinitionError
from flightdeck.documents import Diagnostic, DocumentKind, locate, parse_document

_CACHE: dict[tuple[str, str], ActionHandle] = {}
_CACHE_LOCK = threading.Lock()


def action_file(path: str | Path) -> Path:
    """The ACTION.md a path names: the file itself or `<folder>/ACTION.md`."""
    p = Path(path)
    return p / "ACTION.md" if p.is_dir() else p


def load_action(path: str | Path) -> ActionHandle:
    """Load and define an action. Raises `ActionDefinitionError` (located
    diagnostics) for unparseable or invalid files, `OSError` if unreadable."""
    file = action_file(path)
    raw = file.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    key = (str(file.resolve()), digest)
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
    if hit is not None:
        return hit  # cached by content hash: the same bytes are never decoded twice
    result = parse_document(raw, path=file, kind=DocumentKind.ACTION)
    errors = [d for d in result.diagnostics if d.is_error]
    if result.document is None or errors:
        raise ActionDefinitionError(errors or list(result.diagnostics))
    doc = result.document
    try:
        handle = define_action(doc.data, source=file.resolve(), sha256=digest)
    except ActionDefinitionError as exc:
        located: list[Diagnostic] = list(locate(exc.diagnostics, str(file), doc.source_map))
        raise ActionDefinitionError(located) from None
    with _CACHE_LOCK:
        _CACHE[key] = handle
    return handle
