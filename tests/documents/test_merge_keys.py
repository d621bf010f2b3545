"""docs/canonical-bytes.md: the `<<` merge key is applied as PyYAML (and
Go's yaml.v3) apply it: keys written in the mapping win, then the merged
mappings in order. The independent verifier reads with PyYAML's SafeLoader."""

from __future__ import annotations

import pytest
import yaml

from flightdeck.documents import DocumentKind, parse_document

CASES = [
    "a: &a {x: 1, y: 2}\nb: &b {y: 3, z: 4}\nc:\n  <<: [*a, *b]\n  x: 9\n",
    "a: &a {x: 1}\nc: {x: 2, <<: *a}\n",
    "a: &a {x: 1}\nc: {<<: *a, x: 2}\n",
    "c: {<<: {q: 1}, r: 2}\n",
    "a: &a {x: {deep: 1}}\nc:\n  <<: *a\n",
]


@pytest.mark.parametrize("text", CASES)
def test_merge_keys_read_as_pyyaml_reads_them(text: str) -> None:
    result = parse_document(f"---\n{text}---\n", path="x.md", kind=DocumentKind.ACTION)
    assert result.document is not None
    assert result.document.data == yaml.safe_load(text)
    assert "<<" not in result.document.data["c"]
