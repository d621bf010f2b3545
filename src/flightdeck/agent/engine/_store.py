"""Sessions on disk: `<data_dir>/sessions/<id>/` with `meta.json` and
`messages.jsonl`.

Each line of `messages.jsonl` is one completed step (a user message, or a
model reply together with its tool results, or injected context), appended
and fsynced when the step ends. A process killed at any moment leaves every
completed step readable; a half-written last line is dropped on load and
reported, and the file is cut back to its last complete line.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import msgspec

from flightdeck._json import read_json
from flightdeck.agent.engine._codec import CodecError, message_from_json, message_to_json
from flightdeck.llm import Message

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
MESSAGES = "messages.jsonl"
META = "meta.json"


class SessionError(Exception):
    """A session cannot be created, found or read."""


class SessionInfo(msgspec.Struct, frozen=True):
    id: str
    path: Path
    created: float
    updated: float
    title: str
    steps: int
    meta: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": str(self.path),
            "created": self.created,
            "updated": self.updated,
            "title": self.title,
            "steps": self.steps,
            "provider": self.meta.get("provider"),
            "model": self.meta.get("model"),
            "workspace": self.meta.get("workspace"),
        }


class Loaded(msgspec.Struct):
    history: list[Message] = msgspec.field(default_factory=list)
    context: list[str] = msgspec.field(default_factory=list)
    problems: list[str] = msgspec.field(default_factory=list)
    # (msg_id, model reply) whose tool approvals were awaited when the
    # process ended; re-asked after a resume
    pending: tuple[str, Message] | None = None


class Session:
    """One session directory; `append` writes one fsynced step."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.id = path.name

    @property
    def messages_file(self) -> Path:
        return self.path / MESSAGES

    def append_messages(self, messages: list[Message]) -> None:
        self._append({"kind": "messages", "messages": [message_to_json(m) for m in messages]})

    def record_pending(self, msg_id: str, reply: Message) -> None:
        """A reply whose tools wait for approval (settled by the next step)."""
        self._append({"kind": "pending", "msg_id": msg_id, "message": message_to_json(reply)})

    def record_compaction(self, history: list[Message]) -> None:
        """The history as compaction left it; loading starts again from here."""
        self._append({"kind": "compacted", "messages": [message_to_json(m) for m in history]})

    def append_context(self, text: str) -> None:
        self._append({"kind": "context", "text": text})

    def _append(self, record: dict[str, Any]) -> None:
        record["ts"] = time.time()
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        # One write of one complete line, then fsync: the step is on disk or it is not.
        fd = os.open(self.messages_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def load(self, *, repair: bool = False) -> Loaded:
        """Read every complete step; with `repair`, cut a torn tail off the file."""
        out = Loaded()
        try:
            raw = self.messages_file.read_bytes()
        except FileNotFoundError:
            return out
        good_end = 0
        pos = 0
        while pos < len(raw):
            nl = raw.find(b"\n", pos)
            end = len(raw) if nl == -1 else nl + 1
            chunk = raw[pos:end]
            pos = end
            try:
                if nl == -1:
                    raise ValueError("no line end")
                self._apply(read_json(chunk, depth=None), out)
            except (ValueError, CodecError) as exc:
                if pos >= len(raw):
                    out.problems.append(
                        f"session {self.id}: ignored a torn last record ({len(chunk)} bytes)"
                    )
                    break
                out.problems.append(f"session {self.id}: skipped a bad record: {exc}")
            good_end = pos
        if repair and good_end < len(raw):
            with open(self.messages_file, "r+b") as handle:
                handle.truncate(good_end)
                os.fsync(handle.fileno())
        return out

    @staticmethod
    def _apply(record: Any, out: Loaded) -> None:
        if not isinstance(record, dict):
            raise CodecError("a record must be an object")
        if record.get("kind") == "messages":
            out.history.extend(message_from_json(m) for m in record["messages"])
            out.pending = None
        elif record.get("kind") == "pending":
            out.pending = (str(record["msg_id"]), message_from_json(record["message"]))
        elif record.get("kind") == "compacted":
            out.history[:] = [message_from_json(m) for m in record["messages"]]
        elif record.get("kind") == "context":
            out.context.append(str(record["text"]))
        else:
            raise CodecError(f"unknown record kind {record.get('kind')!r}")

    def meta(self) -> dict[str, Any]:
        try:
            data = read_json((self.path / META).read_text(encoding="utf-8"))
        except (OSError, ValueError):  # missing, a folder, not JSON, too deep
            return {}
        return data if isinstance(data, dict) else {}

    def write_meta(self, **updates: Any) -> None:
        data = {**self.meta(), **updates}
        tmp = self.path / f".{META}.tmp"
        tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
        os.replace(tmp, self.path / META)

    def info(self) -> SessionInfo:
        meta = self.meta()
        try:
            updated = self.messages_file.stat().st_mtime
        except FileNotFoundError:
            updated = float(meta.get("created", 0.0))
        steps = 0
        if self.messages_file.exists():
            steps = self.messages_file.read_bytes().count(b"\n")
        return SessionInfo(
            self.id,
            self.path,
            float(meta.get("created", 0.0)),
            updated,
            str(meta.get("title", "")),
            steps,
            meta,
        )


class SessionStore:
    """All sessions under one root directory (normally `data_dir()/sessions`)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def create(self, session_id: str | None = None, **meta: Any) -> Session:
        if session_id is None:
            session_id = time.strftime("%Y%m%d-%H%M%S") + "-" + os.urandom(3).hex()
        elif not _ID.match(session_id) or session_id == "latest":
            raise SessionError(f"invalid session id {session_id!r}")
        path = self.root / session_id
        # A file or a broken link in the way of the store raises OSError here,
        # so that FileExistsError below only ever means this session exists.
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            path.mkdir()
        except FileExistsError:
            raise SessionError(f"session {session_id} already exists") from None
        session = Session(path)
        session.write_meta(id=session_id, created=time.time(), **meta)
        return session

    def open(self, ref: str) -> Session:
        """A session by id, or the most recently updated one for `latest`."""
        if ref == "latest":
            infos = self.list()
            if not infos:
                raise SessionError("there are no sessions yet ('latest' names none)")
            return Session(infos[0].path)
        if not _ID.match(ref) or not (self.root / ref).is_dir():
            raise SessionError(f"session {ref} not found")
        return Session(self.root / ref)

    def list(self) -> list[SessionInfo]:
        """Every session, most recently updated first."""
        if not self.root.is_dir():
            return []
        infos = [Session(p).info() for p in self.root.iterdir() if p.is_dir()]
        return sorted(infos, key=lambda i: (i.updated, i.id), reverse=True)

    def remove(self, session_id: str) -> None:
        import shutil

        session = self.open(session_id)
        shutil.rmtree(session.path)
