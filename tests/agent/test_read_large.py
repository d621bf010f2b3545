"""Read streams a file larger than WHOLE_READ_BYTES: only the asked-for lines
are kept, and the answer is the one a whole read would give."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flightdeck.agent.tools import ReadTool, ToolFailure, Workspace
from flightdeck.agent.tools import _read as read_module


def _read(root: Path, **args: Any) -> str:
    return asyncio.run(ReadTool().run(args, Workspace(root))).output


def _lines() -> st.SearchStrategy[str]:
    # \n and \r\n line ends only: str.splitlines also splits on \r, \x0b and
    # other separators that a byte stream of lines does not treat as ends.
    line = st.text(
        st.characters(
            codec="utf-8", exclude_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\x00"
        ),
        max_size=40,
    )
    return st.lists(st.tuples(line, st.sampled_from(["\n", "\r\n"])), max_size=30).map(
        lambda items: "".join(a + b for a, b in items)
    )


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=_lines(),
    tail=st.sampled_from(["", "last line without an end"]),
    offset=st.integers(1, 35),
    limit=st.integers(1, 35),
)
def test_a_streamed_read_answers_as_a_whole_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, tail: str, offset: int, limit: int
) -> None:
    (tmp_path / "f.txt").write_text(text + tail, encoding="utf-8", newline="")

    def answer(whole_up_to: int) -> str:
        monkeypatch.setattr(read_module, "WHOLE_READ_BYTES", whole_up_to)
        try:
            return _read(tmp_path, file_path="f.txt", offset=offset, limit=limit)
        except ToolFailure as exc:
            return f"failure: {exc}"

    assert answer(-1) == answer(1 << 30)


def test_a_file_past_the_limit_is_read_without_holding_it(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    row = b"x" * 1023 + b"\n"
    rows = read_module.WHOLE_READ_BYTES // len(row) + 100
    with big.open("wb") as fh:
        fh.write(b"first\n")
        for _ in range(rows // 1000):
            fh.write(row * 1000)
        fh.write(b"the end")
    lines = 1 + (rows // 1000) * 1000 + 1
    out = _read(tmp_path, file_path="big.log", limit=1)
    assert out.splitlines()[0].endswith("first") and f"{lines - 1} more lines" in out
    assert _read(tmp_path, file_path="big.log", offset=lines).endswith("the end")
    (tmp_path / "huge.png").write_bytes(b"")
    os.truncate(tmp_path / "huge.png", read_module.WHOLE_READ_BYTES + 1)
    with pytest.raises(ToolFailure, match="too large"):
        _read(tmp_path, file_path="huge.png")


def test_edit_refuses_a_file_too_large_to_hold(tmp_path: Path) -> None:
    from flightdeck.agent.tools import EditTool

    big = tmp_path / "big.txt"
    big.write_bytes(b"a\n")
    os.truncate(big, read_module.WHOLE_READ_BYTES + 1)
    args = {"file_path": "big.txt", "old_string": "a", "new_string": "b"}
    with pytest.raises(ToolFailure, match="too large for Edit"):
        asyncio.run(EditTool().run(args, Workspace(tmp_path)))
