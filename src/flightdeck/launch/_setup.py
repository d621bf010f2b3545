"""Build a launch's runtime from the workspace configuration.

Configuration (`flightdeck.toml` in the workspace, or the user config):

    [launch]
    driver_libraries = ["~/drivers"]     # searched after <workspace>/.drivers
    [llm]
    provider = "openai"                  # or anthropic; env FLIGHTDECK_LLM_PROVIDER
    model = "llama3.1"
    base_url = "http://127.0.0.1:8000/v1"
    [audit.sinks]
    "audit/tracker-writes" = "jsonl:~/audit/tracker.jsonl"
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flightdeck.audit import default_sink
from flightdeck.config import ConfigError, load_config
from flightdeck.launch._audit import sink_from_spec
from flightdeck.launch._drivers import DriverInvoker
from flightdeck.launch._errors import LaunchError
from flightdeck.launch._journal import Journal
from flightdeck.launch._launch import Runtime
from flightdeck.launch._secrets import SecretStore
from flightdeck.launch._services import StepServices
from flightdeck.launch._task import StepSettings


def _config(workspace: Path) -> Any:
    try:
        return load_config(workspace)
    except ConfigError as exc:
        raise LaunchError(exc.code, str(exc)) from None


def configured_settings(workspace: Path, **overrides: Any) -> StepSettings:
    """Step settings: explicit overrides (CLI flags), then the config files."""
    config = _config(workspace)
    values: dict[str, Any] = {
        "workspace": str(workspace),
        "llm_provider": config.get("llm.provider"),
        "llm_model": config.get("llm.model"),
        "llm_base_url": config.get("llm.base_url"),
    }
    values.update({key: value for key, value in overrides.items() if value is not None})
    return StepSettings(**values)


def configured_runtime(workspace: Path) -> Runtime:
    config = _config(workspace)
    libraries = [Path(p).expanduser() for p in config.get("launch.driver_libraries", []) or []]
    sinks = config.get("audit.sinks", {}) or {}
    return Runtime(
        services=StepServices(DriverInvoker(workspace, libraries), SecretStore()),
        journal=Journal(),
        audit=default_sink(),
        audit_sinks={str(ref): sink_from_spec(str(spec)) for ref, spec in sinks.items()},
    )
