"""Outputs kept in the run journal, in bounded rows.

An output's content up to one chunk (1 MiB of UTF-8) stays in its `outputs`
row, as before; a larger one goes into `output_chunks`, one row per 1 MiB
with that chunk's SHA-256, and its `outputs` row says how many. The rows of
one output are written in one transaction (`Journal.output`), so a reader
never meets an output whose chunks are still coming. Nothing here holds more
than one chunk of a stored output: `pieces` reads them one query at a time,
each checked before it is handed on, and `write_outputs` (`_report`) checks
the whole against the digest the run recorded.

The whole is bounded too: an output over `[store] max_output_bytes` (the
user's config.toml, default 256 MiB) is not stored at all but refused at
materialization, `output.too_large`, before anything is published.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from typing import Any

from flightdeck.launch.core._errors import LaunchError

CHUNK_BYTES = 1024 * 1024

# The statement `Journal.output` sends; the PostgreSQL connection recognises
# it by equality and sends its upsert instead (`_journal_pg.translate`).
OUTPUT_REPLACE = (
    "INSERT OR REPLACE INTO outputs (run_id, name, path, mime_type, sha256, bytes,"
    " content, chunks) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_CHUNKS_DELETE = "DELETE FROM output_chunks WHERE run_id = ? AND name = ?"
_CHUNK_INSERT = "INSERT INTO output_chunks (run_id, name, seq, sha256, data) VALUES (?, ?, ?, ?, ?)"
CHUNK_SELECT = "SELECT data, sha256 FROM output_chunks WHERE run_id = ? AND name = ? AND seq = ?"


def output_writes(
    run_id: str, record: dict[str, Any], content: str | None
) -> list[tuple[str, tuple[Any, ...]]]:
    """The statements that keep one output: its chunks of an earlier write
    dropped (a resume concludes again), its new chunks, then its row."""
    name = record["name"]
    data = content.encode("utf-8") if content is not None else b""
    writes: list[tuple[str, tuple[Any, ...]]] = [(_CHUNKS_DELETE, (run_id, name))]
    chunks = None
    if len(data) > CHUNK_BYTES:
        for seq, start in enumerate(range(0, len(data), CHUNK_BYTES)):
            piece = data[start : start + CHUNK_BYTES]
            digest = hashlib.sha256(piece).hexdigest()
            writes.append((_CHUNK_INSERT, (run_id, name, seq, digest, piece)))
        chunks, content = len(writes) - 1, None
    row = (record.get("path"), record["mime_type"], record["sha256"], record["bytes"])
    writes.append((OUTPUT_REPLACE, (run_id, name, *row, content, chunks)))
    return writes


def chunk_of(rows: list[tuple[Any, ...]]) -> tuple[bytes, str] | None:
    """A `CHUNK_SELECT` answer as (data, sha256); None if the row is gone."""
    if not rows:
        return None
    data, digest = rows[0]
    # Text only if edited so outside flightdeck: then it fails its digest.
    return bytes(data) if isinstance(data, bytes | memoryview) else str(data).encode(), digest


def pieces(
    run_id: str,
    name: str,
    count: int,
    chunk: Callable[[int], tuple[bytes, str] | None],
    where: str,
) -> Iterator[bytes]:
    """The content of output `name` kept in `count` chunks, a chunk at a time
    from `chunk(seq)`, each checked: a row that is gone is
    `output.chunk_missing`, one whose bytes are not its digest's (or over a
    chunk) `output.chunk_corrupt`. `where` names the store."""
    for seq in range(count):
        found = chunk(seq)
        if found is None:
            raise LaunchError(
                "output.chunk_missing",
                f"output {name!r} of run {run_id}: chunk {seq} of {count} is not in"
                f" the store ({where})",
                hint="the store's output_chunks rows were removed outside flightdeck; the file"
                " the run published may still be on the machine that concluded it",
            )
        data, digest = found
        if len(data) > CHUNK_BYTES or hashlib.sha256(data).hexdigest() != digest:
            raise LaunchError(
                "output.chunk_corrupt",
                f"output {name!r} of run {run_id}: chunk {seq} of {count} is not"
                f" what was stored (sha256 {str(digest)[:16]}…) in {where}",
                hint="the store's output_chunks rows were changed outside flightdeck; the file"
                " the run published may still be on the machine that concluded it",
            )
        yield bytes(data)


def too_large(name: str, size: int, limit: int) -> LaunchError:
    return LaunchError(
        "output.too_large",
        f"output {name!r} is {size} bytes, over the store's limit of {limit} bytes",
        hint="raise [store] max_output_bytes in the user's config.toml, or publish a smaller"
        " output",
    )
