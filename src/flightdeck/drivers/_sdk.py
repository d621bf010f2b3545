"""`SdkDriver`: a registered in-process driver, one `SdkBinding` per implemented tool.

Per call: render `args_template` (or pass the input as the function's only
argument / as keywords), call the function (sync functions off the event loop,
async ones awaited, async generators iterated), convert the return value to
plain JSON data and apply `result_extract`. Package exceptions become
`driver_call_failed` with the exception type and a message scrubbed of every
secret the driver holds.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flightdeck.drivers._binding import ToolBinding
from flightdeck.drivers._errors import (
    DRIVER_CALL_FAILED,
    EGRESS_DENIED,
    EXTRACT_NO_MATCH,
    OUTPUT_INVALID,
    DriverCallError,
    DriverError,
    scrub,
)
from flightdeck.drivers._extract import Extractor
from flightdeck.drivers._package import ImportReport
from flightdeck.drivers._plain import NotPlain, to_plain
from flightdeck.drivers._refs import ResolvedRef
from flightdeck.drivers._template import ArgsTemplate
from flightdeck.guard import Policy, enter, leave


@dataclass(frozen=True)
class SdkBinding:
    binding: ToolBinding
    ref: ResolvedRef
    args: ArgsTemplate | None
    style: str  # positional | keywords (used when args is None)
    extract: Extractor
    is_async: bool
    is_asyncgen: bool
    pointer: str

    def arguments(self, scope: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        if self.args is not None:
            return self.args.render(scope)
        value = scope["input"]
        if self.style == "keywords" and isinstance(value, Mapping):
            return [], dict(value)
        return [value], {}


@dataclass
class SdkDriver:
    """A registered `kind: sdk` driver (see `load_driver` / `define_driver`)."""

    id: str
    name: str
    version: str
    data: Mapping[str, Any]
    bindings: Mapping[str, SdkBinding]
    import_report: ImportReport | None = None
    path: Path | None = None
    policy_tags: tuple[str, ...] = ()
    region: tuple[str, ...] = ("global",)
    egress: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)
    _secrets: Mapping[str, str] = field(default_factory=dict, repr=False)
    _make_client: Callable[[type, str], Any] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _egress_template: tuple[str, tuple[str, ...], Callable[[], Policy]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    kind: str = "sdk"

    @property
    def key(self) -> str:
        """`id@major`: the stable identity caches and audit records key on."""
        return f"{self.id}@{self.version.split('.')[0]}"

    @property
    def tool_ids(self) -> tuple[str, ...]:
        return tuple(self.bindings)

    def binding(self, tool_id: str) -> ToolBinding | None:
        found = self.bindings.get(tool_id)
        return found.binding if found is not None else None

    def redact(self, text: str) -> str:
        return scrub(text, self._secrets.values())

    # ---- calling ------------------------------------------------------------

    def _function(self, sdk: SdkBinding, context: Mapping[str, Any]) -> Callable[..., Any]:
        identity = context.get("identity")
        if sdk.ref.constructor is None or identity in (None, "default"):
            return sdk.ref.function
        assert self._make_client is not None
        with self._lock:
            client = self._make_client(sdk.ref.constructor, str(identity))
        return sdk.ref.on_client(client)

    def _failed(self, exc: BaseException, sdk: SdkBinding, state: Policy) -> DriverCallError:
        if state.refused_any():
            return self._denied(state, sdk)
        kind = f"{type(exc).__module__}.{type(exc).__qualname__}"
        details: dict[str, Any] = {"exception_type": kind}
        hint = None
        if self._auth_expired(exc):
            details["auth_expired"] = True
            names = ", ".join(self._secrets) or "the driver's credentials"
            hint = f"auth.expiry.detect matched: re-bind {names}"
        return DriverCallError(
            DRIVER_CALL_FAILED,
            f"{sdk.ref.ref} raised {kind}: {self.redact(str(exc))}",
            pointer=sdk.pointer,
            hint=hint,
            details=details,
        )

    def _auth_expired(self, exc: BaseException) -> bool:
        """AIP-30 `auth.expiry.detect: "exception:Name"`: the exception or a base class is Name."""
        auth = self.data.get("auth")
        expiry = auth.get("expiry") if isinstance(auth, Mapping) else None
        detect = expiry.get("detect") if isinstance(expiry, Mapping) else None
        if not isinstance(detect, str) or not detect.startswith("exception:"):
            return False
        name = detect.removeprefix("exception:").strip()
        return any(cls.__name__ == name or cls.__qualname__ == name for cls in type(exc).__mro__)

    def _denied(self, state: Policy, sdk: SdkBinding) -> DriverCallError:
        return DriverCallError(
            EGRESS_DENIED,
            f"{sdk.ref.ref} tried {state.denied[0].detail}, outside network.egress "
            f"({', '.join(self.egress) or 'none declared'})",
            pointer="/network",
            details={"denied": [event.detail for event in state.denied]},
        )

    def _egress_policy(self) -> Policy:
        """The guard layer of one call: `network.egress` is the host allow-list.

        Names only: an IP cannot be attributed to a declared host without
        resolving (base URLs and proxies point SDKs at addresses), so any IP
        passes once egress is declared; with none declared nothing passes.
        Each call gets its own layer (it records what the call was refused),
        stamped with the rules of one built for the driver's current id and egress."""
        built = self._egress_template
        if built is None or built[0] is not self.id or built[1] is not self.egress:
            built = self._egress_stamper()
        return built[2]()

    def _egress_stamper(self) -> tuple[str, tuple[str, ...], Callable[[], Policy]]:
        """Build the template for the current id and egress, and remember its stamper."""
        allowed = ", ".join(self.egress) or "none declared"
        template = Policy.allow_hosts(
            self.egress,
            owner=f"driver {self.id}",
            limit=f"network.egress ({allowed})",
            names_only=True,
        )
        built = self._egress_template = (self.id, self.egress, template.stamper())
        return built

    def _finish(self, value: Any, sdk: SdkBinding) -> Any:
        try:
            plain = to_plain(value)
        except NotPlain as exc:
            raise _not_plain(exc, sdk) from None
        try:
            return sdk.extract.apply(plain)
        except DriverError as exc:
            exc.message = self.redact(exc.message)
            raise

    def _redacted(self, exc: DriverError) -> DriverError:
        exc.message = self.redact(exc.message)
        return exc

    def _prepare(
        self, sdk: SdkBinding, input: Any, context: Mapping[str, Any]
    ) -> tuple[list[Any], dict[str, Any], Callable[..., Any], Policy]:
        """Arguments from the template, the function (or bound method) to call,
        and the guard layer of this call."""
        scope = {"input": input, "secrets": self._secrets, "context": context}
        template = sdk.args
        try:  # the template's `render` asked directly when there is one (one call less)
            args, kwargs = sdk.arguments(scope) if template is None else template.render(scope)
        except DriverError as exc:
            raise self._redacted(exc) from None
        ref = sdk.ref
        function = ref.function if ref.constructor is None else self._function(sdk, context)
        return args, kwargs, function, self._egress_policy()

    async def invoke(self, tool_id: str, input: Any, context: Mapping[str, Any]) -> Any:
        """Template, call, extract (the host validated the input; see `call_tool`)."""
        sdk = self.bindings[tool_id]
        if sdk.binding.streaming:
            chunks = [c async for c in self.invoke_stream(tool_id, input, context)]
            return "".join(chunks) if all(isinstance(c, str) for c in chunks) else chunks
        args, kwargs, function, state = self._prepare(sdk, input, context)
        with _Guarded(self, state, sdk):
            if sdk.is_async:
                result = await function(*args, **kwargs)
            else:  # to_thread copies the context: the guard follows the call
                result = await asyncio.to_thread(function, *args, **kwargs)
                if inspect.isawaitable(result):
                    result = await result
        return self._finish(result, sdk)

    def invoke_sync(self, tool_id: str, input: Any, context: Mapping[str, Any]) -> Any:
        """The same pipeline for a synchronous caller outside an event loop; the function
        runs in the calling thread (async functions are refused: use `invoke`)."""
        sdk = self.bindings[tool_id]
        if sdk.is_async or sdk.binding.streaming:
            return asyncio.run(self.invoke(tool_id, input, context))
        # `_prepare`, `_Guarded` and `_finish` written out (the same steps in the same
        # order): this path's per-call cost has a budget (issue 14), and each Python call
        # here is ~0.1 us of it
        template = sdk.args
        picked = None if template is None else template.pick(input)
        args: list[Any]
        if picked is not None:
            args, kwargs = [], picked
        else:
            scope = {"input": input, "secrets": self._secrets, "context": context}
            try:
                args, kwargs = sdk.arguments(scope) if template is None else template.render(scope)
            except DriverError as exc:
                raise self._redacted(exc) from None
        ref = sdk.ref
        function = ref.function if ref.constructor is None else self._function(sdk, context)
        built = self._egress_template
        if built is None or built[0] is not self.id or built[1] is not self.egress:
            built = self._egress_stamper()
        state = built[2]()
        token = enter(state)
        try:
            result = function(*args, **kwargs)
        except Exception as exc:
            try:
                error = self._failed(exc, sdk, state)
            finally:
                leave(token)
            raise error from None
        except BaseException:  # cancellation, exit: on as it is
            leave(token)
            raise
        leave(token)
        if state.refused_any():  # the package swallowed the refusal
            raise self._denied(state, sdk)
        return self._finish(result, sdk)

    async def invoke_stream(
        self, tool_id: str, input: Any, context: Mapping[str, Any]
    ) -> AsyncIterator[Any]:
        """Yield `result_extract` of each chunk. Chunks the path does not match, or where
        a singular path finds null, are skipped (stream deltas often omit fields); a
        stream where no chunk matched is `extract_no_match`. The package's generator is
        closed however this ends."""
        sdk = self.bindings[tool_id]
        args, kwargs, function, state = self._prepare(sdk, input, context)
        with _Guarded(self, state, sdk):
            produced = function(*args, **kwargs)
            if inspect.isawaitable(produced):
                produced = await produced
        if not hasattr(produced, "__aiter__"):
            yield self._finish(produced, sdk)
            return
        matched = 0
        iterator = produced.__aiter__()
        try:
            while True:
                token = enter(state)  # each step of the stream, in the consumer's context
                try:
                    chunk = await iterator.__anext__()
                except StopAsyncIteration:
                    break
                except Exception as exc:
                    raise self._failed(exc, sdk, state) from None
                finally:
                    leave(token)
                if state.refused_any():
                    raise self._denied(state, sdk)
                try:
                    plain = to_plain(chunk)
                except NotPlain as exc:
                    raise DriverCallError(
                        OUTPUT_INVALID,
                        f"chunk {exc}; chunks must be JSON data",
                        pointer=sdk.pointer,
                    ) from None
                found = sdk.extract.matches(plain)
                if not found or (sdk.extract.singular and found[0] is None):
                    continue  # this chunk carries nothing at the path (e.g. a role-only delta)
                matched += 1
                yield found[0] if sdk.extract.singular else found
        finally:
            await _close(produced)
        if matched == 0 and not sdk.extract.identity:
            raise DriverCallError(
                EXTRACT_NO_MATCH,
                f"result_extract {sdk.extract.path!r} matched no chunk of the stream",
                pointer=sdk.extract.pointer,
            )

    def describe(self) -> dict[str, Any]:
        """Plain data for `flightdeck drivers show` and `--verbose`."""
        report = self.import_report
        return {
            "id": self.id,
            "key": self.key,
            "name": self.name,
            "kind": self.kind,
            "package": self.data.get("package"),
            "package_manager": self.data.get("package_manager"),
            "path": str(self.path) if self.path else None,
            "policy_tags": list(self.policy_tags),
            "region": list(self.region),
            "egress": list(self.egress),
            "import": None
            if report is None
            else {
                "module": report.module_name,
                "seconds": round(report.seconds, 6),
                "cached": report.cached,
            },
            "tools": {
                tid: {
                    "function_ref": b.ref.ref,
                    "streaming": b.binding.streaming,
                    "dropped_inputs": sorted(b.binding.dropped_inputs),
                    "result_extract": b.extract.path,
                }
                for tid, b in self.bindings.items()
            },
            "notes": list(self.notes),
        }


