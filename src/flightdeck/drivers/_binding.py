"""What a driver is: the `Driver` protocol every driver implements, and the
`ToolBinding` of each tool it binds (the contract's IO, dropped inputs,
whether it streams, and the compiled validators of the accept path).

A leaf of the package: the seam (`_seam`), the SDK driver (`_sdk`),
registration (`_register`) and resolution (`_resolve`) all import it, and it
imports none of them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from flightdeck.documents import fast_validator
from flightdeck.io import IOHandle
from flightdeck.tools import ToolHandle


def _fast_check(schema: Any) -> Callable[[Any], bool] | None:
    """A compiled jsonschema-rs `is_valid` for the accept path (offline; None when the
    schema does not compile there, which leaves the IOHandle's validator in charge)."""
    if schema is True or schema == {}:
        return _always
    try:
        check: Callable[[Any], bool] = fast_validator(schema).is_valid
        return check
    except Exception:  # a schema only the Python validator handles (or refuses later)
        return None


def _always(value: Any) -> bool:
    return True


@dataclass(frozen=True)
class ToolBinding:
    """One tool as a driver binds it."""

    tool_id: str
    io: IOHandle
    dropped_inputs: frozenset[str] = frozenset()
    streaming: bool = False
    tool: ToolHandle | None = None
    cost_units: float | None = None
    timeout_ms: int | None = None  # the tool's timeout_ms, narrowed by timeout_override_ms
    # jsonschema-rs validators for the common case (valid data): ~0.2 us instead of ~10 us.
    # Anything they reject goes through `IOHandle` for the authoritative verdict and message.
    fast_input: Callable[[Any], bool] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    fast_output: Callable[[Any], bool] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if not self.io.uses_files:  # the fs-root rules live in IOHandle only
            object.__setattr__(self, "fast_input", _fast_check(self.io.inputs))
        object.__setattr__(self, "fast_output", _fast_check(self.io.outputs))


@runtime_checkable
class Driver(Protocol):
    """The narrow seam every driver implements."""

    @property
    def id(self) -> str: ...

    @property
    def kind(self) -> str: ...

    def binding(self, tool_id: str) -> ToolBinding | None: ...

    async def invoke(self, tool_id: str, input: Any, context: Mapping[str, Any]) -> Any: ...

    def invoke_stream(
        self, tool_id: str, input: Any, context: Mapping[str, Any]
    ) -> AsyncIterator[Any]: ...
