"""Canonical bytes and the content hash of a Flight Plan.

    canonical = JCS(frontmatter without aileron.lock.contentHash) || 0x00 || body

JCS is RFC 8785 (sorted keys by UTF-16 code units, no whitespace, ECMAScript
number formatting, minimal string escaping), UTF-8 encoded. The body is the
markdown after the closing `---` line with CRLF and lone CR turned into LF,
UTF-8 encoded. `lock.contentHash` is `sha256:` + lowercase hex of SHA-256 of
these bytes, and the Ed25519 signature is over these same bytes. The
construction is specified in docs/canonical-bytes.md.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

import rfc8785

SEPARATOR = b"\x00"


class CanonicalError(ValueError):
    """The frontmatter holds a value JCS cannot encode (e.g. an integer beyond 2**53)."""


def normalise_body(body: str) -> str:
    return body.replace("\r\n", "\n").replace("\r", "\n")


def without_content_hash(data: Mapping[str, Any]) -> dict[str, Any]:
    """The frontmatter with `aileron.lock.contentHash` removed. Only the
    mappings on the way to it (the top level, `aileron`, `lock`) are copied, so
    a caller may drop keys from those three; everything below is shared with
    `data` and must be treated as read-only. A deep copy of a 1,000-step plan
    cost about as much as hashing it."""
    out = dict(data)
    aileron = out.get("aileron")
    if isinstance(aileron, dict):
        aileron = out["aileron"] = dict(aileron)
        lock = aileron.get("lock")
        if isinstance(lock, dict):
            lock = aileron["lock"] = dict(lock)
            lock.pop("contentHash", None)
    return out


# The integers JCS encodes exactly (IEEE 754 doubles); rfc8785 refuses the rest.
_SAFE_INT = 2**53 - 1


def _json_is_jcs(value: object) -> bool:
    """Whether `json.dumps(sort_keys, compact, ensure_ascii=False)` writes the
    JCS bytes of `value`: only exact dicts, lists, strings, safe integers,
    booleans and null (floats need ECMAScript formatting), and keys within the
    BMP, where code-point order is UTF-16 order. The escaping is the same in
    both (`"`, `\\`, the short forms, `\\u00xx` for other controls)."""
    stack = [value]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is dict:
            for key in node:  # type: ignore[attr-defined]
                if type(key) is not str or (not key.isascii() and max(key) > "\uffff"):
                    return False
            stack.extend(node.values())  # type: ignore[attr-defined]
        elif kind is list:
            stack.extend(node)  # type: ignore[arg-type]
        elif kind is int:
            if not -_SAFE_INT <= node <= _SAFE_INT:  # type: ignore[operator]
                return False
        elif kind is not str and kind is not bool and node is not None:
            return False
    return True


def unsafe_integer(value: object) -> str | None:
    """The JSON pointer of the first integer JCS cannot encode (outside
    I-JSON's +-(2**53 - 1), RFC 7493 section 2.2: 2**53 itself is refused,
    since 2**53 + 1 reads back as it), or None."""
    stack: list[tuple[str, object]] = [("", value)]
    while stack:
        pointer, node = stack.pop()
        if isinstance(node, dict):
            for key in reversed(list(node)):
                escaped = str(key).replace("~", "~0").replace("/", "~1")
                stack.append((f"{pointer}/{escaped}", node[key]))
        elif isinstance(node, list):
            stack.extend((f"{pointer}/{i}", item) for i, item in reversed(list(enumerate(node))))
        elif type(node) is int and not -_SAFE_INT <= node <= _SAFE_INT:
            return pointer
    return None


def jcs(value: object) -> bytes:
    # rfc8785 is a pure-Python walk writing node by node; the stdlib encoder
    # gives the same bytes for plain data several times faster (a frozen
    # plan's hash is computed at every launch and verify).
    if _json_is_jcs(value):
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            pass  # a lone surrogate: rfc8785 refuses it with its own error below
    try:
        return bytes(rfc8785.dumps(cast(Any, value)))
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        raise CanonicalError(f"cannot canonicalize the frontmatter: {exc}") from exc


def canonical_bytes(data: Mapping[str, Any], body: str) -> bytes:
    return jcs(without_content_hash(data)) + SEPARATOR + normalise_body(body).encode("utf-8")


def sha256_tag(raw: bytes) -> str:
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def content_hash(data: Mapping[str, Any], body: str) -> str:
    return sha256_tag(canonical_bytes(data, body))


@dataclass(frozen=True)
class PartDigests:
    """Digests of the three parts, recorded beside the signature so verify can
    say *which* part changed. Advisory only: the decision rests on the content
    hash and the signature."""

    frontmatter: str  # JCS of the frontmatter without aileron.lock
    lock: str  # JCS of aileron.lock without contentHash
    body: str  # the normalised body

    @classmethod
    def of(cls, data: Mapping[str, Any], body: str) -> PartDigests:
        stripped = without_content_hash(data)
        aileron = stripped.get("aileron")
        lock: object = {}
        if isinstance(aileron, dict):
            lock = aileron.pop("lock", {})
        return cls(
            frontmatter=sha256_tag(jcs(stripped)),
            lock=sha256_tag(jcs(lock)),
            body=sha256_tag(normalise_body(body).encode("utf-8")),
        )

    def to_data(self) -> dict[str, str]:
        return {"frontmatter": self.frontmatter, "lock": self.lock, "body": self.body}
