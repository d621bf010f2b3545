"""What crosses the executor boundary: a `StepTask` in, a `StepOutcome` out.

Both are plain JSON data (`to_dict`/`from_dict`), so a distributed executor
can ship them to another process or machine; nothing in them refers to
process-local state. Secrets never appear in either: a credential is looked
up where the step runs, and everything the step returns is scrubbed there.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class StepSettings:
    """Serializable runtime settings a worker needs to build its services."""

    workspace: str = "."
    no_sandbox: bool = False
    retry_attempts: int = 3
    retry_base_delay: float = 0.2
    tool_timeout: float = 300.0
    llm_provider: str | None = None
    llm_model: str | None = None
    llm_base_url: str | None = None
    llm_max_tokens: int = 2048

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class StepTask:
    run_id: str
    step_id: str
    kind: str
    step: dict[str, Any]  # the step's frontmatter object as written
    values: dict[str, Any]  # each binding name -> its resolved value
    launch_time: str
    contract: dict[str, Any] | None = None  # action-call: the trust contract
    approval: str = "not-required"
    step_hosts: list[str] | None = None  # tool: hosts sealed in lock.stepTrust
    replay: dict[str, Any] | None = None  # llm-seam: recorded outputs to reuse
    tool_versions: dict[str, str] | None = None  # tool: lock.resolvedCapabilitySet
    image: str | None = None  # tool: the pinned image (lock.resolvedImages), run inside it
    prompt_context: dict[str, Any] | None = None  # llm-seam: `inputs` and `steps` for tokens
    settings: StepSettings = field(default_factory=StepSettings)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StepTask:
        return cls(**{**data, "settings": StepSettings(**data.get("settings", {}))})


@dataclass
class StepOutcome:
    status: str  # completed | failed
    result: Any = None  # the whole (redacted, scrubbed) result
    outputs: dict[str, Any] = field(default_factory=dict)  # by declared output name
    error: dict[str, Any] | None = None
    attempts: int = 1
    audit: list[dict[str, Any]] = field(default_factory=list)  # {kind, fields}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StepOutcome:
        return cls(**data)

    @classmethod
    def failed(
        cls, error: dict[str, Any], audit: list[dict[str, Any]] | None = None
    ) -> StepOutcome:
        return cls("failed", error=error, audit=audit or [])


def split_outputs(names: list[str], value: Any) -> dict[str, Any]:
    """Map a step's result onto its declared output names: an object with
    every name as a key is split by key; otherwise a single name takes the
    whole value (an action's `{series: [...]}` gives output `series` the
    list; its `{id, url}` gives output `issue` the object)."""
    if not names:
        return {}
    if isinstance(value, dict) and all(name in value for name in names):
        return {name: value[name] for name in names}
    if len(names) == 1:
        return {names[0]: value}
    from flightdeck.launch.core._errors import LaunchError

    raise LaunchError(
        "step.outputs",
        f"the result does not provide the declared outputs {', '.join(names)}",
    )
