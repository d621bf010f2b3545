"""Claude on Google Vertex AI, through the Anthropic SDK's Vertex client.

Region: VERTEX_REGION or CLOUD_ML_REGION. Project: VERTEX_PROJECT_ID,
ANTHROPIC_VERTEX_PROJECT_ID or GOOGLE_CLOUD_PROJECT. Credentials: an OAuth
access token (`api_key` or the `access_token` option), else Google
application-default credentials (GOOGLE_APPLICATION_CREDENTIALS), which need
the google-auth package (`pip install 'anthropic[vertex]'`).
"""

from __future__ import annotations

from typing import Any

from flightdeck.llm._anthropic import AnthropicProvider, caching
from flightdeck.llm._errors import ProviderError
from flightdeck.llm._settings import Settings, has_package, missing


def vertex_provider(settings: Settings) -> AnthropicProvider:
    settings.check_options({"prompt_caching", "region", "project_id", "access_token"})
    region = settings.option("region", "VERTEX_REGION", "CLOUD_ML_REGION")
    if not region:
        raise missing("VERTEX_REGION", "export VERTEX_REGION=us-east5 (or CLOUD_ML_REGION)")
    project = settings.option(
        "project_id", "VERTEX_PROJECT_ID", "ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_CLOUD_PROJECT"
    )
    if not project:
        raise missing("VERTEX_PROJECT_ID", "export VERTEX_PROJECT_ID=<your GCP project>")
    token = settings.api_key or settings.option("access_token")
    if not token and not has_package("google.auth"):
        raise ProviderError(
            "config_error",
            "the vertex provider needs an access token or Google credentials via google-auth, "
            "which is not installed: pip install 'anthropic[vertex]' and set "
            "GOOGLE_APPLICATION_CREDENTIALS",
        )
    kwargs = settings.client_kwargs()
    kwargs.update(region=region, project_id=project, access_token=token)
    kwargs["base_url"] = settings.base_url or settings.first_env("ANTHROPIC_VERTEX_BASE_URL")

    def factory() -> Any:
        import anthropic

        return anthropic.AsyncAnthropicVertex(**kwargs)

    return AnthropicProvider("vertex", settings.model, factory, prompt_caching=caching(settings))