def _not_plain(exc: NotPlain, sdk: SdkBinding) -> DriverCallError:
    return DriverCallError(
        OUTPUT_INVALID,
        f"{sdk.ref.ref} returned {exc}; the output must be JSON data",
        pointer=sdk.pointer,
    )


class _Guarded:
    """Run the package's code under the call's guard layer; its exceptions become
    `driver_call_failed`, a swallowed refusal `egress_denied`. A class rather than a
    `@contextmanager` generator, since it is entered on every call (~1.5 us less)."""

    __slots__ = ("driver", "sdk", "state", "token")

    def __init__(self, driver: SdkDriver, state: Policy, sdk: SdkBinding) -> None:
        self.driver, self.state, self.sdk = driver, state, sdk

    def __enter__(self) -> None:
        self.token = enter(self.state)

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        error = None
        try:
            if isinstance(exc, Exception):
                error = self.driver._failed(exc, self.sdk, self.state)
        finally:
            leave(self.token)
        if error is not None:
            raise error from None
        if exc is None and self.state.refused_any():  # the package swallowed the refusal
            raise self.driver._denied(self.state, self.sdk)
        # Otherwise a BaseException (cancellation, exit) goes on as it is.


async def _close(produced: Any) -> None:
    closer = getattr(produced, "aclose", None) or getattr(produced, "close", None)
    if closer is None:
        return
    result = closer()
    if inspect.isawaitable(result):
        await result
