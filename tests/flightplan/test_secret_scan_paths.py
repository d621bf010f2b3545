"""The secret scans build pointers lazily; findings must not change.

A plain reference walk (a pointer for every node) is compared with
`scan_values` and `scan_keys` on generated JSON with secret-named keys,
binding references and credential-looking strings.
"""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import given
from hypothesis import strategies as st

from flightdeck.flightplan.lint._secrets import (
    _exempt,
    is_secret_key,
    looks_like_credential,
    scan_keys,
    scan_values,
)

_keys = st.sampled_from(["id", "token", "apiKey", "args", "bindings", "a/b", "x~y", "endpoints"])
_strings = st.sampled_from(
    ["", "short", "steps.a.v", "inputs.x", "https://e.com", "ghp_" + "a1B2" * 6, "x" * 40]
)
_json = st.recursive(
    st.none() | st.integers() | _strings,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=16,
)


def _esc(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _values(value: object, pointer: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        why = looks_like_credential(value)
        if why:
            yield pointer, why
    elif isinstance(value, dict):
        for key, item in value.items():
            child = f"{pointer}/{_esc(key)}"
            why = looks_like_credential(key)
            if why:
                yield child, why
            yield from _values(item, child)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _values(item, f"{pointer}/{index}")


def _keys_ref(value: object, pointer: str) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            child = f"{pointer}/{_esc(key)}"
            if _exempt(pointer, item) or not is_secret_key(key):
                yield from _keys_ref(item, child)
            else:
                yield child
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _keys_ref(item, f"{pointer}/{index}")


@given(_json)
def test_scans_find_what_a_plain_walk_finds(value: object) -> None:
    assert [(f.pointer, f.detail) for f in scan_values(value, "/r")] == list(_values(value, "/r"))
    assert [f.pointer for f in scan_keys(value, "/r")] == list(_keys_ref(value, "/r"))


def test_a_nested_token_is_found_at_its_pointer() -> None:
    found = list(scan_values({"a/b": [{"k": "ghp_" + "a1B2" * 6}]}))
    assert [f.pointer for f in found] == ["/a~1b/0/k"]
