"""Claude on Amazon Bedrock, through the Anthropic SDK's Bedrock client.

Credentials: AWS_BEARER_TOKEN_BEDROCK (or `api_key`), else AWS_ACCESS_KEY_ID +
AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN) or AWS_PROFILE, which the SDK
signs with boto3 (installed with `pip install 'anthropic[bedrock]'`).
"""

from __future__ import annotations

from typing import Any

from flightdeck.llm._anthropic import AnthropicProvider, caching
from flightdeck.llm._errors import ProviderError
from flightdeck.llm._settings import Settings, has_package, missing


def bedrock_provider(settings: Settings) -> AnthropicProvider:
    settings.check_options({"prompt_caching", "aws_region", "aws_profile"})
    region = settings.option("aws_region", "AWS_REGION", "AWS_DEFAULT_REGION")
    if not region:
        raise missing("AWS_REGION", "export AWS_REGION=us-east-1 (the Bedrock region to call)")
    kwargs = settings.client_kwargs() | _credentials(settings)
    kwargs["aws_region"] = region
    kwargs["base_url"] = settings.base_url or settings.first_env("ANTHROPIC_BEDROCK_BASE_URL")

    def factory() -> Any:
        import anthropic

        return anthropic.AsyncAnthropicBedrock(**kwargs)

    return AnthropicProvider("bedrock", settings.model, factory, prompt_caching=caching(settings))


def _credentials(settings: Settings) -> dict[str, Any]:
    token = settings.api_key or settings.first_env("AWS_BEARER_TOKEN_BEDROCK")
    if token:
        return {"api_key": token}
    access = settings.first_env("AWS_ACCESS_KEY_ID")
    secret = settings.first_env("AWS_SECRET_ACCESS_KEY")
    profile = settings.option("aws_profile", "AWS_PROFILE")
    if not (access and secret) and not profile:
        raise missing(
            "AWS credentials",
            "export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, "
            "or AWS_BEARER_TOKEN_BEDROCK to use the bedrock provider",
        )
    if not has_package("boto3"):
        raise ProviderError(
            "config_error",
            "the bedrock provider signs requests with boto3, which is not installed: "
            "pip install 'anthropic[bedrock]' (or use AWS_BEARER_TOKEN_BEDROCK)",
        )
    if profile and not (access and secret):
        return {"aws_profile": profile}
    return {
        "aws_access_key": access,
        "aws_secret_key": secret,
        "aws_session_token": settings.first_env("AWS_SESSION_TOKEN"),
    }
