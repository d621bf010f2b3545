"""Finding audit records: by run, kind, plan, action, field and time.

Records of one run do not all repeat the plan's name (only the launch record
carries it), so `plan` selects whole runs: every record of a run whose
records name that plan. Field names are matched in both casings (`actionRef`
and `action_ref`) because stores written by older versions used camelCase.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from flightdeck._errors import FlightdeckError
from flightdeck.audit._record import AuditRecord

# Fields that name the action or tool a record is about, in the stores' spellings.
_ACTION_FIELDS = ("action", "action_ref", "actionRef", "tool", "agent_tool")
_RELATIVE = re.compile(r"^(\d+)\s*([smhdw])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


class AuditQueryError(FlightdeckError, ValueError):
    """A filter that cannot be read (`audit.bad_filter`)."""

    code = "audit.bad_filter"
    # Indented hint and the message alone as str(), as this error always had.
    hint_prefix = "  hint: "
    __str__ = ValueError.__str__

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(self.code, message, hint=hint)


def parse_time(text: str, *, now: datetime | None = None) -> str:
    """An RFC 3339 time, a date, or an age such as `30m`, `2h`, `7d`, as the
    records' sortable UTC text."""
    match = _RELATIVE.match(text.strip())
    if match:
        moment = (now or datetime.now(UTC)) - timedelta(
            **{_UNITS[match.group(2)]: int(match.group(1))}
        )
    else:
        try:
            moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        except ValueError:
            raise AuditQueryError(
                f"cannot read the time {text!r}",
                "use an RFC 3339 time (2026-11-24T10:00:00Z), a date, or an age like 2h or 7d",
            ) from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def _field(fields: Mapping[str, Any], name: str) -> Any:
    if name in fields:
        return fields[name]
    wanted = _snake(name)
    for key, value in fields.items():
        if _snake(key) == wanted:
            return value
    return None


def _matches(value: Any, wanted: str) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return wanted.lower() == str(value).lower()
    return str(value) == wanted


@dataclass(frozen=True)
class AuditQuery:
    """What to keep. Empty means everything; filters combine with AND."""

    run_id: str | None = None
    kinds: Sequence[str] = ()  # exact kinds, or prefixes ending in "." or "*"
    plan: str | None = None
    action: str | None = None
    since: str | None = None  # as parse_time returns
    until: str | None = None
    where: Mapping[str, str] = field(default_factory=dict)
    limit: int | None = None  # the newest N, still shown oldest first

    def _kind_ok(self, kind: str) -> bool:
        if not self.kinds:
            return True
        for wanted in self.kinds:
            prefix = wanted.rstrip("*")
            if kind == wanted or (wanted.endswith(("*", ".")) and kind.startswith(prefix)):
                return True
        return False

    def _record_ok(self, record: AuditRecord) -> bool:
        if self.run_id is not None and record.run_id != self.run_id:
            return False
        if not self._kind_ok(record.kind):
            return False
        if self.since is not None and record.timestamp < self.since:
            return False
        if self.until is not None and record.timestamp > self.until:
            return False
        if self.action is not None and not any(
            _matches(_field(record.fields, name), self.action) for name in _ACTION_FIELDS
        ):
            return False
        return all(_matches(_field(record.fields, k), v) for k, v in self.where.items())

    def apply(self, records: Iterable[AuditRecord]) -> list[AuditRecord]:
        pool = list(records)
        if self.plan is not None:
            runs = {
                r.run_id
                for r in pool
                if r.run_id is not None and _matches(_field(r.fields, "plan"), self.plan)
            }
            pool = [r for r in pool if r.run_id in runs]
        kept = [r for r in pool if self._record_ok(r)]
        if self.limit is not None:
            kept = kept[-self.limit :] if self.limit else []
        return kept


def parse_where(pairs: Iterable[str]) -> dict[str, str]:
    """`KEY=VALUE` filters on record fields."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise AuditQueryError(f"--where {pair!r} is not KEY=VALUE", "e.g. --where ok=false")
        out[key] = value
    return out
