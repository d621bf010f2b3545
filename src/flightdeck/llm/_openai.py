"""The OpenAI Chat Completions provider; any OpenAI-compatible server via `base_url`.

Streams with `stream_options.include_usage` so the last chunk carries the
call's usage. Tool-call fragments are accumulated by index and released as
`ToolCallReady` when the choice finishes. Reasoning text that compatible
servers stream as `reasoning_content` (or `reasoning`) becomes thinking.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Callable
from typing import Any
from urllib.parse import urlsplit

import msgspec

from flightdeck._json import JsonError, read_json
from flightdeck.llm._client import ClientSlot
from flightdeck.llm._errors import ProviderError
from flightdeck.llm._openai_request import openai_params
from flightdeck.llm._sdk_errors import map_sdk_error
from flightdeck.llm._settings import Settings, missing
from flightdeck.llm._types import (
    ContentBlock,
    Request,
    Response,
    StopReason,
    StreamDone,
    StreamEvent,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallReady,
    ToolUseBlock,
    Usage,
)

_FINISH: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


class _Call(msgspec.Struct):
    id: str = ""
    name: str = ""
    arguments: list[str] = msgspec.field(default_factory=list)


class _Fold(msgspec.Struct):
    model: str
    text: list[str] = msgspec.field(default_factory=list)
    thinking: list[str] = msgspec.field(default_factory=list)
    calls: dict[int, _Call] = msgspec.field(default_factory=dict)
    finish: str | None = None
    usage: Usage = msgspec.field(default_factory=Usage)
    tool_blocks: list[ToolUseBlock] = msgspec.field(default_factory=list)
    one_call: bool = False  # parallel_tool_calls false was asked for

    def choice(self, choice: Any) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        delta = choice.delta
        if delta is not None:
            reasoning = _reasoning(delta)
            if reasoning:
                self.thinking.append(reasoning)
                out.append(ThinkingDelta(reasoning))
            if delta.content:
                self.text.append(delta.content)
                out.append(TextDelta(delta.content))
            for fragment in delta.tool_calls or ():
                self._fragment(fragment)
        if choice.finish_reason and self.finish is None:
            self.finish = choice.finish_reason
            out.extend(self._release_calls())
        return out

    def _fragment(self, fragment: Any) -> None:
        call = self.calls.setdefault(fragment.index or 0, _Call())
        call.id = fragment.id or call.id
        function = fragment.function
        if function is not None:
            call.name = function.name or call.name
            if function.arguments:
                call.arguments.append(function.arguments)

    def _release_calls(self) -> list[StreamEvent]:
        indexes = sorted(self.calls)
        # Servers that ignore parallel_tool_calls false (llama.cpp's does)
        # get their first call taken at its word, the rest dropped.
        for index in indexes[:1] if self.one_call else indexes:
            call = self.calls[index]
            raw = "".join(call.arguments)
            # An answer cut at the token limit ends in a call cut half-way:
            # the calls before it are whole and are kept; it is not a call.
            last = index == indexes[-1] and len(indexes) > 1
            if self.finish == "length" and last and not _parses(raw):
                break
            arguments = _arguments(raw, call.name, cut=self.finish == "length")
            self.tool_blocks.append(ToolUseBlock(call.id or f"call_{index}", call.name, arguments))
        return [ToolCallReady(block) for block in self.tool_blocks]

    def response(self) -> Response:
        content: list[ContentBlock] = []
        if self.thinking:
            content.append(ThinkingBlock("".join(self.thinking)))
        if self.text:
            content.append(TextBlock("".join(self.text)))
        content.extend(self.tool_blocks)
        stop = _FINISH.get(self.finish or "", "other")
        return Response(content, stop, self.usage, self.model)


class OpenAIProvider:
    """Streams Chat Completions from an `openai.AsyncOpenAI` client built on first use."""

    def __init__(
        self,
        model: str,
        client_factory: Callable[[], Any],
        *,
        max_tokens_field: str = "max_completion_tokens",
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.name = "openai"
        self.model = model
        self.max_tokens_field = max_tokens_field
        self._extra = dict(extra or {})
        self._client = ClientSlot(client_factory)

    def prepare(self) -> None:
        """Build the SDK client ahead of the first call (`flightdeck.llm.warm`)."""
        self._client.prepare()

    async def stream(self, request: Request) -> AsyncGenerator[StreamEvent, None]:
        import openai

        params = openai_params(
            request, self.model, max_tokens_field=self.max_tokens_field, extra=self._extra
        )
        fold = _Fold(params["model"], one_call=params.get("parallel_tool_calls") is False)
        client = self._client.get()
        try:
            raw = await client.chat.completions.create(
                **params, stream=True, stream_options={"include_usage": True}
            )
        except Exception as exc:
            raise map_sdk_error(exc, openai, streaming=False) from exc
        try:
            async for chunk in raw:
                fold.model = chunk.model or fold.model
                if chunk.usage is not None:
                    fold.usage = _usage(chunk.usage)
                for choice in chunk.choices:
                    for out in fold.choice(choice):
                        yield out
        except ProviderError:
            raise
        except Exception as exc:
            raise map_sdk_error(exc, openai, streaming=True) from exc
        finally:
            await raw.close()
        if fold.finish is None:
            message = "the response stream ended before a finish_reason"
            raise ProviderError("stream_interrupted", message, retryable=True)
        yield StreamDone(fold.response())

    async def aclose(self) -> None:
        """Close the SDK client's connections (if one was built)."""
        await self._client.aclose()


