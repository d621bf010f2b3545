"""Process-local services a step needs, built where the step runs.

A worker builds `StepServices` from the serializable `StepSettings` (the
local executor builds them once per launch). Hosts and tests pass their own
invoker, secret store or provider factory instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from flightdeck.launch.core._invoker import ActionInvoker
from flightdeck.launch.core._secrets import SecretStore
from flightdeck.launch.core._task import StepSettings
from flightdeck.llm import Provider, create_provider

ProviderFactory = Callable[[StepSettings], Provider | None]


def provider_from_settings(settings: StepSettings) -> Provider | None:
    """The configured provider, or None when none is configured. Settings win
    over `FLIGHTDECK_LLM_PROVIDER` / `_MODEL` / `_BASE_URL`."""
    name = settings.llm_provider or os.environ.get("FLIGHTDECK_LLM_PROVIDER")
    if not name:
        return None
    return create_provider(
        name,
        model=settings.llm_model or os.environ.get("FLIGHTDECK_LLM_MODEL"),
        base_url=settings.llm_base_url or os.environ.get("FLIGHTDECK_LLM_BASE_URL"),
    )


@dataclass
class StepServices:
    invoker: ActionInvoker
    secrets: SecretStore
    provider_factory: ProviderFactory = provider_from_settings
