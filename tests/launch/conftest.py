"""Helpers: write a plan, run it in memory with handler-backed actions."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from flightdeck.audit import MemoryAuditSink
from flightdeck.launch import (
    Approvals,
    HandlerInvoker,
    Journal,
    LaunchOptions,
    RunResult,
    Runtime,
    SecretStore,
    StepServices,
    StepSettings,
    launch,
)
from flightdeck.llm import Provider

READ_CONTRACT: dict[str, Any] = {
    "credential": {"kind": "none"},
    "hosts": ["api.example.com"],
    "effect": "read",
    "idempotency": {"safeToRetry": True, "idempotencyKey": False},
    "audit": {
        "fields": [
            "connector-hash",
            "action-manifest-version",
            "credential-binding",
            "identity-label",
            "approved-input",
            "approval-decision",
            "network-target",
            "operation-effect",
            "request-summary",
            "response-summary",
            "result",
        ]
    },
}


def contract(**changes: Any) -> dict[str, Any]:
    out = {**READ_CONTRACT, **changes}
    return out


def write_plan(
    folder: Path,
    *,
    steps: list[dict[str, Any]],
    inputs: list[dict[str, Any]] | None = None,
    outputs: list[dict[str, Any]] | None = None,
    actions: dict[str, dict[str, Any]] | None = None,
    name: str = "test-plan",
    environment: dict[str, Any] | None = None,
) -> Path:
    block: dict[str, Any] = {
        "schemaVersion": "aileron.flightplan.v1",
        "inputs": inputs or [],
        "outputs": outputs or [],
        "steps": steps,
    }
    if environment:
        block["environment"] = environment
    if actions:
        block["requires"] = {
            "actions": [{"ref": ref, "trustContract": tc} for ref, tc in actions.items()]
        }
    data = {"name": name, "description": "A plan written by a test.", "aileron": block}
    path = folder / "SKILL.md"
    path.write_text("---\n" + yaml.safe_dump(data, sort_keys=False) + "---\n# Test\n", "utf-8")
    return path


class Harness:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.audit = MemoryAuditSink()
        self.journal = Journal(tmp / "runs.sqlite3")
        self.handlers: dict[str, Callable[..., Any]] = {}
        self.env: dict[str, str] = {}
        self.provider: Provider | None = None

    def runtime(self) -> Runtime:
        services = StepServices(
            HandlerInvoker(self.handlers),
            SecretStore(env=self.env, path=self.tmp / "secrets.toml"),
            lambda settings: self.provider,
        )
        return Runtime(services, journal=self.journal, audit=self.audit)

    def run(self, plan: Path | None, **options: Any) -> RunResult:
        options.setdefault("unsigned", True)
        options.setdefault("out_dir", self.tmp / "out")
        settings = options.pop("settings", StepSettings(retry_base_delay=0.0))
        approve = options.pop("approve", ())
        opts = LaunchOptions(settings=settings, approvals=Approvals.build(approve), **options)
        return asyncio.run(launch(plan, opts, self.runtime()))

    def records(self, kind: str | None = None) -> list[dict[str, Any]]:
        return [dict(r.fields) for r in self.audit.records(kind=kind)]


@pytest.fixture
def harness(tmp_path: Path) -> Harness:
    return Harness(tmp_path)
