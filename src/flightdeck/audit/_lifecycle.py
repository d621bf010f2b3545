"""Lifecycle events: recorded in the audit, delivered to subscribers.

An ACTION's `fires_events` (and an implementor's additions) fire when an
implementor runs successfully; a launch fires `run.finished` when it ends and
`approval.waiting` for each step that stops for approval; the agent fires
`approval.waiting` when it asks. Each event is one `lifecycle.event` audit
record and one delivery to every subscriber:

- Python entry points in the group `flightdeck.subscribers`: a callable that
  takes the event as a dict (`LifecycleEvent.to_dict()`).
- `[[hooks]]` in the user's config.toml (never a workspace's flightdeck.toml:
  a cloned repository must not run commands, e.g. the moment the agent asks
  for approval): a command (argv list, or a
  string split like a shell would, never run by one) that reads the event as
  JSON on stdin, with `FLIGHTDECK_EVENT` set; `events` selects names (`*`
  or absent: all), `timeout` is seconds (default 10).

Delivery runs on one background thread, in firing order, so a slow hook never
delays the call that fired it; the thread is joined at interpreter exit, so a
CLI command's hooks finish before the process ends (each bounded by its
timeout). A subscriber that fails or times out is logged and never fails the
call: events are notifications, not part of the transaction.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from flightdeck.audit._record import AuditRecord, AuditSink, utc_now

log = logging.getLogger("flightdeck.lifecycle")
ENTRY_POINT_GROUP = "flightdeck.subscribers"
DEFAULT_HOOK_TIMEOUT = 10.0
# Deliveries waiting at once. A slow hook with a fast producer (a launch of
# thousands of calls) would otherwise grow the queue without bound and hold the
# process's exit for pending x timeout; past the cap an event is recorded in
# the audit but not delivered, and a warning says so.
MAX_PENDING = 256

Subscriber = Callable[[dict[str, Any]], object]


@dataclass(frozen=True)
class LifecycleEvent:
    name: str
    source: str  # what fired it: driver.call, launch, agent
    run_id: str | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)
    timestamp: str = field(default_factory=utc_now)

    def to_dict(self) -> dict[str, Any]:
        return {
            "event": self.name,
            "source": self.source,
            "run_id": self.run_id,
            "timestamp": self.timestamp,
            "fields": dict(self.fields),
        }


@dataclass(frozen=True)
class Hook:
    command: tuple[str, ...]
    events: frozenset[str] | None  # None: every event
    timeout: float = DEFAULT_HOOK_TIMEOUT

    def wants(self, name: str) -> bool:
        return self.events is None or name in self.events


def hooks_from_config(entries: object) -> list[Hook]:
    """The `[[hooks]]` tables; an unusable entry is logged and skipped."""
    hooks: list[Hook] = []
    if not isinstance(entries, list):
        if entries is not None:
            log.warning("config `hooks` must be an array of tables ([[hooks]]); ignored")
        return hooks
    for index, entry in enumerate(entries):
        hook = _hook(entry)
        if hook is None:
            log.warning("config hooks[%d]: needs `command` (a string or a list of strings)", index)
        else:
            hooks.append(hook)
    return hooks


def _hook(entry: object) -> Hook | None:
    if not isinstance(entry, Mapping):
        return None
    raw = entry.get("command")
    if isinstance(raw, str):
        try:
            command = tuple(shlex.split(raw))
        except ValueError:
            return None
    elif isinstance(raw, list) and all(isinstance(part, str) for part in raw):
        command = tuple(raw)
    else:
        return None
    events = entry.get("events", entry.get("event"))
    if isinstance(events, str):
        events = [events]
    names = None
    if isinstance(events, list) and "*" not in events:
        names = frozenset(str(name) for name in events)
    timeout = entry.get("timeout", DEFAULT_HOOK_TIMEOUT)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
        return None
    return Hook(command, names, float(timeout)) if command else None


def _run_hook(hook: Hook, event: LifecycleEvent) -> None:
    payload = json.dumps(event.to_dict(), ensure_ascii=False)
    env = {**os.environ, "FLIGHTDECK_EVENT": event.name}
    try:
        proc = subprocess.run(
            hook.command,
            input=payload,
            text=True,
            capture_output=True,
            timeout=hook.timeout,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        log.warning(
            "hook %s: no answer within %ss for %s", hook.command[0], hook.timeout, event.name
        )
        return
    except OSError as exc:
        log.warning("hook %s: cannot run: %s", hook.command[0], exc.strerror)
        return
    if proc.returncode != 0:
        log.warning("hook %s exited %d for %s", hook.command[0], proc.returncode, event.name)


def _entry_point_subscribers() -> list[tuple[str, Subscriber]]:
    from importlib.metadata import entry_points

    found: list[tuple[str, Subscriber]] = []
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            target = point.load()
        except Exception as exc:  # a broken plug-in must not break the host
            log.warning("subscriber %s cannot be loaded: %s", point.name, exc)
            continue
        if callable(target):
            found.append((point.name, target))
    return found


class Dispatcher:
    """Subscribers of this process, found once, served by one ordered worker."""

    def __init__(
        self,
        hooks: Sequence[Hook] | None = None,
        subscribers: Sequence[tuple[str, Subscriber]] | None = None,
        max_pending: int = MAX_PENDING,
    ) -> None:
        self.max_pending = max_pending
        self._pending = 0
        self.dropped = 0
        self._hooks = list(hooks) if hooks is not None else None
        self._subscribers = list(subscribers) if subscribers is not None else None
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def _load(self) -> tuple[list[Hook], list[tuple[str, Subscriber]]]:
        if self._hooks is None:
            self._hooks = _configured_hooks()
        if self._subscribers is None:
            self._subscribers = _entry_point_subscribers()
        return self._hooks, self._subscribers

    def deliver(self, event: LifecycleEvent) -> Future[None] | None:
        with self._lock:
            hooks, subscribers = self._load()
            if not any(h.wants(event.name) for h in hooks) and not subscribers:
                return None
            if self._pending >= self.max_pending:
                self.dropped += 1
                log.warning("%d deliveries pending: %s not delivered", self._pending, event.name)
                return None
            if self._executor is None:
                self._executor = ThreadPoolExecutor(1, thread_name_prefix="flightdeck-events")
            self._pending += 1
            return self._executor.submit(self._deliver, event, hooks, subscribers)

    def _deliver(
        self,
        event: LifecycleEvent,
        hooks: list[Hook],
        subscribers: list[tuple[str, Subscriber]],
    ) -> None:
        try:
            self._deliver_to(event, hooks, subscribers)
        finally:
            with self._lock:
                self._pending -= 1

    @staticmethod
    def _deliver_to(
        event: LifecycleEvent, hooks: list[Hook], subscribers: list[tuple[str, Subscriber]]
    ) -> None:
        for name, subscriber in subscribers:
            try:
                subscriber(event.to_dict())
            except Exception as exc:
                log.warning("subscriber %s failed on %s: %s", name, event.name, exc)
        for hook in hooks:
            if hook.wants(event.name):
                _run_hook(hook, event)

    def flush(self) -> None:
        """Wait for every delivery so far (tests, and hosts that exit abruptly)."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)


def _configured_hooks() -> list[Hook]:
    from flightdeck.config import ConfigError, load_config

    try:
        config = load_config(None)  # the user's file only: see the module docstring
    except ConfigError as exc:
        log.warning("hooks not loaded: %s", exc)
        return []
    return hooks_from_config(config.get("hooks"))


_dispatcher = Dispatcher()


def fire(
    name: str,
    *,
    source: str,
    run_id: str | None = None,
    fields: Mapping[str, Any] | None = None,
    audit: AuditSink | None = None,
) -> LifecycleEvent:
    """Record one event (when there is an audit sink) and hand it to the
    subscribers. Never raises for a subscriber's sake."""
    event = LifecycleEvent(name, source, run_id, dict(fields or {}))
    if audit is not None:
        audit.record(
            AuditRecord(
                "lifecycle.event",
                run_id,
                {"event": name, "source": source, **event.fields},
                event.timestamp,
            )
        )
    _dispatcher.deliver(event)
    return event


def flush_events() -> None:
    """Block until every event fired so far has been delivered."""
    _dispatcher.flush()
