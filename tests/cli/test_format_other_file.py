"""A diagnostic located in another file names that file under the heading;
one in the heading's file, however it is spelled, does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from flightdeck.cli._render import format_diagnostic
from flightdeck.documents import Diagnostic


def test_the_file_is_named_only_when_it_is_another_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t").mkdir()
    here = Path("t/TOOL.md")
    here.write_text("")
    (tmp_path / "ACTION.md").write_text("")

    def where(file: str | None, line: int | None = 3) -> str:
        diag = Diagnostic("x.y", "message", file=file, line=line, column=2)
        return format_diagnostic(diag, here).split()[0]

    assert where("t/TOOL.md") == "3:2"
    assert where("./t/TOOL.md") == "3:2"  # another spelling of the same file
    assert where(str(tmp_path / "t" / "TOOL.md")) == "3:2"
    assert where(None) == "3:2"
    assert where("ACTION.md") == "ACTION.md:3:2"
    assert where("ACTION.md", None) == "ACTION.md"
