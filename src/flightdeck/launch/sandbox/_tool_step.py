"""Run a tool step: an argv with no shell, inside the sandbox.

Bindings are written to `<mount.path>/input.json`; after the command exits 0
the regular files under `collect.path` (symlinks and other special files are
skipped, and reported) become the step output as a file-map:
`[{path, mimeType, encoding, content}]`. Without a working sandbox the step
refuses unless `--no-sandbox` was given; then the command runs directly, with
the mount and collect paths in its argv rewritten to host directories (also
exported as `FLIGHTDECK_MOUNT` / `FLIGHTDECK_COLLECT`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import mimetypes
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from flightdeck.guard import EgressProxy
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.core._services import StepServices
from flightdeck.launch.core._task import StepOutcome, StepTask, split_outputs
from flightdeck.launch.image._fdtree import FILE_FLAGS, TooDeep, remove_path, walk
from flightdeck.launch.sandbox._bwrap import SAFE_PATH, bwrap_argv, bwrap_path
from flightdeck.launch.sandbox._relay import Relay
from flightdeck.launch.sandbox._toolcheck import check_tool_version

DEFAULT_MOUNT = "/flightdeck/in"
DEFAULT_COLLECT = "/flightdeck/out"
# Folders below collect.path that are read; deeper output is refused
# (`tool.output_too_deep`), whatever the tool made.
COLLECT_DEPTH = 64


async def run_tool(task: StepTask, services: StepServices) -> StepOutcome:
    hosts = list(task.step_hosts or [])
    bwrap = None if task.settings.no_sandbox else bwrap_path()
    record: dict[str, Any] = {
        "step": task.step_id,
        "sandbox": "bubblewrap" if bwrap else "none",
        "network": "hosts" if hosts else "none",
        "environment": _environment(task.image, bwrap),
        "allowed_hosts": hosts,
        "allowed_endpoints": [],
        "contacted": [],
    }
    audit = [{"kind": "launch.tool_network", "fields": record}]
    try:
        if bwrap is None and not task.settings.no_sandbox:
            raise LaunchError(
                "tool.no_sandbox",
                "no sandbox is available for this tool step (bubblewrap not found or not usable)",
                hint="install bubblewrap (apt-get install -y bubblewrap), or pass --no-sandbox"
                " to run tool steps unsandboxed (recorded in the audit)",
            )
        proxy = _proxy(hosts)
        record["allowed_endpoints"] = sorted(str(e) for e in proxy.endpoints)
        rootfs = await _image_rootfs(task, record) if task.image and bwrap else None
        command = [str(part) for part in task.step.get("command", [])]
        if command and task.tool_versions:
            inside = (bwrap, rootfs) if bwrap and rootfs else None
            record["tool_version"] = await check_tool_version(
                command[0], task.tool_versions, inside=inside
            )
        # Not TemporaryDirectory: its clean-up recurses per level, and a tool
        # can nest its output deeper than the interpreter's recursion limit.
        scratch = Path(tempfile.mkdtemp(prefix="fd-tool-"))
        try:
            files, skipped = await _execute(task, scratch, bwrap, proxy, rootfs)
        finally:
            record["contacted"] = sorted(set(proxy.contacted))
            record["denied"] = sorted(set(proxy.denied))
            record["decisions"] = [d.to_dict() for d in proxy.decisions]
            with contextlib.suppress(OSError):
                await asyncio.to_thread(remove_path, scratch)
        record["skipped"] = skipped
        refused = next((d for d in proxy.decisions if d.decision != "allowed"), None)
        if refused is not None:
            raise LaunchError(
                "egress_denied",
                f"egress denied: the tool asked {refused.method} {refused.target!r}"
                f" ({refused.reason}); the step's sealed hosts admit"
                f" {', '.join(record['allowed_endpoints']) or 'nothing'}",
            )
        value: Any = files
        names = list(task.step.get("outputs", []))
        outputs = _by_name(names, files) if len(names) > 1 else split_outputs(names, value)
    except LaunchError as exc:
        exc.step = task.step_id
        return StepOutcome.failed(exc.to_dict(), audit)
    return StepOutcome("completed", result=value, outputs=outputs, audit=audit)


def _environment(image: str | None, bwrap: str | None) -> str:
    """What the step ran in, as the audit says it."""
    if image and bwrap:
        return f"image {image}"
    if image:
        return "host, unsandboxed (--no-sandbox): the pinned image is not used"
    return "host tools, versions checked"


def _proxy(hosts: list[str]) -> EgressProxy:
    """The proxy for the sealed hosts; a declaration it could not honour
    exactly is refused before anything runs."""
    for entry in hosts:
        try:
            EgressProxy.check_declared(entry)
        except EgressProxy.BadHost as exc:
            raise LaunchError(
                "egress.bad_host",
                f"the sealed host {entry!r} cannot be honoured: {exc}",
                hint="declare `host` (ports 80 and 443) or `host:port`, e.g. `api.example.com`,"
                " `127.0.0.1:8080`, `[::1]:8443`",
            ) from None
    return EgressProxy(frozenset(hosts))


async def _image_rootfs(task: StepTask, record: dict[str, Any]) -> Path:
    """The pinned image's verified rootfs, pulled into the cache if missing
    (a worker thread: pulling and hashing block)."""
    from flightdeck.launch.image._cache import ImageCache
    from flightdeck.launch.image._pull_limits import configured_limits

    limits = configured_limits(task.settings.workspace)
    image = await asyncio.to_thread(ImageCache().ensure, str(task.image), None, limits)
    record["image"] = {"pinned": image.pinned, "tree": image.tree, "pulled": image.pulled}
    return image.rootfs


async def _execute(
    task: StepTask,
    scratch: Path,
    bwrap: str | None,
    proxy: EgressProxy,
    rootfs: Path | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    mount_path = str(task.step.get("mount", {}).get("path") or DEFAULT_MOUNT)
    collect_path = str(task.step.get("collect", {}).get("path") or DEFAULT_COLLECT)
    host_mount, host_collect = scratch / "mount", scratch / "collect"
    host_mount.mkdir()
    host_collect.mkdir()
    (host_mount / "input.json").write_text(
        json.dumps(task.values, sort_keys=True, ensure_ascii=False), "utf-8"
    )
    command = [str(part) for part in task.step.get("command", [])]
    relay: Relay | None = None
    if bwrap is not None:
        sandbox_env = {"FLIGHTDECK_MOUNT": mount_path, "FLIGHTDECK_COLLECT": collect_path}
        extra: list[tuple[Path, str]] = []
        socket_path = scratch / "egress.sock"
        if proxy.hosts:
            # Network only through the proxy: the sandbox keeps an empty netns.
            url = f"http://127.0.0.1:{EgressProxy.PORT}"
            for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
                sandbox_env[name] = url
            if rootfs is None:  # an image need not have python3: relayed from the host
                extra.append((socket_path, EgressProxy.SOCKET_IN_SANDBOX))
                command = ["python3", "-c", EgressProxy.FORWARDER, *command]
        argv = bwrap_argv(
            bwrap,
            command,
            mount=(host_mount, mount_path),
            collect=(host_collect, collect_path),
            binds=extra,
            env=sandbox_env,
            rootfs=rootfs,
        )
        if proxy.hosts:  # once the argv stands: a refused mount point starts nothing
            relay = Relay(socket_path) if rootfs is not None else None
            await proxy.start(socket_path)
        env = {"PATH": SAFE_PATH}
    else:
        argv = [
            part.replace(mount_path, str(host_mount)).replace(collect_path, str(host_collect))
            for part in command
        ]
        env = {
            "PATH": os.environ.get("PATH", SAFE_PATH),
            "HOME": str(scratch),
            "FLIGHTDECK_MOUNT": str(host_mount),
            "FLIGHTDECK_COLLECT": str(host_collect),
        }
    try:
        await _run(argv, env, cwd=host_collect, timeout=task.settings.tool_timeout, relay=relay)
    finally:
        await proxy.close()
    return _collect(host_collect)


async def _run(
    argv: list[str],
    env: dict[str, str],
    *,
    cwd: Path,
    timeout: float,
    relay: Relay | None = None,
) -> None:
    try:
        process = await asyncio.create_subprocess_exec(
            *(relay.wrap(argv) if relay else argv),
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            pass_fds=relay.pass_fds if relay else (),
        )
    except OSError as exc:
        if relay is not None:
            await relay.stop()
        raise LaunchError("tool.not_found", f"cannot run {argv[0]}: {exc.strerror}") from None
    try:
        if relay is not None:
            await relay.started()
        _, stderr = await asyncio.wait_for(process.communicate(), timeout)
    except (TimeoutError, LaunchError) as exc:
        process.kill()
        await process.wait()
        if isinstance(exc, LaunchError):
            raise
        raise LaunchError("tool.timeout", f"the tool ran longer than {timeout:g}s") from None
    finally:
        if relay is not None:
            await relay.stop()
    if process.returncode != 0:
        tail = stderr.decode("utf-8", "replace").strip()[-600:]
        raise LaunchError("tool.exit", f"the tool exited with status {process.returncode}: {tail}")


def _collect(root: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The regular files under `root` as a file-map, and the other entries'
    paths (links, fifos, sockets never leave the sandbox). Read through
    descriptors, without recursion: a tool's output may be anything."""
    files: list[dict[str, Any]] = []
    skipped: list[str] = []
    try:
        for entry in walk(root, max_depth=COLLECT_DEPTH):
            if stat.S_ISDIR(entry.info.st_mode):
                continue
            if not stat.S_ISREG(entry.info.st_mode):
                skipped.append(entry.relative)
                continue
            fd = os.open(entry.name, FILE_FLAGS, dir_fd=entry.parent_fd)
            with os.fdopen(fd, "rb") as handle:
                data = handle.read()
            try:
                content = data.decode("utf-8")
            except UnicodeDecodeError:
                raise LaunchError(
                    "tool.binary_output",
                    f"{entry.relative} is not UTF-8; v1 materializes utf-8 artifacts only",
                ) from None
            mime = mimetypes.guess_type(entry.name)[0] or "text/plain"
            files.append(
                {"path": entry.relative, "mimeType": mime, "encoding": "utf-8", "content": content}
            )
    except TooDeep:
        raise LaunchError(
            "tool.output_too_deep",
            f"the tool's output nests folders deeper than {COLLECT_DEPTH} levels",
            hint="collect a flatter tree (or an archive of it)",
        ) from None
    except OSError as exc:
        raise LaunchError(
            "tool.output_unreadable", f"cannot read the tool's output: {exc}"
        ) from None
    return files, skipped


def _by_name(names: list[str], files: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in names:
        match = [f for f in files if f["path"] == name or Path(f["path"]).stem == name]
        if not match:
            raise LaunchError(
                "step.outputs", f"the tool did not collect a file for output {name!r}"
            )
        out[name] = match[0]
    return out
