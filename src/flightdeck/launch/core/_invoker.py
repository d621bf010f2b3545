"""The seam between the runtime and whatever executes an action.

`ActionInvoker.invoke(call)` runs one action call and returns its plain JSON
result. The runtime wraps every call with the trust contract (approval,
retries, egress guard, credential binding, redaction, audit), so an invoker
only has to call. `DriverInvoker` (in `launch/_drivers.py`) goes through the SDK
drivers layer; `HandlerInvoker` maps `connector.action` to plain Python
functions, the way tests and hosts embed actions without a DRIVER.md.

An invoker raises `ActionFailed` for a failure of the action itself
(`transient=True` when a retry may succeed); anything else it raises is
treated as a non-transient failure.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.core._secrets import CREDENTIAL_SECRET


@dataclass(frozen=True)
class ActionCall:
    """One call. `credential` is the secret value (never recorded), bound
    from the contract's `credential.kind`, `placement` and `identityLabel`
    (`credential_reference` is its `secret://` reference, None when the
    contract binds nothing); `idempotency_key` is stable across resumes."""

    connector: str
    action: str
    args: Mapping[str, Any]
    credential: str | None = field(default=None, repr=False)
    credential_kind: str | None = None
    identity_label: str | None = None
    idempotency_key: str | None = None
    run_id: str = ""
    step_id: str = ""
    credential_placement: str | None = None
    credential_reference: str | None = None

    @property
    def ref(self) -> str:
        return f"aileron:{self.connector}.{self.action}"

    def credential_context(self) -> dict[str, Any]:
        """The value-free `context.credential` a driver sees (kind `none`:
        nothing bound, no placement, no secret)."""
        bound = self.credential is not None
        return {
            "kind": self.credential_kind or "none",
            "placement": self.credential_placement,
            "identityLabel": self.identity_label,
            "reference": self.credential_reference,
            "secret": CREDENTIAL_SECRET if bound else None,
        }


@dataclass(frozen=True)
class ActionInfo:
    """What audit records about the thing that ran the call."""

    connector_hash: str | None = None
    manifest_version: str | None = None


class ActionFailed(Exception):
    def __init__(self, message: str, *, transient: bool = False, code: str = "action.failed"):
        super().__init__(message)
        self.transient = transient
        self.code = code


@runtime_checkable
class ActionInvoker(Protocol):
    def describe(self, connector: str, action: str) -> ActionInfo:
        """Raise `LaunchError("action.unresolved")` when nothing implements it."""
        ...

    async def invoke(self, call: ActionCall) -> Any: ...


@runtime_checkable
class ProbingInvoker(ActionInvoker, Protocol):
    """An invoker that can say whether it implements an action without
    calling it (what `--verify-credentials` needs to find a probe)."""

    def implements(self, connector: str, action: str) -> bool: ...


Handler = Callable[[ActionCall], Any | Awaitable[Any]]


class HandlerInvoker:
    """Actions as Python functions keyed by `connector.action`. A sync handler
    runs in a worker thread (`asyncio.to_thread`, which carries the egress
    policy along); an async one is awaited."""

    def __init__(self, handlers: Mapping[str, Handler], *, version: str = "0") -> None:
        self.handlers = dict(handlers)
        self.version = version

    def describe(self, connector: str, action: str) -> ActionInfo:
        handler = self.handlers.get(f"{connector}.{action}")
        if handler is None:
            raise LaunchError(
                "action.unresolved", f"no implementation for aileron:{connector}.{action}"
            )
        name = getattr(handler, "__qualname__", repr(handler))
        return ActionInfo(connector_hash=f"handler:{name}", manifest_version=self.version)

    def implements(self, connector: str, action: str) -> bool:
        return f"{connector}.{action}" in self.handlers

    async def invoke(self, call: ActionCall) -> Any:
        handler = self.handlers[f"{call.connector}.{call.action}"]
        if inspect.iscoroutinefunction(handler):
            return await handler(call)
        result = await asyncio.to_thread(handler, call)
        if inspect.isawaitable(result):
            return await result
        return result
