"""`DriverInvoker`: action calls through the SDK drivers layer.

`aileron:<connector>.<action>` resolves to the driver whose `id` is
`<connector>` (searched in `<workspace>/.drivers/*/DRIVER.md`, then in each
configured driver library folder) and its implemented tool `<action>`; the
call goes through `flightdeck.drivers.call_tool`, which validates the TOOL's
inputs and outputs. The credential bound by the trust contract is handed to
the driver as the value of every secret its `auth.state.env` names. Drivers
are registered where the step runs and cached per credential.
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

    def _driver(self, connector: str, call: ActionCall) -> SdkDriver:
        fingerprint = hashlib.sha256((call.credential or "").encode()).hexdigest()
        key = (connector, fingerprint)
        if key not in self._drivers:
            path = self._path(connector)
            document = load_document(path, kind=DocumentKind.DRIVER).document
            names = _secret_names(document.data if document else {})
            secrets = {name: call.credential for name in names if call.credential is not None}
            try:
                self._drivers[key] = load_driver(path, workspace=self.workspace, secrets=secrets)
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


def _secret_names(data: dict[str, Any]) -> list[str]:
    auth = data.get("auth")
    state = auth.get("state") if isinstance(auth, dict) else None
    env = state.get("env") if isinstance(state, dict) else None
    return [str(name) for name in env] if isinstance(env, list) else []
