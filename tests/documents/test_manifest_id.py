"""`manifest_id`: the id a document's file gives, remembered per content."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flightdeck.documents import DocumentKind, load_document, manifest_id

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"
TOOLS = sorted(CORPUS.rglob("TOOL.md"))


def _reference(path: Path) -> object | None:
    loaded = load_document(path, kind=DocumentKind.TOOL)
    return None if loaded.document is None else loaded.document.data.get("id")


@pytest.mark.parametrize("path", TOOLS, ids=lambda p: str(p.relative_to(CORPUS)))
def test_gives_what_load_document_gives(path: Path) -> None:
    assert manifest_id(path, DocumentKind.TOOL) == _reference(path)
    assert manifest_id(path, DocumentKind.TOOL) == _reference(path)  # remembered


def test_a_same_size_rewrite_in_one_clock_tick_is_read_again(tmp_path: Path) -> None:
    # Same inode, same size, same times: all a stat can see is unchanged.
    source = next(p for p in TOOLS if _reference(p) is not None)
    text = source.read_text("utf-8")
    old_id = str(_reference(source))
    new_id = ("z" * len(old_id)) if old_id != "z" * len(old_id) else ("y" * len(old_id))
    file = tmp_path / "TOOL.md"
    file.write_text(text, "utf-8")
    assert manifest_id(file, DocumentKind.TOOL) == old_id
    before = os.stat(file)
    with open(file, "r+", encoding="utf-8") as handle:
        handle.write(text.replace(f"id: {old_id}", f"id: {new_id}", 1))
    os.utime(file, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(file).st_size == before.st_size
    assert manifest_id(file, DocumentKind.TOOL) == new_id == _reference(file)


def test_missing_invalid_and_broken_files_have_no_id(tmp_path: Path) -> None:
    assert manifest_id(tmp_path / "absent.md", DocumentKind.TOOL) is None
    broken = tmp_path / "TOOL.md"
    broken.write_bytes(b"---\nid: [unclosed\n---\n")
    assert manifest_id(broken, DocumentKind.TOOL) is None
    source = next(p for p in TOOLS if _reference(p) is not None)
    broken.write_text(source.read_text("utf-8"), "utf-8")  # now valid: read again
    assert manifest_id(broken, DocumentKind.TOOL) == _reference(source)


def test_same_bytes_at_two_paths_give_the_same_id(tmp_path: Path) -> None:
    source = next(p for p in TOOLS if _reference(p) is not None)
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "TOOL.md").write_bytes(source.read_bytes())
        assert manifest_id(tmp_path / name / "TOOL.md", DocumentKind.TOOL) == _reference(source)
