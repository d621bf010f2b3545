"""Files attached to a `message`: images become image content, anything else
is attached as text with its path."""

from __future__ import annotations

import base64
from pathlib import Path

from flightdeck.agent.tools._read import IMAGE_TYPES, looks_binary
from flightdeck.llm import ImageBlock, TextBlock

MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024


class AttachmentError(Exception):
    """An attached file cannot be read."""


def attach(raw: str, workspace: Path) -> TextBlock | ImageBlock:
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = workspace / path
    try:
        if path.stat().st_size > MAX_ATTACHMENT_BYTES:
            raise AttachmentError(f"attached file is too large: {raw}")
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, PermissionError, NotADirectoryError):
        raise AttachmentError(f"attached file cannot be read: {raw}") from None
    media = IMAGE_TYPES.get(path.suffix.lower())
    if media is not None:
        return ImageBlock(media, base64.b64encode(data).decode("ascii"))
    if looks_binary(data):
        raise AttachmentError(f"attached file is binary and not an image: {raw}")
    text = data.decode("utf-8", errors="replace")
    return TextBlock(f'<attached_file path="{path}">\n{text}\n</attached_file>')
