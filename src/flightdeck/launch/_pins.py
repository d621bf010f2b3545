"""Code pins: computed at freeze, re-checked before a launch runs anything.

`pin_for` builds the `CodePin` freeze records for one driver; `changed`
compares a recorded pin with what launch would import now and names the
first difference; `check_code` is the launch gate (`launch.code_changed`),
run before inputs are resolved, probes are made or a run is recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from flightdeck._json import read_json
from flightdeck.drivers import CodeDigest, CodeDigestError, driver_code, record_mismatch
from flightdeck.flightplan import CodePin, FlightPlan, FlightPlanError, action_refs, locate_plan
from flightdeck.launch.core._errors import LaunchError

UNPINNED = "code not pinned: the plan was frozen without code digests (re-freeze to pin)"


@runtime_checkable
class PinningInvoker(Protocol):
    """An invoker that can check recorded code pins before anything runs."""

    def check_pins(self, pins: Sequence[CodePin]) -> None: ...


def digest_for_freeze(file: Path, workspace: Path) -> CodeDigest:
    try:
        return driver_code(file, workspace)
    except CodeDigestError as exc:
        raise FlightPlanError(
            "freeze.code_unpinnable",
            f"the code of {file} cannot be pinned: {exc.message}",
            hint="replace symbolic links by the files, or install the driver's package",
            where=exc.path or str(file),
        ) from None


def pin_for(driver: str, tool: str, root: str, location: str, code: CodeDigest) -> CodePin:
    return CodePin(
        driver=driver,
        tools=(tool,),
        root=root,
        location=location,
        digest=code.digest,
        files=dict(code.files),
        distribution=code.distribution,
        version=code.version,
    )


def changed(pin: CodePin, file: Path, workspace: Path) -> str | None:
    """None when the code behind `pin` is what was frozen; else what changed,
    naming the first changed, added or removed file."""
    return compare(pin, file, workspace)[1]


def compare(pin: CodePin, file: Path, workspace: Path) -> tuple[CodeDigest | None, str | None]:
    """The code digest now (None when it cannot be computed), and what
    differs from `pin` (None when nothing does)."""
    try:
        now = driver_code(file, workspace)
    except CodeDigestError as exc:
        return None, exc.message
    return now, _difference(pin, now)


def _difference(pin: CodePin, now: CodeDigest) -> str | None:
    if now.digest == pin.digest:
        return None
    for name in sorted({*pin.files, *now.files}, key=lambda n: n.encode("utf-8")):
        if name not in now.files:
            return f"file {name} was removed"
        if name not in pin.files:
            return f"file {name} was added"
        if now.files[name] != pin.files[name]:
            return f"file {name} changed"
    if pin.distribution is not None:
        if (now.distribution, now.version) != (pin.distribution, pin.version):
            return (
                f"distribution {pin.distribution} {pin.version} is now"
                f" {now.distribution} {now.version}"
            )
        tampered = record_mismatch(pin.distribution)
        if tampered is not None:
            return f"installed file {tampered} of {pin.distribution} changed"
        return f"the installed files of {pin.distribution} {pin.version} changed"
    return "its code digest differs"  # unreachable with an honest lock: the files say it


def refused(pin: CodePin, what: str) -> LaunchError:
    return LaunchError(
        "launch.code_changed",
        f"driver {pin.driver} ({pin.root} {pin.location}) is not the code frozen in the plan:"
        f" {what}",
        hint="restore the driver's code, or re-freeze the plan to pin the new code;"
        " --workspace DIR names the workspace the plan was frozen in",
    )


def check_code(plan: FlightPlan, invoker: object) -> dict[str, Any]:
    """Check the plan's code pins with the invoker; the audit fields to add
    to the run record (`code_pins`, or `code_pinned: false` with a warning)."""
    if not action_refs(plan):
        return {}
    pins = plan.lock.code_pins if plan.lock is not None else ()
    if not pins:
        return {"code_pinned": False, "warning": UNPINNED}
    if not isinstance(invoker, PinningInvoker):
        # A host that brings its own invoker decides what code runs.
        return {
            "code_pinned": False,
            "warning": "code not pinned: this runtime's action invoker does not check pins",
        }
    invoker.check_pins(pins)
    return {"code_pinned": True, "code_pins": {pin.driver: pin.digest for pin in pins}}


def frozen_workspace(target: str | Path | None, resume: str | None = None) -> Path | None:
    """The workspace a stored plan (or the plan of run `resume`) was frozen in
    (its meta.json), if it still exists. Only a default for `--workspace`:
    the signed pins decide whether the code found there may run."""
    if target is None and resume is not None:
        from flightdeck.launch.engine._journal import Journal

        journal = Journal()
        try:
            row = journal.run(resume)
        except LaunchError:  # the launch itself reports an unusable journal
            return None
        finally:
            journal.close()
        target = row.plan_path if row is not None else None
    if target is None:
        return None
    try:
        skill = locate_plan(target)
        meta = read_json((skill.parent / "meta.json").read_text("utf-8"))
    except (FlightPlanError, OSError, ValueError):
        return None
    where = meta.get("workspace") if isinstance(meta, dict) else None
    if isinstance(where, str) and Path(where).is_dir():
        return Path(where)
    # An installed version: the pinned driver files install stored with it.
    shipped = skill.parent / "workspace"
    return shipped if where is None and shipped.is_dir() else None
