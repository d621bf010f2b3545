"""Build a launch's runtime from the workspace configuration.

Configuration (`flightdeck.toml` in the workspace, or the user config):

    [launch]
    driver_libraries = ["~/drivers"]     # searched after <workspace>/.drivers
    max_tries = 3                        # tries of a safeToRetry call (integer >= 1)
    backoff_seconds = 0.2                # first retry delay, doubled each try (>= 0)
    [llm]
    provider = "openai"                  # or anthropic; env FLIGHTDECK_LLM_PROVIDER
    model = "llama3.1"
    base_url = "http://127.0.0.1:8000/v1"
    max_tokens = 2048                    # output limit of one llm-seam call (>= 1)
    [audit.sinks]
    "audit/tracker-writes" = "jsonl:~/audit/tracker.jsonl"
    [temporal]                           # `launch --executor temporal`, `worker`
    executor = "temporal"                # the default executor of `launch` (else local)
    address = "temporal.internal:7233"
    task_queue = "flightdeck"
    tool_task_queue = "tools"            # tool steps only on workers serving this queue
    namespace = "default"
    heartbeat_timeout = 30               # seconds before a silent worker's step moves on
    sticky_timeout = 10                  # worker: seconds a run's next task waits for the
                                         # worker that holds it cached
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flightdeck.audit import default_sink
from flightdeck.config import ConfigError, load_config
from flightdeck.launch._drivers import DriverInvoker
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.core._secrets import SecretStore
from flightdeck.launch.core._services import StepServices
from flightdeck.launch.core._task import StepSettings
from flightdeck.launch.engine._audit import sink_from_spec
from flightdeck.launch.engine._journal import Journal
from flightdeck.launch.engine._route import TemporalSettings
from flightdeck.launch.engine._runtime import Runtime

if TYPE_CHECKING:
    from flightdeck.flightplan import FeatureCatalog
    from flightdeck.launch.compose._composer import FeatureComposer


def _config(workspace: Path) -> Any:
    try:
        return load_config(workspace)
    except ConfigError as exc:
        raise LaunchError(exc.code, str(exc)) from None


# What a workspace's own `flightdeck.toml` may decide only when the user
# trusts the workspace (`flightdeck.config.decide_trust`): where the user's
# LLM key and a launch's plan and inputs are sent, which files audit records
# are appended to, which folders' Python code is imported. A cloned
# repository writes that file; launching one of its plans must not send the
# user's key to its server. Everything else in the file is taken as written.
GUARDED = {
    "llm.base_url": "where the llm-seam's requests, and the API key, are sent",
    "temporal.address": "the Temporal cluster a new launch sends its plan and inputs to",
    "audit.sinks": "files audit records are appended to",
    "launch.driver_libraries": "folders whose Python code is imported",
    "catalog.file": "the tool catalog whose Features' install.sh freeze runs",
}


def _untrusted(config: Any, workspace: Path, keys: tuple[str, ...]) -> list[str]:
    """The keys of `keys` the workspace's own file sets when the user does
    not trust the workspace (none when it is trusted)."""
    named = [key for key in keys if _sets(config.project, key)]
    if not named:
        return []
    from flightdeck.config import decide_trust

    return [] if decide_trust(workspace).trusted else named


def _guard(config: Any, workspace: Path, keys: tuple[str, ...]) -> None:
    """Refuse the keys of `keys` that an untrusted workspace's own file sets
    (`workspace.untrusted`)."""
    named = _untrusted(config, workspace, keys)
    if named:
        raise _refusal(workspace, named)


def _refusal(workspace: Path, named: list[str]) -> LaunchError:
    from flightdeck.config import UNTRUSTED

    listed = "; ".join(
        f"[{key.rsplit('.', 1)[0]}] {key.rsplit('.', 1)[1]} ({GUARDED[key]})" for key in named
    )
    return LaunchError(
        UNTRUSTED,
        f"{workspace / 'flightdeck.toml'} sets {listed}, and this workspace is not trusted",
        hint=f"if you wrote it or have read it: flightdeck config trust {workspace}"
        " (or move the setting to your own config.toml, or pass it as a flag)",
    )


def _sets(data: Any, dotted: str) -> bool:
    for part in dotted.split("."):
        if not isinstance(data, dict) or part not in data:
            return False
        data = data[part]
    return True


def configured_settings(workspace: Path, **overrides: Any) -> StepSettings:
    """Step settings: explicit overrides (CLI flags), then the config files."""
    config = _config(workspace)
    if overrides.get("llm_base_url") is None:
        _guard(config, workspace, ("llm.base_url",))
    values: dict[str, Any] = {
        "workspace": str(workspace),
        "llm_provider": config.get("llm.provider"),
        "llm_model": config.get("llm.model"),
        "llm_base_url": config.get("llm.base_url"),
        **_retry_settings(config),
        **_llm_settings(config),
    }
    values.update({key: value for key, value in overrides.items() if value is not None})
    return StepSettings(**values)


# An upper bound keeps a typo (max_tries = 1000) from hammering an upstream.
MAX_TRIES_LIMIT = 100


def _retry_settings(config: Any) -> dict[str, Any]:
    """`[launch] max_tries` / `backoff_seconds`, validated (`config.invalid`
    naming the key and the file it was read from)."""
    out: dict[str, Any] = {}
    tries = config.get("launch.max_tries")
    if tries is not None:
        if (
            isinstance(tries, bool)
            or not isinstance(tries, int)
            or not 1 <= tries <= MAX_TRIES_LIMIT
        ):
            _invalid(config, "max_tries", f"an integer from 1 to {MAX_TRIES_LIMIT}", tries)
        out["retry_attempts"] = tries
    backoff = config.get("launch.backoff_seconds")
    if backoff is not None:
        number = isinstance(backoff, (int, float)) and not isinstance(backoff, bool)
        if not number or not math.isfinite(backoff) or not 0 <= backoff <= 3600:
            _invalid(config, "backoff_seconds", "a number of seconds from 0 to 3600", backoff)
        out["retry_base_delay"] = float(backoff)
    return out


def _llm_settings(config: Any) -> dict[str, Any]:
    """`[llm] max_tokens`, validated like the retry settings."""
    value = config.get("llm.max_tokens")
    if value is None:
        return {}
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1_000_000:
        _invalid(config, "max_tokens", "an integer from 1 to 1000000", value, table="llm")
    return {"llm_max_tokens": value}


_DEFAULTS = {
    "max_tokens": "2048",
    "max_tries": "3",
    "backoff_seconds": "0.2",
    "executor": "local",
    "task_queue": "flightdeck",
    "tool_task_queue": "the task queue",
    "namespace": "default",
    "heartbeat_timeout": "30",
    "sticky_timeout": "10",
    "address": "none",
}


def _invalid(config: Any, key: str, wanted: str, got: Any, table: str = "launch") -> None:
    where = ", ".join(str(path) for path in config.sources) or "the configuration"
    raise LaunchError(
        "config.invalid",
        f"[{table}] {key} must be {wanted}, got {got!r} (in {where})",
        hint=f"fix or remove [{table}] {key}; the default is {_DEFAULTS[key]}",
    )


def configured_temporal(workspace: Path, **overrides: Any) -> TemporalSettings:
    """Flags (`overrides`) first, then `[temporal]`. An untrusted workspace's
    own `address` is refused when a new launch would go there (the executor
    is temporal) and otherwise not used (the user's own file's, if any)."""
    config = _config(workspace)
    values: dict[str, Any] = {}
    for key in ("executor", "address", "task_queue", "tool_task_queue", "namespace"):
        value = config.get(f"temporal.{key}")
        if value is not None:
            if not isinstance(value, str) or not value:
                _invalid(config, key, "a non-empty string", value, table="temporal")
            values[key] = value
    if values.get("executor", "local") not in ("local", "temporal"):
        _invalid(config, "executor", '"local" or "temporal"', values["executor"], table="temporal")
    for key in ("heartbeat_timeout", "sticky_timeout"):
        seconds = config.get(f"temporal.{key}")
        if seconds is not None:
            number = isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
            if not number or not math.isfinite(seconds) or not 1 <= seconds <= 86400:
                _invalid(config, key, "seconds from 1 to 86400", seconds, table="temporal")
            values[key] = float(seconds)
    values.update({key: value for key, value in overrides.items() if value is not None})
    if overrides.get("address") is None and _untrusted(config, workspace, ("temporal.address",)):
        if values.get("executor") == "temporal":
            raise _refusal(workspace, ["temporal.address"])
        mine = config.user.get("temporal", {})
        values["address"] = mine.get("address") if isinstance(mine, dict) else None
    return TemporalSettings(**values)


def _libraries(config: Any) -> list[Path]:
    return [Path(p).expanduser() for p in config.get("launch.driver_libraries", []) or []]


def code_resolver(workspace: Path) -> DriverInvoker:
    """What freeze pins action refs with: the drivers launch would resolve in
    this workspace (`.drivers/`, then `[launch] driver_libraries`)."""
    config = _config(workspace)
    _guard(config, workspace, ("launch.driver_libraries",))
    return DriverInvoker(workspace, _libraries(config))


def catalog_composer(
    workspace: Path, given: Path | None, insecure_hosts: frozenset[str] = frozenset()
) -> tuple[FeatureCatalog | None, FeatureComposer | None]:
    """What freeze composes tools with: the catalog file (`given`, else
    `[catalog] file` of this workspace's configuration, relative to the
    workspace) and a composer within the workspace's `[images]` limits;
    (None, None) without one, and tools are checked on the host as before."""
    from flightdeck.flightplan import load_feature_catalog
    from flightdeck.launch.compose._composer import FeatureComposer
    from flightdeck.launch.image._pull_limits import configured_limits

    if given is None:
        config = _config(workspace)
        _guard(config, workspace, ("catalog.file",))
        named = config.get("catalog.file")
        if named is None:
            return None, None
        if not isinstance(named, str) or not named:
            raise LaunchError("config.invalid", "[catalog] file must be a path")
        given = workspace / Path(named).expanduser()
    catalog = load_feature_catalog(given)
    limits = configured_limits(workspace)
    return catalog, FeatureComposer(insecure_hosts=insecure_hosts, limits=limits)


def configured_runtime(workspace: Path) -> Runtime:
    config = _config(workspace)
    _guard(config, workspace, ("launch.driver_libraries", "audit.sinks"))
    libraries = _libraries(config)
    sinks = config.get("audit.sinks", {}) or {}
    return Runtime(
        services=StepServices(DriverInvoker(workspace, libraries), SecretStore()),
        journal=Journal(),
        audit=default_sink(),
        audit_sinks={str(ref): sink_from_spec(str(spec)) for ref, spec in sinks.items()},
    )
