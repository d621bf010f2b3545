"""Canonical bytes: JCS of the frontmatter minus lock.contentHash, 0x00, LF body."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from flightdeck.documents import parse_document
from flightdeck.flightplan import canonical_bytes, content_hash

DOC = Path(__file__).resolve().parents[2] / "docs" / "canonical-bytes.md"

TINY = {
    "name": "tiny",
    "description": "A tiny plan — café",
    "aileron": {
        "inputs": [
            {"name": "n", "type": "number", "resolution": {"rule": "literal", "default": 1.0}}
        ],
        "outputs": [],
        "lock": {"version": "1.0.0", "contentHash": "sha256:" + "0" * 64},
    },
}
TINY_BODY = "# Tiny\r\nHello\n"


def test_canonical_bytes_layout_is_jcs_nul_lf_body() -> None:
    raw = canonical_bytes(TINY, TINY_BODY)
    head, _, body = raw.partition(b"\x00")
    assert body == b"# Tiny\nHello\n"
    assert (
        head
        == (
            '{"aileron":{"inputs":[{"name":"n","resolution":{"default":1,"rule":"literal"},'
            '"type":"number"}],"lock":{"version":"1.0.0"},"outputs":[]},'
            '"description":"A tiny plan — café","name":"tiny"}'
        ).encode()
    )


def test_content_hash_ignores_the_content_hash_field_itself() -> None:
    other = {**TINY, "aileron": {**TINY["aileron"], "lock": {"version": "1.0.0"}}}  # type: ignore[dict-item]
    assert content_hash(TINY, TINY_BODY) == content_hash(other, TINY_BODY)


def test_content_hash_is_sha256_of_the_canonical_bytes() -> None:
    expected = "sha256:" + hashlib.sha256(canonical_bytes(TINY, TINY_BODY)).hexdigest()
    assert content_hash(TINY, TINY_BODY) == expected


def test_hash_depends_on_data_not_on_yaml_formatting() -> None:
    a = "---\nname: x\ndescription: 'y'\naileron: {inputs: [], outputs: []}\n---\nbody\r\n"
    b = '---\ndescription: "y"\naileron:\n  outputs: []\n  inputs: []\nname: x\n---\nbody\n'
    da, db = parse_document(a).document, parse_document(b).document
    assert da is not None and db is not None
    assert content_hash(da.data, da.body) == content_hash(db.data, db.body)


def test_a_changed_value_changes_the_hash() -> None:
    changed = {**TINY, "description": "A tiny plan — cafe"}
    assert content_hash(changed, TINY_BODY) != content_hash(TINY, TINY_BODY)
    assert content_hash(TINY, TINY_BODY + " ") != content_hash(TINY, TINY_BODY)


def test_documented_worked_example_hash_matches() -> None:
    """docs/canonical-bytes.md quotes the hash of this exact example."""
    text = DOC.read_text("utf-8")
    quoted = re.findall(r"sha256:[0-9a-f]{64}", text)
    assert content_hash(TINY, TINY_BODY) in quoted
