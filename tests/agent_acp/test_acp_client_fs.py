"""Read and Edit through the client's file system when the client's answer
is over the line limit (the frame check fails the request with
`acp.response_too_large`): Read asks for its window (`line`, `limit`),
numbered as the disk Read numbers it; a window still too large and an Edit
are tool errors. A stub client stands for the connection; the process test
is test_acp_frames.py."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError

from flightdeck.agent.acp._client_fs import ClientFiles, use_client_fs
from flightdeck.agent.acp._frames import RESPONSE_TOO_LARGE
from flightdeck.agent.tools import EditTool, ReadTool, Tool, ToolFailure, Workspace

TOO_LARGE = RequestError(
    -32600, "the client's answer is over 16777216 bytes", {"code": RESPONSE_TOO_LARGE}
)


@dataclass
class _Reply:
    content: str


class StubClient:
    """Answers reads from `text`: whole ones with `whole` (an exception or
    None for the text), ranged ones with `ranged` (same), or with the lines
    asked for when `honours_range`."""

    def __init__(self, text: str, whole: Exception | None = TOO_LARGE) -> None:
        self.text = text
        self.whole = whole
        self.ranged: Exception | None = None
        self.honours_range = True
        self.asked: list[tuple[int | None, int | None]] = []

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None
    ) -> _Reply:
        self.asked.append((line, limit))
        failure = self.whole if line is None else self.ranged
        if failure is not None:
            raise failure
        if line is None or not self.honours_range:
            return _Reply(self.text)
        lines = self.text.splitlines()[line - 1 : line - 1 + (limit or 0)]
        return _Reply("\n".join(lines))


def _tools(client: StubClient) -> dict[str, Tool]:
    tools: dict[str, Tool] = {"Read": ReadTool(), "Edit": EditTool()}
    use_client_fs(tools, ClientFiles(client, "s1"))  # type: ignore[arg-type]
    return tools


def _run(tool: Tool, args: dict[str, Any], ws: Workspace) -> str:
    return asyncio.run(tool.run(args, ws)).output


def _text(lines: int, long_line: int | None = None) -> str:
    rows = [f"row {n}" for n in range(1, lines + 1)]
    if long_line is not None:
        rows[long_line - 1] = "z" * 3000
    return "\n".join(rows) + "\n"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    (tmp_path / "big.log").write_text("the disk's copy\n")
    return Workspace(tmp_path)


def test_a_file_too_large_for_one_answer_is_read_as_its_window(ws: Workspace) -> None:
    client = StubClient(_text(20, long_line=6))
    read = _tools(client)["Read"]
    out = _run(read, {"file_path": "big.log", "offset": 5, "limit": 3}, ws)
    assert client.asked == [(None, None), (5, 3)]
    assert out.splitlines() == [
        "     5\trow 5",
        "     6\t" + "z" * 2000,  # cut where the disk Read cuts a line
        "     7\trow 7",
        "... (more lines may follow; big.log is too large to be read whole through the client:"
        " use offset/limit to read them)",
    ]


def test_a_window_at_the_end_is_numbered_as_the_disk_read_numbers_it(ws: Workspace) -> None:
    text = _text(7, long_line=6)
    (Path(ws.root) / "small.log").write_text(text)
    disk = _run(ReadTool(), {"file_path": "small.log", "offset": 5, "limit": 10}, ws)
    client = StubClient(text)
    ranged = _run(_tools(client)["Read"], {"file_path": "big.log", "offset": 5, "limit": 10}, ws)
    assert ranged == disk
    assert client.asked == [(None, None), (5, 10)]


def test_defaults_ask_for_the_first_2000_lines(ws: Workspace) -> None:
    client = StubClient(_text(3))
    out = _run(_tools(client)["Read"], {"file_path": "big.log"}, ws)
    assert client.asked == [(None, None), (1, 2000)]
    assert out == "     1\trow 1\n     2\trow 2\n     3\trow 3"


def test_a_client_that_ignores_the_range_is_windowed_here(ws: Workspace) -> None:
    client = StubClient(_text(12))
    client.honours_range = False  # it sends the whole (small) text again
    out = _run(_tools(client)["Read"], {"file_path": "big.log", "offset": 2, "limit": 3}, ws)
    assert out.splitlines() == [
        "     2\trow 2",
        "     3\trow 3",
        "     4\trow 4",
        "... (8 more lines; use offset/limit to read them)",
    ]


def test_an_empty_window(ws: Workspace) -> None:
    client = StubClient("")
    assert _run(_tools(client)["Read"], {"file_path": "big.log"}, ws) == "(empty file)"
    with pytest.raises(ToolFailure, match="offset 30 is past the end of the file"):
        _run(_tools(StubClient(_text(3)))["Read"], {"file_path": "big.log", "offset": 30}, ws)


def test_a_window_still_too_large_is_a_tool_error(ws: Workspace) -> None:
    client = StubClient(_text(3))
    client.ranged = TOO_LARGE
    with pytest.raises(ToolFailure) as failed:
        _run(_tools(client)["Read"], {"file_path": "big.log", "offset": 2, "limit": 9}, ws)
    assert str(failed.value) == (
        "cannot read lines 2.. of big.log: the client's answer is over 16 MiB;"
        " read fewer lines (a smaller limit)"
    )


@pytest.mark.parametrize(
    ("failure", "said"),
    [
        (RequestError(-32002, "Resource not found", {"uri": "x"}), "Resource not found"),
        (RequestError(-32600, "malformed", {"code": "acp.response_invalid"}), "malformed"),
        (RequestError(-32600, "odd data", "a string"), "odd data"),
        (ConnectionError("Connection closed"), "Connection closed"),
    ],
)
def test_other_failures_are_the_reads_error_without_a_window(
    ws: Workspace, failure: Exception, said: str
) -> None:
    client = StubClient("text", whole=failure)
    with pytest.raises(ToolFailure, match=f"cannot read big.log: {said}"):
        _run(_tools(client)["Read"], {"file_path": "big.log"}, ws)
    assert client.asked == [(None, None)]


def test_an_edit_of_a_file_too_large_for_one_answer_is_a_tool_error(ws: Workspace) -> None:
    client = StubClient(_text(3))
    tools = _tools(client)
    _run(tools["Read"], {"file_path": "big.log"}, ws)  # its window: Edit's rule is met
    edit = {"file_path": "big.log", "old_string": "row 1", "new_string": "row one"}
    with pytest.raises(ToolFailure) as failed:
        _run(tools["Edit"], edit, ws)
    assert str(failed.value) == (
        "cannot read big.log: the client's answer is over 16 MiB:"
        " too large to edit through the client"
    )


def test_a_whole_answer_is_read_as_before(ws: Workspace) -> None:
    client = StubClient(_text(3), whole=None)
    out = _run(_tools(client)["Read"], {"file_path": "big.log", "offset": 2, "limit": 1}, ws)
    assert out == "     2\trow 2\n... (1 more lines; use offset/limit to read them)"
    assert client.asked == [(None, None)]


# ---- the other refusals of the client-backed tools ------------------------------


class WritingClient(StubClient):
    def __init__(self, text: str, refuse_writes: bool = False) -> None:
        super().__init__(text, whole=None)
        self.refuse_writes = refuse_writes
        self.written: dict[str, str] = {}

    async def write_text_file(self, session_id: str, path: str, content: str) -> None:
        if self.refuse_writes:
            raise RequestError(-32603, "read-only buffer")
        self.written[path] = content
        self.text = content


def _full_tools(client: StubClient) -> dict[str, Tool]:
    from flightdeck.agent.tools import WriteTool

    tools: dict[str, Tool] = {"Read": ReadTool(), "Edit": EditTool(), "Write": WriteTool()}
    use_client_fs(tools, ClientFiles(client, "s1"))  # type: ignore[arg-type]
    return tools


def test_write_refusals(ws: Workspace) -> None:
    refusing = _full_tools(WritingClient("", refuse_writes=True))["Write"]
    with pytest.raises(ToolFailure, match=r"cannot write a\.txt: read-only buffer"):
        _run(refusing, {"file_path": "a.txt", "content": "x"}, ws)
    (Path(ws.root) / "folder").mkdir()
    client = WritingClient("")
    with pytest.raises(ToolFailure, match="folder exists and is not a regular file"):
        _run(_full_tools(client)["Write"], {"file_path": "folder", "content": "x"}, ws)
    assert client.written == {}
    out = _run(_full_tools(client)["Write"], {"file_path": "big.log", "content": "new"}, ws)
    assert out == "Updated big.log (3 characters)"
    out = _run(_full_tools(client)["Write"], {"file_path": "n.txt", "content": "ab"}, ws)
    assert out == "Created n.txt (2 characters)"


def test_edit_refusals(ws: Workspace) -> None:
    client = WritingClient("alpha beta\n")
    tools = _full_tools(client)
    edit = {"file_path": "big.log", "old_string": "alpha", "new_string": "gamma"}
    with pytest.raises(ToolFailure, match=r"Read big\.log before editing it"):
        _run(tools["Edit"], edit, ws)
    _run(tools["Read"], {"file_path": "big.log"}, ws)
    with pytest.raises(ToolFailure, match="old_string and new_string are the same"):
        _run(tools["Edit"], {**edit, "new_string": "alpha"}, ws)
    client.text = "alpha beta changed\n"  # the editor's buffer changed since the Read
    with pytest.raises(ToolFailure, match=r"big\.log changed since it was last read"):
        _run(tools["Edit"], edit, ws)
    assert client.written == {}
    _run(tools["Read"], {"file_path": "big.log"}, ws)
    _run(tools["Edit"], edit, ws)
    assert client.written == {str(Path(ws.root) / "big.log"): "gamma beta changed\n"}


def test_images_and_folders_are_read_from_disk(ws: Workspace) -> None:
    client = StubClient("not asked", whole=None)
    (Path(ws.root) / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"0" * 8)
    out = asyncio.run(_tools(client)["Read"].run({"file_path": "pic.png"}, ws))
    assert out.output_type == "image"
    (Path(ws.root) / "sub").mkdir()
    with pytest.raises(ToolFailure, match="sub is a directory"):
        _run(_tools(client)["Read"], {"file_path": "sub"}, ws)
    assert client.asked == []
