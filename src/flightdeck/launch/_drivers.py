"""`DriverInvoker`: action calls through the SDK drivers layer.

`aileron:<connector>.<action>` resolves to the driver whose `id` is
`<connector>` (searched in `<workspace>/.drivers/*/DRIVER.md`, then in each
configured driver library folder) and its implemented tool `<action>`; the
call goes through `flightdeck.drivers.call_tool`, which validates the TOOL's
inputs and outputs. Drivers are registered where the step runs and cached
per credential.

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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from flightdeck.documents import DocumentKind, load_document
from flightdeck.drivers import DriverCallError, DriverError, SdkDriver, call_tool, load_driver
from flightdeck.launch._errors import LaunchError
from flightdeck.launch._invoker import ActionCall, ActionFailed, ActionInfo
from flightdeck.launch._secrets import CREDENTIAL_SECRET

_TRANSIENT = ("TimeoutError", "ConnectionError", "TransientError", "Timeout")


class DriverInvoker:
    def __init__(self, workspace: Path, libraries: Sequence[Path] = ()) -> None:
        self.workspace = workspace
        self.folders = [workspace / ".drivers", *libraries]
        self._paths: dict[str, Path] | None = None
        self._unreadable: list[Path] = []
        self._drivers: dict[tuple[str, str], SdkDriver] = {}
        self._lock = asyncio.Lock()

    def _index(self) -> dict[str, Path]:
        if self._paths is None:
            self._paths = {}
            for folder in self.folders:
                for file in sorted(folder.glob("*/DRIVER.md")) if folder.is_dir() else ():
                    document = load_document(file, kind=DocumentKind.DRIVER).document
                    driver_id = document.data.get("id") if document else None
                    if isinstance(driver_id, str):
                        self._paths.setdefault(driver_id, file)
                    else:
                        self._unreadable.append(file)
        return self._paths

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
            connector_hash="sha256:" + hashlib.sha256(path.read_bytes()).hexdigest(),
            manifest_version=f"{tool} via {driver}" if tool else driver,
        )

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
            document = load_document(path, kind=DocumentKind.DRIVER).document
            secrets = _placed(connector, _secret_names(document.data if document else {}), call)
            try:
                self._drivers[key] = load_driver(
                    path, workspace=self.workspace, environ={}, secrets=secrets
                )
            except DriverError as exc:
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
