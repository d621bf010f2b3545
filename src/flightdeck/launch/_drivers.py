"""`DriverInvoker`: action calls through the SDK drivers layer.

`aileron:<connector>.<action>` resolves to the driver whose `id` is
`<connector>` (searched in `<workspace>/.drivers/*/DRIVER.md`, then in each
configured driver library folder) and its implemented tool `<action>`; the
call goes through `flightdeck.drivers.call_tool`, which validates the TOOL's
inputs and outputs. Drivers are registered where the step runs and cached
per credential.

Code pins: `pin` is the freeze-time resolver (a `flightplan.CodeResolver`):
it records where the driver was and its code digest. `check_pins` is the
launch gate: each pinned driver is taken from its recorded location (not
searched by id), its digest recomputed and compared, and the comparison is
made again just before the driver's package is imported. The audit's
`connector-hash` is the code digest.

Credential placement for an in-process driver: the runtime grants nothing
undeclared, so a driver registered here reads no secret from the process
environment; its secrets are exactly the credential the trust contract bound.
That value goes under `FLIGHTDECK_CREDENTIAL` when the driver declares that
name in `auth.state.env` (templates use `${secrets.FLIGHTDECK_CREDENTIAL}`),
otherwise under every name it declares (a single-secret driver needs no
change). Every call's `context.credential` is `{kind, placement,
identityLabel, reference, secret}` without the value, so a template can
place it (`${context.credential.placement}`). A contract that binds a
credential to a driver declaring no secret at all fails before the call
(`credential.unplaceable`): the credential would silently go nowhere.
"""

from __future__ import annotations

import asyncio
import hashlib
import os.path
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from flightdeck.documents import Diagnostic, DocumentKind, load_document
from flightdeck.drivers import (
    CodeDigestError,
    DriverCallError,
    DriverError,
    SdkDriver,
    call_tool,
    driver_code,
    load_driver,
)
from flightdeck.flightplan import CodePin, FlightPlan
from flightdeck.launch._driver_index import DriverIndex
from flightdeck.launch._pins import changed, compare, digest_for_freeze, pin_for, refused
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.core._invoker import ActionCall, ActionFailed, ActionInfo
from flightdeck.launch.core._secrets import CREDENTIAL_SECRET

_TRANSIENT = ("TimeoutError", "ConnectionError", "TransientError", "Timeout")


