"""The file-contract host: runs a body under AIP-16's eight-step lifecycle.

    1 run start            (token values checked: they may not add path segments)
    2 scratch root          a fresh 0700 directory per run
    3 stage inputsFiles     workspace:<path> -> <fsRoot>/<key>; missing -> error, no run
    4 inject _workflowFsRoot overwriting any caller value, then validate the input
    5 body                  sync or async, under the isolation layer (`_isolation`):
                            files outside <fsRoot> and subprocesses refused
    6 sync outputsFiles     <fsRoot>/<key> -> workspace:<interpolated path>
                            missing -> warning; write failure -> warning (run not failed)
    7 remove scratch root   best effort
    8 run end               a RunResult with output, warnings and the file records

Every staged read and synced write is recorded through `flightdeck.audit`, and
so is every access the isolation layer refused (`io.access_denied`).
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import os
import shutil
import tempfile
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from flightdeck.audit import AuditRecord, AuditSink, default_sink
from flightdeck.documents import Diagnostic, Severity
from flightdeck.guard import active
from flightdeck.io._define import FS_ROOT_KEY, IOHandle
from flightdeck.io._errors import FileContractError
from flightdeck.io._isolation import isolation_layer, record_denials
from flightdeck.io._paths import confine, confine_target, interpolate, unsafe_token_value
from flightdeck.io._result import Err

Body = Callable[[dict[str, Any]], Any]


@dataclass(frozen=True)
class FileRecord:
    """One staged or synced file: what the audit log also holds."""

    key: str
    path: str  # workspace-relative, after interpolation
    bytes: int
    sha256: str


@dataclass(frozen=True)
class RunResult:
    run_id: str
    output: Any
    staged: tuple[FileRecord, ...] = ()
    synced: tuple[FileRecord, ...] = ()
    warnings: tuple[Diagnostic, ...] = ()


@dataclass
class _Run:
    io: IOHandle
    workspace: Path
    run_id: str
    unit_id: str
    audit: AuditSink
    clock: Callable[[], datetime]
    fs_root: Path | None = None
    staged: list[FileRecord] = field(default_factory=list)
    synced: list[FileRecord] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)

    def tokens(self) -> dict[str, str]:
        date = self.clock().astimezone(UTC).strftime("%Y-%m-%d")
        return {
            "runId": self.run_id,
            "workflowId": self.unit_id,
            "toolId": self.unit_id,
            "isoDate": date,
        }

    def log(self, kind: str, **fields: Any) -> None:
        self.audit.record(AuditRecord(kind, self.run_id, {"unit_id": self.unit_id, **fields}))

    def fail(
        self, code: str, message: str, *, started: bool = False, **where: Any
    ) -> FileContractError:
        # Refused: the body never ran. Failed: it ran and the run did not complete.
        kind = "io.run_failed" if started else "io.run_refused"
        self.log(kind, code=code, message=message, **where)
        return FileContractError(code, message, run_id=self.run_id, started=started, **where)

    def warn(self, code: str, message: str, key: str, kind: str, **fields: Any) -> None:
        pointer = f"/outputsFiles/{key}"
        self.warnings.append(Diagnostic(code, message, Severity.WARNING, pointer=pointer))
        self.log(kind, key=key, code=code, message=message, **fields)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _start(run: _Run) -> None:
    for name, value in (("run id", run.run_id), ("unit id", run.unit_id)):
        problem = unsafe_token_value(value)
        if problem is not None:
            raise run.fail("io.unsafe_token_value", f"{name} {problem}")
    # mkdtemp creates the directory with mode 0700 and a unique name, even for a reused run id.
    root = Path(tempfile.mkdtemp(prefix=f"fd-{run.run_id[:40]}-"))
    os.chmod(root, 0o700)
    run.fs_root = root


def _stage(run: _Run) -> None:
    assert run.fs_root is not None
    tokens = run.tokens()
    for key, entry in run.io.inputs_files.items():
        rel = interpolate(entry.path, tokens)
        try:
            source = confine(run.workspace, rel)
        except ValueError as exc:
            raise run.fail("io.path_escapes_workspace", str(exc), key=key, path=rel) from None
        if not source.is_file():
            raise run.fail(
                "io.input_file_missing",
                f"inputsFiles.{key}: workspace file {rel!r} does not exist",
                key=key,
                path=rel,
            )
        data = source.read_bytes()
        (run.fs_root / key).write_bytes(data)
        record = FileRecord(key, rel, len(data), _digest(data))
        run.staged.append(record)
        run.log("io.stage", key=key, path=rel, bytes=record.bytes, sha256=record.sha256)


def _prepare_input(run: _Run, value: Any) -> dict[str, Any]:
    candidate: Any = value
    if run.io.uses_files:
        if not isinstance(value, Mapping):
            raise run.fail("io.input_invalid", "input must be an object to carry _workflowFsRoot")
        # The host's value always wins over anything the caller supplied.
        candidate = {**value, FS_ROOT_KEY: str(run.fs_root)}
    checked = run.io.validate_input(candidate)
    if isinstance(checked, Err):
        raise run.fail("io.input_invalid", checked.error)
    return candidate  # type: ignore[no-any-return]


def _write_atomically(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".fd-sync-", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _sync(run: _Run) -> None:
    assert run.fs_root is not None
    tokens = run.tokens()
    for key, entry in run.io.outputs_files.items():
        produced = run.fs_root / key
        if not produced.is_file():
            run.warn(
                "io.output_missing",
                f"outputsFiles.{key} was declared but the body did not produce it",
                key,
                "io.output_missing",
            )
            continue
        rel = interpolate(entry.path, tokens)
        try:
            # os.replace in the real parent swaps a planted symlink instead of following it.
            target = confine_target(run.workspace, rel)
            data = produced.read_bytes()
            _write_atomically(target, data)
        except ValueError as exc:
            run.warn("io.path_escapes_workspace", str(exc), key, "io.sync_refused", path=rel)
            continue
        except OSError as exc:
            run.warn("io.sync_failed", f"sync of {rel!r} failed: {exc}", key, "io.sync_failed")
            continue
        record = FileRecord(key, rel, len(data), _digest(data))
        run.synced.append(record)
        run.log("io.sync", key=key, path=rel, bytes=record.bytes, sha256=record.sha256)


def _check_output(run: _Run, output: Any) -> None:
    checked = run.io.validate_output(output)
    if isinstance(checked, Err):
        raise run.fail("io.output_invalid", checked.error, started=True)


def _cleanup(run: _Run) -> None:
    if run.fs_root is not None:
        shutil.rmtree(run.fs_root, ignore_errors=True)


def _new_run(
    io: IOHandle,
    workspace: str | Path,
    run_id: str | None,
    unit_id: str,
    audit: AuditSink | None,
    clock: Callable[[], datetime] | None,
) -> _Run:
    return _Run(
        io=io,
        workspace=Path(workspace),
        run_id=run_id or uuid.uuid4().hex,
        unit_id=unit_id,
        audit=audit if audit is not None else default_sink(),
        clock=clock or (lambda: datetime.now(UTC)),
    )


def _result(run: _Run, output: Any) -> RunResult:
    return RunResult(run.run_id, output, tuple(run.staged), tuple(run.synced), tuple(run.warnings))


def _begin(run: _Run, value: Any) -> dict[str, Any]:
    """Steps 1-4: start, scratch root, staging, injection and input validation."""
    _start(run)
    _stage(run)
    return _prepare_input(run, value)


def _end(run: _Run, output: Any) -> RunResult:
    """Steps 5 (output check) and 6 (sync); step 7 is the caller's `finally`."""
    _check_output(run, output)
    _sync(run)
    return _result(run, output)


