"""`Ok(value)` / `Err(error)`: the two outcomes of `IOHandle.validate_input`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class Ok:
    value: Any
    ok: Literal[True] = True


@dataclass(frozen=True)
class Err:
    error: str
    ok: Literal[False] = False


ValidationResult = Ok | Err
