"""Hashing copies only the path to `contentHash`: the frontmatter is never changed."""

from __future__ import annotations

import copy

from flightdeck.flightplan import PartDigests, content_hash


def test_hashing_leaves_the_frontmatter_as_it_was() -> None:
    data = {
        "name": "p",
        "aileron": {"lock": {"contentHash": "sha256:00", "x": [1]}, "steps": [{"id": "a"}]},
    }
    before = copy.deepcopy(data)
    first = content_hash(data, "body")
    PartDigests.of(data, "body")  # pops `lock` from its own copy of `aileron`
    assert data == before
    assert content_hash(data, "body") == first
    without = {"name": "p", "aileron": {"lock": {"x": [1]}, "steps": [{"id": "a"}]}}
    assert content_hash(without, "body") == first  # contentHash itself is not hashed
