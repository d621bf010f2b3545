"""The `id:` of a manifest file, remembered per content.

Drivers name the TOOL they implement by path or by id; an id is found by
reading each `.tools/*/TOOL.md` of the workspace until one has it. Done per
`implements` entry, that parsed every TOOL.md again for every entry of every
driver: entries x tools YAML parses, ~0.2 ms each. The id is kept with a
digest of the bytes it was read from, so a later lookup reads the file but
parses it only when its bytes changed. (Not keyed by stat: two same-size
writes within one clock tick leave the same times, and the id would be stale.)
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

from flightdeck.documents._document import DocumentKind
from flightdeck.documents._load import DEFAULT_LIMITS, load_document, parse_document, read_bytes

_MAX = 4096  # entries; the whole table is dropped when full (workspaces are smaller)
_NO_ID = object()

_known: dict[tuple[str, bytes], object] = {}
_lock = threading.Lock()


def manifest_id(path: Path, kind: DocumentKind) -> object | None:
    """The `id` value of `path` read as a valid `kind` document (None when the
    document is invalid, unreadable or has no `id`), as `load_document` gives it."""
    raw = read_bytes(path, DEFAULT_LIMITS.max_bytes)
    if raw is None:  # unreadable or too large: as load_document says
        loaded = load_document(path, kind=kind)
        return None if loaded.document is None else loaded.document.data.get("id")
    key = (kind.value, hashlib.blake2b(raw, digest_size=16).digest())
    with _lock:
        found = _known.get(key)
    if found is None:
        loaded = parse_document(raw, path=path, kind=kind)
        value = None if loaded.document is None else loaded.document.data.get("id")
        found = _NO_ID if value is None else value
        with _lock:
            if len(_known) >= _MAX:
                _known.clear()
            _known[key] = found
    return None if found is _NO_ID else found
