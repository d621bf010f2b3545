"""`load_document` reads a file through one descriptor, sized by `fstat`:
the limits and the messages are those of a stat, then a bounded read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flightdeck.documents import Limits, load_document

GOOD = "---\nschema: action/v1\nid: a:b\ndescription: x\n---\n"


def _codes(path: Path | str, limits: Limits | None = None) -> list[tuple[str, str]]:
    result = load_document(path, limits=limits)
    return [(d.code, d.message) for d in result.diagnostics]


def test_a_file_of_exactly_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "ACTION.md"
    path.write_text(GOOD)
    result = load_document(path, limits=Limits(max_bytes=len(GOOD)))
    assert result.ok and result.document is not None
    assert result.document.data["id"] == "a:b"


def test_a_file_one_byte_over_the_limit_says_its_size(tmp_path: Path) -> None:
    path = tmp_path / "ACTION.md"
    path.write_text(GOOD)
    limit = len(GOOD) - 1
    assert _codes(path, Limits(max_bytes=limit)) == [
        ("document.too_large", f"the file is {len(GOOD)} bytes; the limit is {limit}")
    ]


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_device_that_never_ends_is_refused_past_the_limit() -> None:
    assert _codes("/dev/zero", Limits(max_bytes=100_000)) == [
        ("document.too_large", "the file goes on past the limit of 100,000 bytes")
    ]


def test_a_file_longer_than_one_read_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "ACTION.md"
    text = GOOD + "body line\n" * 50_000  # ~500 KB, more than one chunk
    path.write_text(text)
    result = load_document(path)
    assert result.ok and result.document is not None
    assert result.document.body == "body line\n" * 50_000


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc")
def test_a_file_whose_size_says_zero_is_read_to_its_end() -> None:
    # /proc files report size 0 and have content: read past what fstat says.
    diags = _codes("/proc/self/status")
    assert [code for code, _ in diags] == ["document.no_frontmatter"]


def test_a_directory_and_a_missing_file_are_unreadable(tmp_path: Path) -> None:
    assert _codes(tmp_path) == [("document.unreadable", "cannot read the file: Is a directory")]
    assert _codes(tmp_path / "absent.md") == [
        ("document.unreadable", "cannot read the file: No such file or directory")
    ]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_named_like_a_manifest_is_unreadable_not_a_hang(tmp_path: Path) -> None:
    # `open` of a FIFO blocks until someone writes to it: validate used to hang.
    import subprocess

    from tests.cli._run import FLIGHTDECK

    os.mkfifo(tmp_path / "ACTION.md")
    (tmp_path / ".tools" / "x").mkdir(parents=True)
    os.mkfifo(tmp_path / ".tools" / "x" / "TOOL.md")
    done = subprocess.run(
        [str(FLIGHTDECK), "validate", "--format", "json", str(tmp_path)],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.count(b'"document.unreadable"') == 2
    assert b"not a regular file" in done.stdout and b"Traceback" not in done.stderr
    assert _codes(tmp_path / "ACTION.md") == [
        ("document.unreadable", "cannot read the file: not a regular file")
    ]
