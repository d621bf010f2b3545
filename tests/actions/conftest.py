from __future__ import annotations

from pathlib import Path

import pytest

STANDARD = Path(__file__).resolve().parents[1] / "data" / "corpus" / "libraries" / "standard"


@pytest.fixture
def standard() -> Path:
    return STANDARD


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def action_md(ident: str, version: str = "1.0.0", extra: str = "") -> str:
    head = f"---\nschema: action/v1\nid: {ident}\nversion: {version}\n"
    return head + f"description: test action {ident}\n{extra}---\nbody\n"
