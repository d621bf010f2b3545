"""Secret detection: keys that would hold a secret, strings that look like one.

The manifest declares credential kinds and placements, never values (seed
003, "Credential sealing invariant"). Two checks:

- secret-named keys (`value`, `token`, `password`, `apiKey`, ...) anywhere in
  a trust contract or a step. The OAuth endpoint map is exempt: its keys name
  endpoints (`token: https://...`) and its values are URLs. Argument names in
  `args`/`bindings` are exempt too when the value is a binding reference.
- credential-looking strings anywhere in the frontmatter: well-known key
  prefixes (`sk-`, `ghp_`, `AKIA`, `xoxb-`, PEM private keys, JWTs, ...) and
  long, mixed-case, high-entropy tokens. Digests (`sha256:<hex>`) are not
  secrets; hex alone never reaches the entropy threshold either.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from flightdeck.flightplan.model._bindings import parse_binding

_SECRET_KEYS = frozenset(
    {
        "value",
        "token",
        "secret",
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "apikey",
        "accesskey",
        "secretkey",
        "privatekey",
        "clientsecret",
        "credentialvalue",
        "bearer",
        "cookie",
    }
)
_SECRET_SUFFIXES = ("token", "secret", "password", "apikey", "privatekey", "secretkey")

_PREFIXES = re.compile(
    r"(?<![A-Za-z0-9])("
    r"sk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}"
    r"|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}"
    r"|glpat-[A-Za-z0-9_-]{20,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|AIza[0-9A-Za-z_-]{35}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----"
    r")"
)
_PEM = "-----BEGIN"  # the one pattern with spaces in it
_TOKEN_CHARS = 32
_TOKEN = re.compile(rf"[A-Za-z0-9+/=_-]{{{_TOKEN_CHARS},}}")
_DIGEST = re.compile(r"sha(256|384|512):[0-9a-f]+")
_ENTROPY_BITS = 4.0  # bits per character; random base64 is ~5, hex at most 4
# The shortest text either pattern can match (`xoxb-` + 10): shorter strings,
# most of a manifest, skip the regular expressions.
_SHORTEST = 15


@dataclass(frozen=True)
class SecretFinding:
    pointer: str
    kind: str  # "key" or "value"
    detail: str


@functools.lru_cache(maxsize=4096)  # keys repeat across steps: `id`, `kind`, `bindings`, ...
def is_secret_key(key: str) -> bool:
    normal = re.sub(r"[^a-z0-9]", "", key.lower())
    return normal in _SECRET_KEYS or normal.endswith(_SECRET_SUFFIXES)


def _entropy(text: str) -> float:
    counts = Counter(text)
    size = len(text)
    return -sum(n / size * math.log2(n / size) for n in counts.values())


def looks_like_credential(text: str) -> str | None:
    """A short description of why `text` looks like a credential, or None."""
    if len(text) < _SHORTEST:
        return None
    candidate = text if _PEM in text else _long_words(text)
    if not candidate:
        return None
    match = _PREFIXES.search(candidate)
    if match:
        return f"starts like a known credential ({match.group(0)[:6]}...)"
    if len(candidate) < _TOKEN_CHARS:
        return None  # most identifiers and URLs: too short to hold a token
    for token in _TOKEN.findall(candidate):
        if _DIGEST.fullmatch(text.strip()):
            continue
        mixed = (
            any(c.isdigit() for c in token)
            and any(c.isupper() for c in token)
            and any(c.islower() for c in token)
        )
        if mixed and _entropy(token) >= _ENTROPY_BITS:
            return f"a {len(token)}-character high-entropy token"
    return None


def _long_words(text: str) -> str:
    """The whitespace-separated words of `text` that are at least `_SHORTEST`
    long, joined by spaces: where the patterns can match when `text` has no
    PEM header. Each of them but the header matches only non-space
    characters, at least `_SHORTEST` of them, so a match lies inside one
    long word, seen there with the same neighbours (a space counts as the
    whitespace it replaces). The regular expressions cost ~20 us per KiB of
    prose; splitting it costs a tenth of that, and prose has few long words."""
    return " ".join([word for word in text.split() if len(word) >= _SHORTEST])


def may_hold_credential(text: str) -> bool:
    """False when no line of `text` can look like a credential (see
    `_long_words`): most markdown bodies, checked whole instead of by line."""
    return _PEM in text or any(len(word) >= _SHORTEST for word in text.split())


def scan_values(value: object, pointer: str = "") -> Iterator[SecretFinding]:
    """Every credential-looking string (or key) in a JSON value."""
    found: list[SecretFinding] = []
    _scan_values(value, pointer, [], found)
    return iter(found)


_CONTAINERS = (dict, list)  # a tuple: isinstance with `dict | list` is ~40% slower


def _scan_values(
    value: object, root: str, path: list[str | int], found: list[SecretFinding]
) -> None:
    # Plain recursion into a list instead of nested generators, and strings
    # checked in the loop: a plan has thousands of values, most of them short
    # scalars skipped without a call. The pointer of a value is built only
    # for a finding (`path` holds the keys on the way there): building one
    # per container was a third of the scan. Depth is bounded by the loader's cap.
    if isinstance(value, str):
        why = looks_like_credential(value)
        if why:
            found.append(SecretFinding(_pointer(root, path), "value", why))
        return
    if isinstance(value, dict):
        items: Iterable[tuple[str | int, object]] = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return
    for key, item in items:
        if isinstance(key, str) and len(key) >= _SHORTEST:
            why = looks_like_credential(key)
            if why:
                found.append(SecretFinding(_pointer(root, [*path, key]), "value", why))
        if isinstance(item, str):
            if len(item) >= _SHORTEST:
                why = looks_like_credential(item)
                if why:
                    found.append(SecretFinding(_pointer(root, [*path, key]), "value", why))
        elif isinstance(item, _CONTAINERS):
            path.append(key)
            _scan_values(item, root, path, found)
            path.pop()


def _pointer(root: str, path: list[str | int]) -> str:
    return root + "".join(f"/{_escape(t)}" if isinstance(t, str) else f"/{t}" for t in path)


def scan_keys(value: object, pointer: str) -> Iterator[SecretFinding]:
    """Secret-named keys inside a trust contract or a step."""
    found: list[SecretFinding] = []
    _scan_keys(value, pointer, [], found)
    return iter(found)


def _scan_keys(value: object, root: str, path: list[str | int], found: list[SecretFinding]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if is_secret_key(key):
                # Rare: only now is the parent's pointer needed (for `_exempt`).
                parent = _pointer(root, path)
                if not _exempt(parent, item):
                    found.append(SecretFinding(f"{parent}/{_escape(key)}", "key", key))
                    continue
            if isinstance(item, dict | list):
                path.append(key)
                _scan_keys(item, root, path, found)
                path.pop()
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict | list):
                path.append(index)
                _scan_keys(item, root, path, found)
                path.pop()


def _exempt(parent: str, value: object) -> bool:
    if parent.endswith("/oauth/endpoints"):
        return isinstance(value, str) and value.startswith(("https://", "http://"))
    if parent.endswith(("/args", "/bindings")):
        return parse_binding(value) is not None
    return False


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")