def _reasoning(delta: Any) -> str:
    extra = delta.model_extra or {}
    value = extra.get("reasoning_content") or extra.get("reasoning")
    return value if isinstance(value, str) else ""


def _parses(raw: str) -> bool:
    try:
        return isinstance(read_json(raw), dict) if raw.strip() else True
    except JsonError:
        return False


def _arguments(raw: str, name: str, *, cut: bool = False) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        value = read_json(raw)
    except JsonError as exc:
        if cut:  # the same call would stop at the same place: not retryable
            message = (
                f"the model's call to tool {name!r} was cut off at the output token limit"
                " (finish_reason length); raise max_tokens"
            )
            raise ProviderError("provider_error", message) from exc
        message = f"the model sent invalid JSON arguments for tool {name!r}: {exc}"
        raise ProviderError("provider_error", message, retryable=True) from exc
    if not isinstance(value, dict):
        raise ProviderError(
            "provider_error", f"non-object arguments for tool {name!r}", retryable=True
        )
    return value


def _usage(usage: Any) -> Usage:
    details = usage.prompt_tokens_details
    cached = (getattr(details, "cached_tokens", None) or 0) if details is not None else 0
    written = (getattr(details, "cache_write_tokens", None) or 0) if details is not None else 0
    prompt = usage.prompt_tokens or 0
    return Usage(
        input_tokens=max(0, prompt - cached - written),
        output_tokens=usage.completion_tokens or 0,
        cache_read_tokens=cached,
        cache_write_tokens=written,
    )


_VERSION_SEGMENT = re.compile(r"/v\d+[a-z0-9]*$", re.IGNORECASE)
_CHAT_PATH = "/chat/completions"


def compatible_base_url(base_url: str, api_path: Any = None) -> str:
    """The base URL the SDK gets (it appends `/chat/completions`).

    Without `api_path`: a URL whose path does not end in a version segment
    (`/v1`, `/v4`, `/v1beta`) gets `/v1`, as aionrs did before it made
    `/v1` part of the base URL; AionUi strips a trailing `/v1` from the URLs
    it passes, expecting exactly that. With `api_path` (aionrs's compat
    setting, e.g. `/v1/chat/completions`), the endpoint is the base URL plus
    that path, which must end in `/chat/completions`.
    """
    base = base_url.rstrip("/")
    if api_path is None:
        return base if _VERSION_SEGMENT.search(urlsplit(base).path) else base + "/v1"
    if not isinstance(api_path, str) or not api_path.rstrip("/").endswith(_CHAT_PATH):
        message = f"api_path must end with {_CHAT_PATH}, not {api_path!r}"
        raise ProviderError("config_error", message)
    path = api_path.rstrip("/").removesuffix(_CHAT_PATH).strip("/")
    return f"{base}/{path}" if path else base


