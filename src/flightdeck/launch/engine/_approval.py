"""Approval of actions whose effect is not `read` (seed 003, effect drives
approval routing).

Sources, in order: `--approve STEP|all`, an approvals file (JSON object
`{"<step id or *>": "approve" | "deny"}`), an interactive prompt on a
terminal. With none of them deciding, the step is left `pending-approval`
and the run pauses, resumable with `--resume RUN_ID --approve STEP`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from flightdeck._bounded import read_at_most
from flightdeck._json import JsonError, read_json
from flightdeck.launch.core._errors import LaunchError

Prompt = Callable[[str, str, str], bool]  # (step id, action ref, effect) -> approved?

PENDING = "pending"


@dataclass(frozen=True)
class Approvals:
    approve: frozenset[str] = frozenset()
    decisions: dict[str, str] = field(default_factory=dict)
    prompt: Prompt | None = None

    @classmethod
    def build(
        cls,
        approve: Iterable[str] = (),
        approvals_file: Path | None = None,
        prompt: Prompt | None = None,
    ) -> Approvals:
        return cls(frozenset(approve), _read_file(approvals_file), prompt)

    def decide(self, step_id: str, ref: str, effect: str | None) -> str:
        """`not-required`, `approved:<how>`, `denied:<how>` or `pending`."""
        if effect == "read":
            return "not-required"
        if "all" in self.approve or step_id in self.approve:
            return "approved:flag"
        choice = self.decisions.get(step_id, self.decisions.get("*"))
        if choice is not None:
            return f"{'approved' if choice == 'approve' else 'denied'}:file"
        if self.prompt is not None:
            return (
                "approved:prompt" if self.prompt(step_id, ref, effect or "?") else "denied:prompt"
            )
        return PENDING


# One decision per step: a few KB for the largest plans.
_MAX_FILE_BYTES = 8 * 1024 * 1024


def _read_file(path: Path | None) -> dict[str, str]:
    if path is None:
        return {}
    try:
        raw = read_at_most(path, _MAX_FILE_BYTES)  # a pipe or /dev/zero may never end
        data = read_json(raw.decode("utf-8"))
    except JsonError as exc:
        detail = "nested too deep" if exc.reason == "too_deep" else str(exc)
        raise LaunchError("approval.file_invalid", f"{path}: {detail}") from None
    except (OSError, ValueError) as exc:  # unreadable, not UTF-8
        raise LaunchError("approval.file_invalid", f"{path}: {exc}") from None
    if not isinstance(data, dict) or not all(v in ("approve", "deny") for v in data.values()):
        raise LaunchError(
            "approval.file_invalid",
            f'{path}: expected {{"<step id or *>": "approve" | "deny"}}',
        )
    return {str(k): str(v) for k, v in data.items()}
