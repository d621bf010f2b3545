"""Frozen plans and agent sessions, read for the pages.

Verification is `flightdeck.flightplan.verify_plan`, the check a launch
makes, with one difference: it records nothing. `verify_plan` pins a name
to its publisher on first use in `trust.json`; merely looking at a plan must
not pin it, so each check gets a throw-away trust state in a temporary
directory, and the real pin is read (never written) and shown beside it.
"""

from __future__ import annotations

import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

from flightdeck.agent import SessionError, SessionStore
from flightdeck.flightplan import (
    FlightPlan,
    FlightPlanError,
    SkillStore,
    TrustState,
    load_plan,
    verify_plan,
)
from flightdeck.llm import ContentBlock, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock


def plans(store: SkillStore, trust: TrustState) -> list[dict[str, Any]]:
    out = []
    with tempfile.TemporaryDirectory(prefix="flightdeck-ui-") as scratch:
        for n, entry in enumerate(store.list()):
            row: dict[str, Any] = {
                "name": entry.name,
                "id": entry.short_hash,
                "version": entry.version,
                "content_hash": entry.content_hash,
                "publisher": entry.publisher,
                "key_id": entry.key_id,
                "frozen_at": entry.frozen_at,
                "path": str(entry.path),
            }
            try:
                verified = verify_plan(
                    entry.skill_path, trust=TrustState(Path(scratch) / f"{n}.json")
                )
            except FlightPlanError as exc:
                row["verified"] = False
                row["problem"] = f"{exc.message} [{exc.code}]"
            else:
                row["verified"] = True
                row["signer"] = verified.signer_key_id
                row["signed_at"] = verified.signed_at
                row["lock"] = {
                    "capabilities": [
                        f"{c.name} {c.version}" for c in verified.lock.resolved_capability_set
                    ],
                    "images": [i.pinned for i in verified.lock.resolved_images],
                    "code_pins": len(verified.lock.code_pins),
                }
            try:
                pin = trust.get(entry.name)
            except FlightPlanError:
                pin = None
            row["pinned"] = (
                {"owner": pin.owner, "version": pin.version, "content_hash": pin.content_hash}
                if pin is not None
                else None
            )
            out.append(row)
    return out


@lru_cache(maxsize=64)
def _plan_at(path: str, mtime: float) -> FlightPlan | None:
    loaded = load_plan(Path(path))
    return loaded.plan


def plan_at(path: str) -> FlightPlan | None:
    """The plan a run ran (its SKILL.md), cached while the file is unchanged."""
    try:
        mtime = Path(path).stat().st_mtime
    except OSError:
        return None
    return _plan_at(path, mtime)


def versions(store: SkillStore) -> dict[str, str]:
    """Content hash -> version label of every stored plan (the runs list)."""
    return {e.content_hash: e.version for e in store.list() if e.version is not None}


def sessions(root: Path) -> list[dict[str, Any]]:
    return [info.to_json() for info in SessionStore(root).list()]


def transcript(root: Path, session_id: str) -> dict[str, Any] | None:
    try:
        session = SessionStore(root).open(session_id)
    except SessionError:
        return None
    loaded = session.load()  # never `repair`: the UI does not write sessions
    messages = [
        {"role": message.role, "blocks": [_block(block) for block in message.content]}
        for message in loaded.history
    ]
    return {
        "info": session.info().to_json(),
        "messages": messages,
        "context": loaded.context,
        "problems": loaded.problems,
    }


def _block(block: ContentBlock) -> dict[str, Any]:
    if isinstance(block, TextBlock | ThinkingBlock):
        return {"type": block.type, "text": block.text}
    if isinstance(block, ToolUseBlock):
        return {"type": block.type, "name": block.name, "input": block.input}
    if isinstance(block, ToolResultBlock):
        text = "\n".join(p.text if isinstance(p, TextBlock) else "[image]" for p in block.content)
        return {"type": block.type, "text": text, "is_error": block.is_error}
    return {"type": block.type, "text": f"[{block.type}]"}