_TOOL_CHOICES = ("auto", "required", "none")


def tool_options(settings: Settings) -> dict[str, Any]:
    """`tool_choice` (auto, required, none: a turn's first call only, see
    `openai_params`) and `parallel_tool_calls` (a boolean), when set."""
    extra: dict[str, Any] = {}
    choice = settings.options.get("tool_choice")
    if choice is not None:
        if choice not in _TOOL_CHOICES:
            message = f"tool_choice must be one of {', '.join(_TOOL_CHOICES)}, not {choice!r}"
            raise ProviderError("config_error", message)
        extra["tool_choice"] = choice
    parallel = settings.options.get("parallel_tool_calls")
    if parallel is not None:
        if not isinstance(parallel, bool):
            message = f"parallel_tool_calls must be true or false, not {parallel!r}"
            raise ProviderError("config_error", message)
        extra["parallel_tool_calls"] = parallel
    return extra


def openai_provider(settings: Settings) -> OpenAIProvider:
    """The `openai` provider: OPENAI_API_KEY, OPENAI_BASE_URL.

    With a custom base URL (a local OpenAI-compatible server) the key may be
    absent, and `max_tokens` is sent instead of `max_completion_tokens`,
    which older compatible servers do not know.
    """
    settings.check_options(
        {
            "max_tokens_field",
            "reasoning_effort",
            "organization",
            "api_path",
            "tool_choice",
            "parallel_tool_calls",
        }
    )
    base_url = settings.base_url or settings.first_env("OPENAI_BASE_URL")
    if base_url:
        base_url = compatible_base_url(base_url, settings.options.get("api_path"))
    api_key = settings.api_key or settings.first_env("OPENAI_API_KEY")
    if not api_key and not base_url:
        raise missing("OPENAI_API_KEY", "export OPENAI_API_KEY=sk-... to use the openai provider")
    field_name = settings.options.get("max_tokens_field") or (
        "max_tokens" if base_url else "max_completion_tokens"
    )
    if field_name not in ("max_tokens", "max_completion_tokens"):
        message = (
            f"max_tokens_field must be max_tokens or max_completion_tokens, not {field_name!r}"
        )
        raise ProviderError("config_error", message)
    extra = tool_options(settings)
    if settings.options.get("reasoning_effort"):
        extra["reasoning_effort"] = settings.options["reasoning_effort"]
    organization = settings.option("organization", "OPENAI_ORG_ID")
    factory = client_factory(settings, base_url, api_key, organization=organization)
    return OpenAIProvider(settings.model, factory, max_tokens_field=field_name, extra=extra)


def client_factory(
    settings: Settings,
    base_url: str | None,
    api_key: str | None,
    *,
    organization: str | None = None,
) -> Callable[[], Any]:
    """What builds the SDK client (on first use): a server on this machine
    gets a connection per call (`fresh_connections`)."""
    kwargs = settings.client_kwargs()

    def factory() -> Any:
        import openai

        if base_url and is_loopback(base_url):
            kwargs.setdefault("http_client", fresh_connections())
        return openai.AsyncOpenAI(
            api_key=api_key or "not-needed",
            base_url=base_url,
            organization=organization,
            **kwargs,
        )

    return factory


def is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host == "localhost" or host == "::1" or host.startswith("127.")


def fresh_connections() -> Any:
    """An HTTP client that opens a connection per request. llama.cpp's server
    sometimes drops a kept-alive connection just as the next request is sent
    on it ("Server disconnected without sending a response", about one call
    in twenty when two clients take turns, docs/llm.md); on loopback a new
    connection costs next to nothing, and a call never meets a stale one."""
    import httpx2  # the openai SDK's HTTP library
    import openai

    limits = httpx2.Limits(max_connections=100, max_keepalive_connections=0)
    return openai.DefaultAsyncHttpxClient(limits=limits)