class DriverInvoker(DriverIndex):
    def __init__(self, workspace: Path, libraries: Sequence[Path] = ()) -> None:
        super().__init__(workspace, libraries)
        self._drivers: dict[tuple[str, str], SdkDriver] = {}
        self._lock = asyncio.Lock()
        self._pins: dict[str, CodePin] = {}  # driver id -> the pin checked at launch
        self._digests: dict[str, str] = {}  # driver id -> code digest (audit)

    def pin(self, connector: str, action: str) -> CodePin | None:
        """The code pin freeze records for `aileron:<connector>.<action>`, or
        None when no driver with that id implements that tool."""
        path = self._index().get(connector)
        if path is None:
            return None
        document = load_document(path, kind=DocumentKind.DRIVER).document
        tool = _tool_version(path.parent, document.data if document else {}, action)
        if tool is None:
            return None
        root, location = self._located(path)
        code = digest_for_freeze(path, self.workspace)
        return pin_for(connector, tool.rpartition("@")[0], root, location, code)

    def check_plan(self, plan: FlightPlan) -> list[Diagnostic]:
        """What `lint --workspace` reports: steps whose driver, tool, args or
        outputs launch would refuse (freeze refuses on them too)."""
        from flightdeck.launch._preflight import check_actions

        return check_actions(plan, self.workspace, self.folders[1:])

    def _located(self, path: Path) -> tuple[str, str]:
        for index, folder in enumerate(self.folders):
            if path.is_relative_to(folder):
                base = self.workspace if index == 0 else folder
                relative = Path(os.path.relpath(path, base)).as_posix()
                return ("workspace" if index == 0 else "library"), relative
        return "workspace", Path(os.path.relpath(path, self.workspace)).as_posix()

    def _pinned_file(self, pin: CodePin) -> Path | None:
        location = PurePosixPath(pin.location)
        if location.is_absolute():
            return None
        bases = [self.workspace] if pin.root == "workspace" else self.folders[1:]
        for base in bases:
            if (base / location).is_file():
                return base / location
        return None

    def check_pins(self, pins: Sequence[CodePin]) -> None:
        """Refuse (`launch.code_changed`) unless every pinned driver is at its
        recorded location with the recorded code; then use exactly those."""
        for pin in pins:
            file = self._pinned_file(pin)
            if file is None:
                where = self.workspace if pin.root == "workspace" else "the driver libraries"
                raise refused(pin, f"its DRIVER.md is not in {where}")
            difference = changed(pin, file, self.workspace)
            if difference is not None:
                raise refused(pin, difference)
            self._pins[pin.driver] = pin
            self._digests[pin.driver] = pin.digest
            self._index()[pin.driver] = file

    def _path(self, connector: str) -> Path:
        path = self._index().get(connector)
        if path is None:
            where = ", ".join(str(folder) for folder in self.folders)
            hint = "add <workspace>/.drivers/<name>/DRIVER.md with that id, or --workspace"
            if self._unreadable:
                broken = ", ".join(str(file) for file in self._unreadable)
                hint += f"; these could not be read (flightdeck validate them): {broken}"
            raise LaunchError(
                "action.unresolved", f"no driver with id {connector!r} in {where}", hint=hint
            )
        return path

    def describe(self, connector: str, action: str) -> ActionInfo:
        path = self._path(connector)
        document = load_document(path, kind=DocumentKind.DRIVER).document
        data = document.data if document else {}
        driver = f"{data.get('id')}@{data.get('version')}"
        tool = _tool_version(path.parent, data, action)
        return ActionInfo(
            connector_hash=self._code_digest(connector, path),
            manifest_version=f"{tool} via {driver}" if tool else driver,
        )

    def _code_digest(self, connector: str, path: Path) -> str:
        if connector not in self._digests:
            try:
                self._digests[connector] = driver_code(path, self.workspace).digest
            except CodeDigestError:  # unpinned and undigestable: the DRIVER.md alone
                self._digests[connector] = "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
        return self._digests[connector]

    def implements(self, connector: str, action: str) -> bool:
        """Whether the driver for `connector` binds a TOOL.md for `action`
        (read from the DRIVER.md; nothing is imported)."""
        path = self._index().get(connector)
        if path is None:
            return False
        document = load_document(path, kind=DocumentKind.DRIVER).document
        return _tool_version(path.parent, document.data if document else {}, action) is not None

    def _driver(self, connector: str, call: ActionCall) -> SdkDriver:
        fingerprint = hashlib.sha256((call.credential or "").encode()).hexdigest()
        key = (connector, fingerprint)
        if key not in self._drivers:
            path = self._path(connector)
            pin = self._pins.get(connector)
            code = None
            if pin is not None:
                # Checked again right before the import: the code may have
                # been edited while earlier steps ran. The import then reads
                # only the files this check digested, with those bytes.
                code, difference = compare(pin, path, self.workspace)
                if difference is not None:
                    raise refused(pin, difference)
            document = load_document(path, kind=DocumentKind.DRIVER).document
            secrets = _placed(connector, _secret_names(document.data if document else {}), call)
            try:
                self._drivers[key] = load_driver(
                    path, workspace=self.workspace, environ={}, secrets=secrets, code=code
                )
            except DriverError as exc:
                if pin is not None and exc.code == "package_code_unpinned":
                    raise refused(pin, exc.message) from None
                raise LaunchError(
                    "action.driver_refused", f"driver {connector} was refused: {exc.message}"
                ) from None
        return self._drivers[key]

    async def invoke(self, call: ActionCall) -> Any:
        async with self._lock:  # registration imports packages: once, not concurrently
            driver = await asyncio.to_thread(self._driver, call.connector, call)
        tool = tool_id(driver, call.action)
        context = {
            "workspace": str(self.workspace),
            "run_id": call.run_id,
            "step_id": call.step_id,
            "identity": call.identity_label or "default",
            "idempotency_key": call.idempotency_key or "",
            "credential": call.credential_context(),
        }
        try:
            result = await call_tool(tool, dict(call.args), driver=driver, context=context)
        except DriverCallError as exc:
            kind = str(exc.details.get("exception_type", ""))
            transient = any(kind.endswith(name) for name in _TRANSIENT)
            raise ActionFailed(exc.message, transient=transient, code=exc.code) from None
        return result.output


def tool_id(driver: SdkDriver, action: str) -> str:
    """The implemented tool for `action`: its exact id, else the id with `_`
    written `-` (TOOL ids allow no underscores; action refs do)."""
    for candidate in dict.fromkeys((action, action.replace("_", "-"))):
        if driver.binding(candidate) is not None:
            return candidate
    raise LaunchError("action.unresolved", f"driver {driver.id} does not implement tool {action!r}")


def _tool_version(folder: Path, data: dict[str, Any], action: str) -> str | None:
    """`<tool id>@<version>` of the TOOL.md the driver implements for `action`."""
    wanted = {action, action.replace("_", "-")}
    for entry in data.get("implements", []):
        ref = entry.get("tool") if isinstance(entry, dict) else None
        if not isinstance(ref, str) or not ref.endswith(".md"):
            continue
        tool = load_document(folder / ref, kind=DocumentKind.TOOL).document
        if tool is not None and tool.data.get("id") in wanted:
            return f"{tool.data.get('id')}@{tool.data.get('version')}"
    return None


def _placed(connector: str, names: list[str], call: ActionCall) -> dict[str, str]:
    """The driver's secrets: the bound credential under its documented name,
    else under every declared name; nothing when the contract binds none."""
    if call.credential is None:
        return {}
    if CREDENTIAL_SECRET in names:
        return {CREDENTIAL_SECRET: call.credential}
    if not names:
        raise LaunchError(
            "credential.unplaceable",
            f"the contract binds a {call.credential_kind} credential"
            f" ({call.credential_reference}) but driver {connector} declares no secret to"
            " receive it",
            hint=f"declare {CREDENTIAL_SECRET} under auth.state.env in its DRIVER.md and use"
            f" ${{secrets.{CREDENTIAL_SECRET}}} where the SDK takes the credential",
        )
    return {name: call.credential for name in names}


def _secret_names(data: dict[str, Any]) -> list[str]:
    auth = data.get("auth")
    state = auth.get("state") if isinstance(auth, dict) else None
    env = state.get("env") if isinstance(state, dict) else None
    return [str(name) for name in env] if isinstance(env, list) else []
