"""Plain-JSON helpers: canonical bytes, hashes and short summaries.

Everything that crosses a step boundary is plain JSON data (so a distributed
executor can ship it); these helpers give it one canonical byte form (RFC
8785) for hashing and a bounded one-line summary for audit records.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import rfc8785

from flightdeck._json import json_copy

SUMMARY_LIMIT = 160


def canonical_json(value: Any) -> bytes:
    """RFC 8785 canonical JSON bytes of plain data."""
    return rfc8785.dumps(value)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def value_hash(value: Any) -> str:
    """`sha256:<hex>` of the canonical JSON of `value`."""
    return "sha256:" + sha256_hex(canonical_json(value))


# Exactly these types (not subclasses: a str enum must become a plain str)
# come back from the JSON round trip as themselves, so they skip it.
_SCALARS = frozenset({str, int, float, bool, type(None)})


def to_plain(value: Any) -> Any:
    """Round-trip through JSON so only plain data remains (tuples become lists,
    non-JSON objects become their `str`). Containers are always copied."""
    if type(value) in _SCALARS:
        return value
    if type(value) is dict and all(
        type(k) is str and type(v) in _SCALARS for k, v in value.items()
    ):
        return dict(value)  # a flat object (most results): what the round trip gives
    return json_copy(value, default=str)


def summarize(value: Any, limit: int = SUMMARY_LIMIT) -> str:
    """A short description: the shape for containers, a clipped text otherwise."""
    if isinstance(value, dict):
        keys = ", ".join(sorted(str(k) for k in value)[:8])
        more = ", ..." if len(value) > 8 else ""
        text = f"object with {len(value)} keys ({keys}{more})"
    elif isinstance(value, list):
        text = f"array of {len(value)} items"
    elif isinstance(value, str):
        text = json.dumps(value if len(value) <= limit else value[:limit] + "...")
    else:
        text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."
