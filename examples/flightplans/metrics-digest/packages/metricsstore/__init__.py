"""A read-only metrics store over the SQLite database bundled beside this file.

The bundled data is a rolling synthetic dataset: each point is stored by its
day offset before the query's `as_of` (0 = that day), so the example gives
the same digest whatever day it runs.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

DATABASE = Path(__file__).with_name("metrics.sqlite3")


def _open() -> sqlite3.Connection:
    return sqlite3.connect(f"file:{DATABASE}?mode=ro", uri=True)


def list_metrics() -> dict[str, object]:
    with _open() as db:
        rows = db.execute("SELECT name, unit FROM metrics ORDER BY name").fetchall()
    return {"series": [{"name": name, "unit": unit} for name, unit in rows]}


def query_series(window_days: float, as_of: str, metric_set: list[str]) -> dict[str, object]:
    end = datetime.fromisoformat(as_of.replace("Z", "+00:00"))
    start = end - timedelta(days=float(window_days))
    series = []
    with _open() as db:
        for name in metric_set:
            meta = db.execute("SELECT unit, labels FROM metrics WHERE name = ?", (name,)).fetchone()
            if meta is None:
                continue
            values = [
                row[0]
                for row in db.execute(
                    "SELECT value FROM points WHERE metric = ? AND day_offset < ?"
                    " ORDER BY day_offset DESC",
                    (name, float(window_days)),
                )
            ]
            series.append(
                {
                    "name": name,
                    "unit": meta[0],
                    "labels": json.loads(meta[1]),
                    "count": len(values),
                    "min": min(values) if values else None,
                    "max": max(values) if values else None,
                    "mean": round(sum(values) / len(values), 3) if values else None,
                    "last": values[-1] if values else None,
                }
            )
    window = {"start": start.isoformat(), "end": end.isoformat(), "days": window_days}
    return {"window": window, "series": series}
