"""create_provider: names, credentials from arguments or environment, config errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import flightdeck.llm
from flightdeck.llm import (
    PROVIDER_NAMES,
    AnthropicProvider,
    OpenAIProvider,
    Provider,
    ProviderError,
    create_provider,
    default_model,
)

REPO = Path(__file__).parents[2]


def config_error(name: str, **kwargs: object) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        create_provider(name, **kwargs)  # type: ignore[arg-type]
    assert info.value.code == "config_error" and not info.value.retryable
    return info.value


def test_public_names_are_exactly_all() -> None:
    public = {n for n in dir(flightdeck.llm) if not n.startswith("_")}
    assert set(flightdeck.llm.__all__) == public - {"annotations"}
    # isort-style order, as ruff keeps it: CONSTANTS, Classes, functions.
    order = sorted(flightdeck.llm.__all__, key=lambda n: (not n.isupper(), n[0].islower(), n))
    assert flightdeck.llm.__all__ == order


def test_every_provider_name_has_a_default_model() -> None:
    assert PROVIDER_NAMES == ("anthropic", "openai", "bedrock", "vertex", "local")
    assert default_model("local") == "auto"  # the first model the server lists
    assert all(default_model(n) for n in PROVIDER_NAMES)
    assert default_model("anthropic").startswith("claude")


def test_unknown_provider_is_config_error_listing_choices() -> None:
    error = config_error("gemini", env={})
    assert "gemini" in error.message and "anthropic, openai, bedrock, vertex" in error.message


def test_spec_4_3_missing_anthropic_key_says_not_set() -> None:
    """Seed 002 §4.3: a missing key is a config_error "ANTHROPIC_API_KEY not set"."""
    assert config_error("anthropic", env={}).message.startswith("ANTHROPIC_API_KEY not set")


def test_missing_openai_key_says_how_to_set_it() -> None:
    assert "export OPENAI_API_KEY" in config_error("openai", env={}).message


def test_spec_5_provider_variables_are_read() -> None:
    """Seed 002 §5: each provider reads its environment variables."""
    anthropic = create_provider("anthropic", env={"ANTHROPIC_API_KEY": "k"})
    openai = create_provider("openai", env={"OPENAI_API_KEY": "k"})
    bedrock = create_provider(
        "bedrock", env={"AWS_REGION": "eu-west-1", "AWS_BEARER_TOKEN_BEDROCK": "t"}
    )
    vertex_env = {"VERTEX_REGION": "us-east5", "VERTEX_PROJECT_ID": "p"}
    vertex = create_provider("vertex", api_key="token", env=vertex_env)
    local = create_provider("local", env={"FLIGHTDECK_LOCAL_BASE_URL": "http://127.0.0.1:9/v1"})
    for provider in (anthropic, openai, bedrock, vertex, local):
        assert isinstance(provider, Provider)
    assert isinstance(anthropic, AnthropicProvider) and isinstance(openai, OpenAIProvider)
    names = [p.name for p in (anthropic, openai, bedrock, vertex, local)]
    assert names == list(PROVIDER_NAMES)


def test_argument_beats_environment_and_model_is_kept() -> None:
    p = create_provider("anthropic", api_key="arg", model="claude-x", env={})
    assert isinstance(p, AnthropicProvider) and p.model == "claude-x"


def test_bedrock_needs_region_and_credentials() -> None:
    assert config_error("bedrock", env={}).message.startswith("AWS_REGION not set")
    error = config_error("bedrock", env={"AWS_REGION": "us-east-1"})
    assert "AWS_ACCESS_KEY_ID" in error.message and "AWS_PROFILE" in error.message


def test_vertex_needs_region_and_project() -> None:
    assert config_error("vertex", env={}).message.startswith("VERTEX_REGION not set")
    error = config_error("vertex", api_key="t", env={"CLOUD_ML_REGION": "us-east5"})
    assert error.message.startswith("VERTEX_PROJECT_ID not set")


def test_unknown_option_is_config_error() -> None:
    error = config_error("anthropic", api_key="k", options={"temprature": 1}, env={})
    assert "temprature" in error.message and "prompt_caching" in error.message


def test_bad_max_tokens_field_is_config_error() -> None:
    error = config_error("openai", api_key="k", options={"max_tokens_field": "tokens"}, env={})
    assert "max_tokens_field" in error.message and "'tokens'" in error.message
    assert "max_completion_tokens" in error.message  # says what is accepted


def _python(code: str) -> dict[str, bool]:
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    result: dict[str, bool] = json.loads(out)
    return result


def test_importing_and_creating_providers_does_not_import_sdks() -> None:
    """Start-up stays fast: SDKs load on a provider's first call only."""
    code = (
        "import sys, json\n"
        "import flightdeck.llm as llm\n"
        "llm.create_provider('anthropic', api_key='k')\n"
        "llm.create_provider('openai', api_key='k')\n"
        "sdks = ('anthropic', 'openai', 'httpx', 'httpx2')\n"
        "print(json.dumps({m: m in sys.modules for m in sdks}))"
    )
    assert _python(code) == {"anthropic": False, "openai": False, "httpx": False, "httpx2": False}
