"""What a launch runs with: the process-local `Runtime`, and the `RunEngine`
that walks a run somewhere other than this process."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from flightdeck.audit import AuditSink, default_sink
from flightdeck.flightplan import FlightPlan, Keyring, SkillStore, TrustState
from flightdeck.launch.core._services import StepServices
from flightdeck.launch.engine._conclude import RunResult
from flightdeck.launch.engine._executor import Executor
from flightdeck.launch.engine._journal import Journal
from flightdeck.launch.engine._probe import ProbeResult
from flightdeck.launch.engine._scheduler import Scheduler
from flightdeck.launch.engine._target import VerifiedTarget


class RunEngine(Protocol):
    """Walks a prepared run somewhere other than this process (Temporal:
    `temporal._client.TemporalEngine`) and returns its result, or a
    `running` result when it detaches. The journal records `executor` and
    `cluster()` with the run, so that its resume comes back here."""

    executor: ClassVar[str]
    # True: a new run's `source` inputs are read where its steps run, not by
    # the launcher; `run` then gets them as `deferred` (docs/launch.md).
    reads_sources: ClassVar[bool]

    def cluster(self) -> dict[str, Any]: ...

    async def run(
        self,
        scheduler: Scheduler,
        verified: VerifiedTarget,
        out_dir: Path,
        deferred: Mapping[str, Any] | None = None,
    ) -> RunResult:
        """`deferred`: `reads` (`{input, task}` per source read, in order) and
        `record` (the `launch.run` record without the reads), for the engine
        to read the sources, record them and the run, then walk it."""
        ...

    async def verify_credentials(self, plan: FlightPlan, run_id: str) -> list[ProbeResult]:
        """The plan's credential probes (`launch --verify-credentials`), run
        where its steps run, each audited there; the launcher raises for a
        failed one (`check_probes`)."""
        ...

    async def check_resumable(self, run_id: str, recorded: Mapping[str, Any] | None) -> None:
        """Raise a `LaunchError` unless the run is known not to walk there
        (`recorded`: the cluster the journal holds for it): a resume must
        not touch its journal rows while its steps may still finish."""


@dataclass
class Runtime:
    """The process-local pieces of a launch; every one can be replaced."""

    services: StepServices
    executor: Executor | None = None
    journal: Journal = field(default_factory=Journal)
    audit: AuditSink = field(default_factory=default_sink)
    audit_sinks: Mapping[str, AuditSink] = field(default_factory=dict)
    store: SkillStore | None = None
    keyring: Keyring | None = None
    expected_key: bytes | None = None  # `launch --key PUB`: the signer must be this key
    # `launch NAME@VERSION --allow-rollback`: run a version older than the
    # newest verified (verify's rule: only when the version is named).
    allow_rollback: bool = False
    trust: TrustState | None = None  # default: data_dir()/trust.json
    engine: RunEngine | None = None  # None: the scheduler walks the graph in this process
