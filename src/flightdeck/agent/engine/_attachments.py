"""Files attached to a `message`: images become image content, text files are
attached as text with their path, and other binary files (a PDF, an archive)
are listed by path, as aionrs does, so the model knows they exist."""

from __future__ import annotations

import base64
from pathlib import Path

from flightdeck._bounded import TooLarge, read_at_most
from flightdeck.agent.tools._read import IMAGE_TYPES, looks_binary
from flightdeck.llm import ImageBlock, TextBlock

MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024


class AttachmentError(Exception):
    """An attached file cannot be read."""


def attach(raw: str, workspace: Path, *, images: bool = True) -> TextBlock | ImageBlock:
    """`images=False` (set_config image_input "unsupported") lists images by path too."""
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = workspace / path
    try:
        if path.stat().st_size > MAX_ATTACHMENT_BYTES:
            raise TooLarge(path, MAX_ATTACHMENT_BYTES)
        data = read_at_most(path, MAX_ATTACHMENT_BYTES)  # a device or pipe reports size 0
    except TooLarge:
        raise AttachmentError(f"attached file is too large: {raw}") from None
    except (FileNotFoundError, IsADirectoryError, PermissionError, NotADirectoryError):
        raise AttachmentError(f"attached file cannot be read: {raw}") from None
    media = IMAGE_TYPES.get(path.suffix.lower())
    if media is not None and images:
        return ImageBlock(media, base64.b64encode(data).decode("ascii"))
    if media is not None or looks_binary(data):
        kind = media or "binary"
        return TextBlock(f'<attached_file path="{path}" type="{kind}" size="{len(data)}" />')
    text = data.decode("utf-8", errors="replace")
    return TextBlock(f'<attached_file path="{path}">\n{text}\n</attached_file>')
