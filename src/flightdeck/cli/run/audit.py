"""`flightdeck audit list|show`: what was recorded, filtered."""

from __future__ import annotations

import json
from typing import Any

import click

from flightdeck.cli._params import utf8_text
from flightdeck.cli._render import fail

_FMT = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
_STORE = click.option(
    "--store",
    metavar="SPEC",
    help=(
        "Read another store: sqlite:PATH, jsonl:PATH, postgresql://URL or a path"
        " (default: the configured store)."
    ),
)


@click.group()
def audit() -> None:
    """Audit records of launches, action calls, IO staging and agent tool calls.

    \b
    Examples:
      flightdeck audit list --since 1d
      flightdeck audit list --kind agent.tool_call --where ok=false
      flightdeck audit list --plan weekly-metrics-digest --kind launch. --format json
      flightdeck audit show run-20260101T000000-ab12cd
    """


def _summary(fields: dict[str, Any], width: int = 90) -> str:
    parts = []
    for key, value in fields.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        parts.append(f"{key}={shown}")
    text = " ".join(parts)
    return text if len(text) <= width else text[: width - 1] + "…"


def _open(store: str | None, fmt: str) -> Any:
    from pathlib import Path

    from flightdeck.audit import AuditQueryError, open_store

    if store is not None and not store.startswith(("postgresql:", "postgres:")):
        where = store.split(":", 1)[1] if store.startswith(("sqlite:", "jsonl:")) else store
        if not Path(where).expanduser().is_file():
            fail(AuditQueryError(f"no audit store at {where}", "give an existing file"), fmt)
    return open_store(store)


def _load(store: str | None, fmt: str, query: Any) -> list[Any]:
    from flightdeck.audit import AuditStoreError

    try:
        reader = _open(store, fmt)
        if hasattr(reader, "query"):  # SQLite, PostgreSQL: filtered and paged in SQL
            records = list(reader.query(query))
        else:
            records = list(query.apply(reader.records(run_id=query.run_id)))
    except AuditStoreError as exc:
        fail(exc, fmt)
    skipped: list[int] = getattr(reader, "skipped", [])
    if skipped:  # on stderr, so `--format json` output stays one document
        shown = ", ".join(str(n) for n in skipped[:5]) + (", …" if len(skipped) > 5 else "")
        click.echo(
            f"warning: {len(skipped)} unreadable line(s) skipped in {reader.path} "
            f"(line {shown}) [audit.line_unreadable]",
            err=True,
        )
    return records


def _print(records: list[Any], fmt: str, *, full: bool) -> None:
    if fmt == "json":
        click.echo(json.dumps([r.to_dict() for r in records], indent=2, ensure_ascii=False))
        return
    if not records:
        click.echo("no audit records match")
        return
    if full:
        for record in records:
            click.echo(f"{record.timestamp}  {click.style(record.kind, bold=True)}")
            for line in json.dumps(dict(record.fields), indent=2, ensure_ascii=False).splitlines():
                click.echo("  " + line)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="bold")
    for name in ("time", "kind", "run", "fields"):
        table.add_column(name, overflow="fold" if name == "fields" else "ellipsis")
    for record in records:
        table.add_row(
            record.timestamp[:19].replace("T", " "),
            record.kind,
            record.run_id or "-",
            _summary(dict(record.fields)),
        )
    import sys

    # Piped output is for grep and cut: one record per line, never folded.
    width = None if sys.stdout.isatty() else 100_000
    Console(highlight=False, width=width).print(table)


@audit.command("list")
@click.option("--run", "run_id", callback=utf8_text, help="Only this run's records.")
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    help="A kind (launch.action_call) or a prefix (launch. or agent.*); repeatable.",
)
@click.option("--plan", callback=utf8_text, help="Every record of the runs of this plan.")
@click.option("--action", callback=utf8_text, help="Records about this action, tool or ref.")
@click.option("--where", "where", multiple=True, metavar="KEY=VALUE", help="A field filter.")
@click.option("--since", help="RFC 3339 time, date, or age (30m, 2h, 7d).")
@click.option("--until", help="RFC 3339 time, date, or age.")
@click.option("-n", "--limit", type=click.IntRange(0), default=50, show_default=True)
@_STORE
@_FMT
def list_records(
    run_id: str | None,
    kinds: tuple[str, ...],
    plan: str | None,
    action: str | None,
    where: tuple[str, ...],
    since: str | None,
    until: str | None,
    limit: int,
    store: str | None,
    fmt: str,
) -> None:
    """The newest matching records (oldest first), one line each. Filters combine."""
    from flightdeck.audit import AuditQuery, AuditQueryError, parse_time, parse_where

    try:
        query = AuditQuery(
            run_id=run_id,
            kinds=kinds,
            plan=plan,
            action=action,
            since=parse_time(since) if since else None,
            until=parse_time(until) if until else None,
            where=parse_where(where),
            limit=limit,
        )
    except AuditQueryError as exc:
        fail(exc, fmt, status=2)
    _print(_load(store, fmt, query), fmt, full=False)


@audit.command("show")
@click.argument("run_id", callback=utf8_text)
@_STORE
@_FMT
def show(run_id: str, store: str | None, fmt: str) -> None:
    """Every record of one run, with all its fields."""
    from flightdeck.audit import AuditQuery

    records = _load(store, fmt, AuditQuery(run_id=run_id))
    if not records and fmt == "text":
        click.echo(f"no audit records for run {run_id}")
        raise SystemExit(1)
    _print(records, fmt, full=True)
