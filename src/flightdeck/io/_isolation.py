"""The isolation layer around a file-contract body (AIP-16 security).

"Bodies MUST treat [_workflowFsRoot] as a scoped scratch directory; reads or
writes outside MUST be denied by the host's isolation layer." In process, the
layer is a `flightdeck.guard` file scope: while the body runs, files may be
read and written under the scratch root only (the interpreter's own files stay
readable, see `guard.interpreter_roots`) and subprocesses are refused. Staging
and syncing are the host's own work and run outside the layer.

Best effort against careless bodies, not a sandbox: C extensions and `ctypes`
open files without audit events, `os.stat` raises none, and threads started
with `threading` do not carry the layer.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from flightdeck.guard import Event, Policy


def isolation_layer(fs_root: Path, unit_id: str) -> Policy:
    """The guard layer a body runs under: its scratch root, nothing else."""
    return Policy.confine_files(
        [fs_root],
        owner=f"io body {unit_id}",
        limit=f"the isolation layer of _workflowFsRoot {fs_root}",
    )


def denial_fields(policy: Policy, event: Event) -> list[dict[str, Any]]:
    """One audit record's fields per refused access of `event` (operation and path)."""
    scope = policy.scope
    outside = scope.outside(event) if scope is not None else ()
    if not outside:  # a subprocess: nothing on disk was touched
        return [{"operation": event.kind, "detail": event.detail}]
    return [
        {
            "operation": access.operation,
            "access": "write" if access.write else "read",
            "path": access.path,
            "resolved": access.resolved,
            "detail": event.detail,
        }
        for access in outside
    ]


def record_denials(policy: Policy, log: Callable[..., None]) -> None:
    """Every refusal, swallowed by the body or not, goes to the audit log."""
    for event in policy.denied:
        for fields in denial_fields(policy, event):
            log("io.access_denied", **fields)
