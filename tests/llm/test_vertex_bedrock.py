"""Bedrock and Vertex reuse the Anthropic mapping through the SDK's clients."""

from __future__ import annotations

from flightdeck.llm import AnthropicProvider, TextBlock, ToolCallReady, create_provider
from tests.fakes import FakeLLMServer, ToolCall, Turn
from tests.llm._helpers import request, stream


def test_vertex_streams_through_raw_predict() -> None:
    turn = Turn(text="from vertex", tool_calls=[ToolCall("Glob", {"pattern": "*.py"})])
    with FakeLLMServer([turn]) as server:
        provider = create_provider(
            "vertex",
            api_key="ya29.token",
            base_url=server.base_url + "/v1",
            env={"VERTEX_REGION": "us-east5", "VERTEX_PROJECT_ID": "proj"},
        )
        events, response = stream(provider, request(model="claude-x@1"))
        received = server.received[0]
    assert received.path.endswith(
        "/projects/proj/locations/us-east5/publishers/anthropic/models/claude-x@1:streamRawPredict"
    )
    assert received.headers["authorization"] == "Bearer ya29.token"
    assert "anthropic_version" in received.body
    assert "model" not in received.body  # Vertex takes the model from the URL
    assert response.content[0] == TextBlock("from vertex")
    assert [e.call.name for e in events if isinstance(e, ToolCallReady)] == ["Glob"]


def test_bedrock_is_an_anthropic_provider_with_bedrock_name() -> None:
    env = {"AWS_REGION": "us-west-2", "AWS_BEARER_TOKEN_BEDROCK": "tok"}
    provider = create_provider("bedrock", env=env)
    assert isinstance(provider, AnthropicProvider)
    assert provider.name == "bedrock"
    assert provider.model.startswith("us.anthropic.claude")
