from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flightdeck.launch import LaunchError, redact, rewrite, select

SERIES = {
    "series": [
        {"name": "cpu", "labels": {"account_id": "acct-1", "region": "eu"}},
        {"name": "mem", "labels": {"account_id": "acct-2"}},
        {"name": "disk"},
    ]
}


def test_select_wildcard_paths() -> None:
    """Seed 003: source.select with `[]` wildcards, e.g. series[].name."""
    assert select(SERIES, "series[].name") == ["cpu", "mem", "disk"]
    assert select(SERIES, "series[].labels.account_id") == ["acct-1", "acct-2"]
    assert select({"a": {"b": 3}}, "a.b") == 3
    assert select([[1, 2], [3]], "[][]") == [1, 2, 3]


@pytest.mark.parametrize("path", ["", ".a", "a.", "a..b", "a[", "a[0]"])
def test_select_bad_path(path: str) -> None:
    with pytest.raises(LaunchError) as caught:
        select(SERIES, path)
    assert caught.value.code == "path.invalid"


def test_select_missing_field_names_it() -> None:
    with pytest.raises(LaunchError) as caught:
        select({"a": 1}, "b")
    assert caught.value.code == "path.no_match" and "'b'" in caught.value.message


def test_redaction_hash_mask_drop() -> None:
    """Seed 003 trustContract.redaction: drop, mask, hash at field paths."""
    hashed = redact(SERIES, [("series[].labels.account_id", "hash")])
    ids = select(hashed, "series[].labels.account_id")
    assert all(i.startswith("sha256:") for i in ids) and ids[0] != ids[1]
    assert redact(SERIES, [("series[].labels.account_id", "hash")]) == hashed  # stable
    masked = redact({"assignee": {"email": "bob@example.com"}}, [("assignee.email", "mask")])
    assert masked["assignee"]["email"].startswith("****")
    assert "bob" not in str(masked)
    dropped = redact(SERIES, [("series[].labels", "drop")])
    assert all("labels" not in item for item in dropped["series"])
    assert SERIES["series"][0]["labels"]["account_id"] == "acct-1"  # input untouched


def test_redaction_unknown_rule() -> None:
    with pytest.raises(LaunchError) as caught:
        redact({"a": 1}, [("a", "encrypt")])
    assert caught.value.code == "redaction.unknown_rule"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from("abc"), inner),
    max_leaves=20,
)


@given(JSON, st.sampled_from(["a", "a.b", "a[].b", "[].a", "a[][]"]))
def test_rewrite_with_identity_changes_nothing(value: Any, path: str) -> None:
    assert rewrite(value, path, lambda v: v) == value


@given(JSON)
def test_hash_redaction_never_leaks_the_value(value: Any) -> None:
    secret = {"k": {"secret": "leak-me-please"}, "v": value}
    out = redact(secret, [("k.secret", "hash")])
    assert "leak-me-please" not in str(out)
