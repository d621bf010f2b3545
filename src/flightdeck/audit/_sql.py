"""`AuditQuery` in SQL, for the SQLite and the PostgreSQL store alike.

The WHERE clause selects a superset of what the query keeps, using the
indexes of each store (run, kind, time, and the plan and action fields); the
rows are read newest first in batches and `AuditQuery` decides each one
exactly (field names in both casings, booleans in any case), stopping once
the page is full. So a filter that matches recent records reads a few
hundred rows, never the whole store, and the answer is the one the Python
filter gave before.

SQLite compares `json_extract` values; PostgreSQL asks `fields @> {...}`,
which its GIN index answers. A value is looked for as the text given and,
where it reads as one, as the JSON number or boolean it spells.

SQLite has no index for an arbitrary field, so a `--where` scans the table,
and parsing every row's JSON is most of that scan's time. For values whose
stored text is certain (`needle`), each `--where` first asks that the row's
raw JSON contain that text, `instr(fields, ?) > 0` (a byte search in C, no
parse), and only the rows that do are parsed: a necessary condition ahead
of the exact one, so the answer is the same (docs/decisions.md, issue 31).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from flightdeck._json import read_json
from flightdeck.audit._query import _ACTION_FIELDS, AuditQuery, _snake
from flightdeck.audit._record import AuditRecord

BATCH = 500
# The greatest code point: `kind < prefix || TOP` bounds a prefix as a range
# an index can walk (both stores compare text byte by byte: BINARY, "C").
_TOP = "\U0010ffff"
_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_INT64 = (-(2**63), 2**63 - 1)
_NUMBER = re.compile(r"^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$")
# The values `needle` takes: every one of these characters is written as
# itself by Python's json (the store's only writer, with or without
# ensure_ascii) and by every common JSON encoder ("/" may be written "\/",
# "<>&" as "\u003c"... by some, so they are left out), and none can spell
# the Python text of a list or an object ("[", "{", "'", " "), which
# `AuditQuery` also matches.
_CERTAIN = re.compile(r"[A-Za-z0-9._:@+-]+")  # fullmatch: "$" would let a final "\n" in
# The text Python gives floats whose JSON is other text (NaN, Infinity).
_NOT_FINITE = ("nan", "inf", "-inf")


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def spellings(name: str) -> list[str]:
    """The keys a field may be stored under: as given, snake_case, camelCase."""
    out = [name, _snake(name), _camel(_snake(name))]
    return list(dict.fromkeys(out))


def typed(wanted: str) -> list[Any]:
    """The JSON values whose text `AuditQuery` would match `wanted` with."""
    values: list[Any] = [wanted]
    if wanted.lower() in ("true", "false"):
        values.append(wanted.lower() == "true")
    elif _NUMBER.match(wanted):
        number = read_json(wanted)
        if str(number) == wanted:
            values.append(number)
    return values


def needle(wanted: str) -> str | None:
    """Text that the stored JSON of every record whose field matches
    `wanted` contains, or None where that text is not certain.

    A field matches as a string equal to `wanted` (stored as `"wanted"`,
    nothing in `_CERTAIN` being escaped), as a number whose Python text is
    `wanted` (stored as that text: json writes a float as its repr, which is
    its str, and an int as its digits), or as a boolean when `wanted` is
    true or false in any case (stored lowercase: so only a lowercase
    `wanted` is in both). Null never matches. A list or an object matches
    by its Python text, which `_CERTAIN` cannot spell.
    """
    if not _CERTAIN.fullmatch(wanted) or wanted.lower() in _NOT_FINITE:
        return None
    if wanted.lower() in ("true", "false"):
        return wanted if wanted.islower() else None
    if _NUMBER.match(wanted):
        return wanted  # in the number's text and in the string's
    return '"' + wanted + '"'  # only a string matches: quoted, so fewer rows pass


class _Clause:
    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self.parts: list[str] = []
        self.args: list[Any] = []

    @property
    def mark(self) -> str:
        return "%s" if self.dialect == "postgres" else "?"

    def add(self, sql: str, *args: Any) -> None:
        self.parts.append(sql.replace("?", self.mark))
        self.args.extend(args)

    def field_is(self, names: Iterable[str], wanted: str) -> tuple[str, list[Any]]:
        """One field (under any of `names`) has the value `wanted`."""
        either: list[str] = []
        args: list[Any] = []
        for name in names:
            for key in spellings(name):
                for value in typed(wanted):
                    if self.dialect == "postgres":
                        either.append("fields @> %s::jsonb")
                        args.append(json.dumps({key: value}))
                    else:
                        stored = int(value) if isinstance(value, bool) else value
                        if isinstance(stored, int) and not _INT64[0] <= stored <= _INT64[1]:
                            # SQLite stores no such integer (its JSON reads it as
                            # a REAL) and cannot bind one: the text alone is asked.
                            continue
                        if _PLAIN_KEY.match(key):
                            # Written out, so the expression is the index's
                            # (a bound path never matches an index).
                            either.append(f"json_extract(fields, '$.\"{key}\"') = ?")
                            args.append(stored)
                        else:
                            either.append("json_extract(fields, ?) = ?")
                            args += ["$." + json.dumps(key), stored]
        return "(" + " OR ".join(either) + ")", args


def where(query: AuditQuery, dialect: str) -> tuple[str, list[Any]]:
    """` WHERE ...` (or nothing) and its arguments."""
    clause = _Clause(dialect)
    if query.run_id is not None:
        clause.add("run_id = ?", query.run_id)
    if query.kinds:
        either, args = [], []
        for kind in query.kinds:
            if kind.endswith(("*", ".")):
                prefix = kind.rstrip("*")
                either.append("(kind >= ? AND kind < ?)")
                args += [prefix, prefix + _TOP]
            else:
                either.append("kind = ?")
                args.append(kind)
        clause.add("(" + " OR ".join(either) + ")", *args)
    if query.since is not None:
        clause.add("timestamp >= ?", query.since)
    if query.until is not None:
        clause.add("timestamp <= ?", query.until)
    if dialect == "sqlite":
        # Every text search before any JSON is parsed: SQLite tests a scan's
        # terms in the order written. Longest first: a quoted string is
        # usually rarer than the digits of a number.
        found = (needle(wanted) for wanted in query.where.values())
        for text in sorted({t for t in found if t is not None}, key=lambda t: (-len(t), t)):
            clause.add("instr(fields, ?) > 0", text)
    if query.action is not None:
        sql, args = clause.field_is(_ACTION_FIELDS, query.action)
        clause.add(sql, *args)
    for key, wanted in query.where.items():
        sql, args = clause.field_is([key], wanted)
        clause.add(sql, *args)
    if query.plan is not None:
        # `plan` keeps every record of the runs whose records name the plan.
        sql, args = clause.field_is(["plan"], query.plan)
        inner = "SELECT run_id FROM records WHERE run_id IS NOT NULL AND " + sql
        clause.add(f"run_id IN ({inner})", *args)
    if not clause.parts:
        return "", []
    return " WHERE " + " AND ".join(clause.parts), clause.args


def page(
    query: AuditQuery,
    dialect: str,
    fetch: Callable[[str, list[Any]], Iterator[list[tuple[Any, ...]]]],
    decode: Callable[[tuple[Any, ...]], AuditRecord],
) -> list[AuditRecord]:
    """The records `query` keeps, oldest first; `fetch(sql, args)` yields
    the rows of `sql` in batches."""
    if query.limit == 0:
        return []
    clause, args = where(query, dialect)
    text = "fields::text" if dialect == "postgres" else "fields"
    sql = f"SELECT kind, run_id, timestamp, {text} FROM records{clause} ORDER BY id DESC"
    exact = AuditQuery(  # the plan was decided in SQL, whole runs at once
        run_id=query.run_id,
        kinds=query.kinds,
        action=query.action,
        since=query.since,
        until=query.until,
        where=query.where,
    )
    found: list[AuditRecord] = []
    for batch in fetch(sql, args):
        for row in batch:
            record = decode(row)
            if exact._record_ok(record):
                found.append(record)
                if query.limit is not None and len(found) >= query.limit:
                    found.reverse()
                    return found
    found.reverse()
    return found