def _body_failed(run: _Run, exc: Exception) -> FileContractError:
    return run.fail("io.body_failed", f"{type(exc).__name__}: {exc}", started=True)


async def arun_with_file_contract(
    io: IOHandle,
    body: Callable[[dict[str, Any]], Any | Awaitable[Any]],
    input: Any,
    *,
    workspace: str | Path,
    unit_id: str,
    run_id: str | None = None,
    audit: AuditSink | None = None,
    clock: Callable[[], datetime] | None = None,
) -> RunResult:
    """Async variant of `run_with_file_contract`; the body may be sync or async."""
    run = _new_run(io, workspace, run_id, unit_id, audit, clock)
    try:
        value = _begin(run, input)
        assert run.fs_root is not None
        layer = isolation_layer(run.fs_root, run.unit_id)
        try:
            with active(layer):  # the body's task (and its tasks, to_thread calls)
                output = body(value)
                if inspect.isawaitable(output):
                    output = await output
        except Exception as exc:
            record_denials(layer, run.log)
            raise _body_failed(run, exc) from exc
        record_denials(layer, run.log)
        return _end(run, output)
    finally:
        _cleanup(run)


def run_with_file_contract(
    io: IOHandle,
    body: Callable[[dict[str, Any]], Any | Awaitable[Any]],
    input: Any,
    *,
    workspace: str | Path,
    unit_id: str,
    run_id: str | None = None,
    audit: AuditSink | None = None,
    clock: Callable[[], datetime] | None = None,
) -> RunResult:
    """Run `body` under the file contract and return its `RunResult`.

    A coroutine body is driven with `asyncio.run` (call `arun_with_file_contract`
    from inside an event loop). Raises `FileContractError` when the run cannot
    start (missing input file, unsafe path, invalid input) or the body fails.
    """
    run = _new_run(io, workspace, run_id, unit_id, audit, clock)
    try:
        value = _begin(run, input)
        output = _run_body(run, body, value)
        return _end(run, output)
    finally:
        _cleanup(run)


class _LoopRunning(Exception):
    """An async body met a running event loop; reported once outside the layer."""


def _run_body(run: _Run, body: Body, value: dict[str, Any]) -> Any:
    """Step 5 for the sync host: the body (driven if async) under the isolation layer."""
    assert run.fs_root is not None
    layer = isolation_layer(run.fs_root, run.unit_id)
    try:
        with active(layer):  # asyncio.run copies the context: an async body is confined too
            output = body(value)
            if inspect.isawaitable(output):
                output = _drive(output)
    except Exception as exc:
        # audit writes happen here, outside the layer, like staging and syncing
        record_denials(layer, run.log)
        if isinstance(exc, _LoopRunning):
            raise run.fail(
                "io.event_loop_running",
                "an async body cannot be driven from inside a running event loop: "
                "await arun_with_file_contract(...) instead",
            ) from None
        if isinstance(exc, FileContractError):
            raise
        raise _body_failed(run, exc) from exc
    record_denials(layer, run.log)
    return output


async def _await(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def _drive(awaitable: Awaitable[Any]) -> Any:
    """Run an async body's awaitable to completion from synchronous code."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await(awaitable))
    if inspect.iscoroutine(awaitable):
        awaitable.close()  # never awaited: close it so Python does not warn
    raise _LoopRunning
