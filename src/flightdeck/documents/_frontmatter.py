"""Split a manifest file into its YAML frontmatter and markdown body.

The file starts with a line that is exactly `---`; the next line that is
exactly `---` closes the block. A UTF-8 BOM and CRLF line endings are
accepted and normalised to LF.
"""

from __future__ import annotations

from dataclasses import dataclass

from flightdeck.documents._diagnostics import Diagnostic

_BOM = "\ufeff"


@dataclass(frozen=True)
class Split:
    frontmatter: str
    body: str
    line_offset: int  # lines before the frontmatter's first line (the opening `---`)

    @property
    def body_line(self) -> int:
        """1-based line where the body starts: after both `---` lines."""
        return self.line_offset + self.frontmatter.count("\n") + 2


class FrontmatterError(Exception):
    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def decode(raw: bytes) -> str:
    """UTF-8 decode; invalid bytes are an error at their line and column."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise FrontmatterError(
            Diagnostic(
                "document.invalid_utf8",
                f"the file is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})",
                line=line,
                column=column,
                hint="manifests must be UTF-8 text",
            )
        ) from None
    return text


def normalise(text: str) -> str:
    if text.startswith(_BOM):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def split(text: str) -> Split:
    """Split normalised text. Raises `FrontmatterError` when there is no block."""
    if not (text.startswith("---\n") or text == "---"):
        first = text.split("\n", 1)[0]
        hint = "start the file with a line '---', the YAML frontmatter, then a line '---'"
        if first.rstrip() == "---":
            message = "the opening '---' line has trailing characters"
        else:
            message = "the file has no YAML frontmatter"
        raise FrontmatterError(
            Diagnostic("document.no_frontmatter", message, line=1, column=1, hint=hint)
        )
    start = 4
    end = text.find("\n---\n", start - 1)
    if end == -1:
        if text.endswith("\n---"):
            end = len(text) - 4
        else:
            raise FrontmatterError(
                Diagnostic(
                    "document.unclosed_frontmatter",
                    "the frontmatter opened on line 1 is never closed",
                    line=1,
                    column=1,
                    hint="add a line that is exactly '---' after the YAML",
                )
            )
    frontmatter = text[start : end + 1] if end >= start else ""
    body = text[end + 5 :]
    return Split(frontmatter, body, 1)
