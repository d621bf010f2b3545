"""The binding-reference grammar: `inputs.<name>` or `steps.<id>.<output>`.

A binding is a reference, never a value (seed 003, "Composition and the step
graph"). Step ids contain no dots, so everything after the step id is the
output name.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

_INPUT = re.compile(r"^inputs\.([A-Za-z0-9_][A-Za-z0-9_.-]*)$")
_STEP = re.compile(r"^steps\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_][A-Za-z0-9_.-]*)$")


@dataclass(frozen=True)
class Binding:
    """A parsed reference. `step` is None for an input reference."""

    text: str
    input: str | None = None
    step: str | None = None
    output: str | None = None

    @property
    def is_input(self) -> bool:
        return self.input is not None


def parse_binding(text: object) -> Binding | None:
    """Parse a reference; None when it does not follow the grammar."""
    if not isinstance(text, str):
        return None
    return _parse(text)


# Lint, the graph and the scheduler each parse every step's bindings, and the
# texts repeat across steps; a Binding is frozen, so one may be shared.
@functools.lru_cache(maxsize=8192)
def _parse(text: str) -> Binding | None:
    match = _INPUT.match(text)
    if match:
        return Binding(text, input=match.group(1))
    match = _STEP.match(text)
    if match:
        return Binding(text, step=match.group(1), output=match.group(2))
    return None
