"""Picking a driver for a tool (AIP-30 § Multi-driver routing, as this host runs it).

Candidates come from `<workspace>/.drivers/*/DRIVER.md` (`discover_drivers`);
ones that could not be registered stay in the list with their refusal, so
`--verbose` can say why each was not used. Phases, in order:

1. registered and able to run here; 2. implements the tool; 3. no dropped input
used by the call; 4. every required policy tag present; 5. region matches;
6. a pin (`pin=`) wins if it survived; 7. rank: kind (builtin, sdk, http, mcp,
cli: in-process first), then `cost_units_per_call`, then id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flightdeck.documents import DocumentKind, load_document
from flightdeck.drivers._binding import Driver
from flightdeck.drivers._errors import DriverError
from flightdeck.drivers._register import load_driver

KIND_RANK = {"builtin": 0, "sdk": 1, "http": 2, "mcp": 3, "cli": 4}
NO_DRIVER = "no_driver"


@dataclass(frozen=True)
class Candidate:
    """A driver found in a workspace: registered (`driver`) or refused (`refusal`)."""

    id: str
    path: Path | None
    kind: str
    driver: Driver | None = None
    refusal: DriverError | None = None
    tools: tuple[str, ...] = ()  # the tool ids its DRIVER.md says it implements

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": str(self.path) if self.path else None,
            "kind": self.kind,
            "registered": self.driver is not None,
            "refusal": self.refusal.to_dict() if self.refusal else None,
        }


@dataclass(frozen=True)
class Rejection:
    driver: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"driver": self.driver, "reason": self.reason}


@dataclass(frozen=True)
class DriverChoice:
    """The pick (or None) with the reason, and every rejected candidate with its reason."""

    tool: str
    driver: Driver | None
    reason: str
    rejected: tuple[Rejection, ...] = ()
    refusal: DriverError | None = None  # set when the one named driver was refused
    # Set when no candidate even declares the tool: every tool id they do declare.
    known_tools: tuple[str, ...] | None = None

    def explain(self) -> list[str]:
        head = (
            f"{self.tool}: chose {self.driver.id} ({self.reason})"
            if self.driver is not None
            else f"{self.tool}: no driver ({self.reason})"
        )
        return [head] + [f"  rejected {r.driver}: {r.reason}" for r in self.rejected]

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "driver": self.driver.id if self.driver is not None else None,
            "reason": self.reason,
            "rejected": [r.to_dict() for r in self.rejected],
            "refusal": self.refusal.to_dict() if self.refusal is not None else None,
            "known_tools": list(self.known_tools) if self.known_tools is not None else None,
        }


def discover_drivers(
    workspace: str | Path,
    *,
    environ: Mapping[str, str] | None = None,
    secrets: Mapping[str, str] | None = None,
) -> list[Candidate]:
    """Load every `.drivers/*/DRIVER.md` of a workspace; refusals are kept, not raised."""
    ws = Path(workspace).resolve()
    out: list[Candidate] = []
    for file in sorted(ws.glob(".drivers/*/DRIVER.md")):
        loaded = load_document(file, kind=DocumentKind.DRIVER)
        data = loaded.document.data if loaded.document is not None else {}
        ident, kind = str(data.get("id", file.parent.name)), str(data.get("kind", "?"))
        entries = data.get("implements")
        tools = tuple(
            _tool_id(file.parent, str(entry["tool"]))
            for entry in (entries if isinstance(entries, list) else [])
            if isinstance(entry, dict) and entry.get("tool")
        )
        try:
            driver = load_driver(file, workspace=ws, environ=environ, secrets=secrets)
        except DriverError as exc:
            out.append(Candidate(ident, file, kind, refusal=exc, tools=tools))
            continue
        out.append(Candidate(ident, file, kind, driver=driver, tools=tools))
    return out


def _tool_id(folder: Path, ref: str) -> str:
    """The `id:` of the TOOL.md an `implements` entry points at (the ref itself
    when it is not a readable TOOL.md), so an unknown tool can list real ids."""
    path = folder / ref
    if ref.endswith(".md") and path.is_file():
        loaded = load_document(path, kind=DocumentKind.TOOL)
        if loaded.document is not None and isinstance(loaded.document.data.get("id"), str):
            return str(loaded.document.data["id"])
    return ref


def _cost(driver: Driver, tool: str) -> float:
    binding = driver.binding(tool)
    cost = binding.cost_units if binding is not None else None
    return cost if cost is not None else float("inf")


def _reject(
    driver: Driver, tool: str, need: Sequence[str], region: str | None, input: Any
) -> str | None:
    binding = driver.binding(tool)
    if binding is None:
        return f"does not implement {tool}"
    if isinstance(input, Mapping):
        used = sorted(binding.dropped_inputs.intersection(input))
        if used:
            return f"drops input(s) the call uses: {', '.join(used)}"
    tags = set(getattr(driver, "policy_tags", ()) or ())
    missing = [t for t in need if t not in tags]
    if missing:
        return f"lacks required policy tag(s): {', '.join(missing)}"
    regions = tuple(getattr(driver, "region", ("global",)) or ("global",))
    if region is not None and region not in regions:
        return f"region {list(regions)} does not include {region}"
    return None


def resolve_driver(
    tool: str,
    candidates: Sequence[Candidate | Driver],
    *,
    require_tags: Sequence[str] = (),
    region: str | None = None,
    input: Any = None,
    pin: str | None = None,
) -> DriverChoice:
    """Pick the driver for one call of `tool`; never raises (no pick = `driver is None`)."""
    rejected: list[Rejection] = []
    alive: list[Driver] = []
    for item in candidates:
        if isinstance(item, Candidate):
            if item.driver is None:
                why = item.refusal.message if item.refusal is not None else "not registered"
                code = item.refusal.code if item.refusal is not None else "unregistered"
                rejected.append(Rejection(item.id, f"refused at registration: {code}: {why}"))
                continue
            driver: Driver = item.driver
        else:
            driver = item
        reason = _reject(driver, tool, require_tags, region, input)
        if reason is None:
            alive.append(driver)
        else:
            rejected.append(Rejection(driver.id, reason))
    if pin is not None:
        pinned = [d for d in alive if d.id == pin]
        if not pinned:
            return DriverChoice(tool, None, f"pinned driver {pin} is unavailable", tuple(rejected))
        rest = [Rejection(d.id, f"not the pinned driver {pin}") for d in alive if d.id != pin]
        return DriverChoice(tool, pinned[0], "pinned", tuple(rejected + rest))
    if not alive:
        known = _declared_tools(candidates)
        if known is not None and tool not in known:
            # Not a refusal by every driver: nothing here has such a tool.
            why = f"no driver in the workspace implements {tool}"
            return DriverChoice(tool, None, why, tuple(rejected), known_tools=known)
        return DriverChoice(tool, None, "no candidate qualifies", tuple(rejected))
    ranked = sorted(alive, key=lambda d: (KIND_RANK.get(d.kind, 9), _cost(d, tool), d.id))
    best = ranked[0]
    for other in ranked[1:]:
        rejected.append(Rejection(other.id, f"ranked below {best.id} (kind, cost, id)"))
    why = f"kind {best.kind}"
    cost = _cost(best, tool)
    if cost != float("inf"):
        why += f", cost {cost:g}"
    if len(alive) > 1:
        why += f"; best of {len(alive)} qualifying"
    return DriverChoice(tool, best, why, tuple(rejected))


def _declared_tools(candidates: Sequence[Candidate | Driver]) -> tuple[str, ...] | None:
    """Every tool id the candidates declare; None when a bare Driver (no
    DRIVER.md data) is among them, since its tool list is not known."""
    found: set[str] = set()
    for item in candidates:
        if not isinstance(item, Candidate):
            return None
        found.update(item.tools)
    return tuple(sorted(found))


def find_driver_file(workspace: str | Path, driver_id: str) -> Path | None:
    """The `.drivers/*/DRIVER.md` whose `id` is `driver_id` (its folder name first)."""
    ws = Path(workspace)
    first = ws / ".drivers" / driver_id / "DRIVER.md"
    files = ([first] if first.is_file() else []) + sorted(ws.glob(".drivers/*/DRIVER.md"))
    for file in files:
        loaded = load_document(file, kind=DocumentKind.DRIVER)
        if loaded.document is not None and loaded.document.data.get("id") == driver_id:
            return file
    return None


def select_driver(
    workspace: str | Path,
    tool: str,
    *,
    driver_id: str | None = None,
    require_tags: Sequence[str] = (),
    region: str | None = None,
    input: Any = None,
    environ: Mapping[str, str] | None = None,
) -> DriverChoice:
    """What `flightdeck call` does: load only the named driver when one is given
    (refusals become the choice's reason), else discover and resolve."""
    if driver_id is None:
        found = discover_drivers(workspace, environ=environ)
        return resolve_driver(tool, found, require_tags=require_tags, region=region, input=input)
    file = find_driver_file(workspace, driver_id)
    if file is None:
        return DriverChoice(tool, None, f"no driver with id {driver_id} in {workspace}/.drivers")
    try:
        driver = load_driver(file, workspace=Path(workspace).resolve(), environ=environ)
    except DriverError as exc:
        return DriverChoice(
            tool,
            None,
            f"driver {driver_id} refused: {exc.code}: {exc.message}",
            (Rejection(driver_id, f"refused at registration: {exc.code}: {exc.message}"),),
            refusal=exc,
        )
    return resolve_driver(
        tool, [driver], require_tags=require_tags, region=region, input=input, pin=driver_id
    )
