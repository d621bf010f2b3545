"""Run an llm-seam step: the only step kind that reaches a model.

The prompt is the step's `prompt` rendered (Jinja2 sandbox, strict
undefined) with its bindings; without a `prompt`, the bindings are sent as
JSON under a fixed instruction. The model's text becomes the output (a
single declared output), or is parsed as a JSON object keyed by the
declared outputs. With `--replay RUN_ID` the recorded outputs are reused and
no model is called.
"""

from __future__ import annotations

import json
from typing import Any

from flightdeck._json import read_json
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.core._services import StepServices
from flightdeck.launch.core._task import StepOutcome, StepTask, split_outputs
from flightdeck.launch.core._values import sha256_hex, value_hash
from flightdeck.llm import Message, ProviderError, Request, TextBlock, complete

NOT_CONFIGURED_HINT = (
    "configure a provider: --llm-provider anthropic|openai (or FLIGHTDECK_LLM_PROVIDER) with"
    " ANTHROPIC_API_KEY / OPENAI_API_KEY; for a local OpenAI-compatible server add"
    " --llm-base-url http://127.0.0.1:8000/v1 (FLIGHTDECK_LLM_BASE_URL) and --llm-model NAME"
)
DEFAULT_INSTRUCTION = "Use the following inputs (JSON) to produce the requested output."


def render_prompt(task: StepTask) -> str:
    from jinja2 import StrictUndefined, TemplateError
    from jinja2.sandbox import SandboxedEnvironment

    source = task.step.get("prompt")
    if not isinstance(source, str):
        return DEFAULT_INSTRUCTION + "\n\n" + json.dumps(task.values, indent=2, sort_keys=True)
    env = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False)
    env.filters["tojson"] = lambda value: json.dumps(value, sort_keys=True, ensure_ascii=False)
    try:
        return env.from_string(source).render(**{**(task.prompt_context or {}), **task.values})
    except TemplateError as exc:
        raise LaunchError("seam.prompt", f"prompt template: {exc}") from None


async def run_seam(task: StepTask, services: StepServices) -> StepOutcome:
    names = list(task.step.get("outputs", []))
    try:
        if task.replay is not None:
            return _replayed(task, names)
        prompt = render_prompt(task)
        provider = services.provider_factory(task.settings)
        if provider is None:
            raise LaunchError(
                "llm.not_configured",
                "this plan has an llm-seam step but no model provider is configured",
                hint=NOT_CONFIGURED_HINT,
            )
        model = str(task.step.get("model") or "")
        request = Request(
            model=model,
            messages=[Message("user", [TextBlock(prompt)])],
            max_tokens=task.settings.llm_max_tokens,
            temperature=0.0,
        )
        response = await complete(provider, request)
        text = "".join(b.text for b in response.content if isinstance(b, TextBlock))
        value: Any = text if len(names) == 1 else _json_object(text)
        outputs = split_outputs(names, value)
    except ProviderError as exc:
        error = LaunchError("llm.failed", f"{exc}", hint=NOT_CONFIGURED_HINT)
        error.step = task.step_id
        return StepOutcome.failed(error.to_dict())
    except LaunchError as exc:
        exc.step = task.step_id
        return StepOutcome.failed(exc.to_dict())
    record = {
        "step": task.step_id,
        "provider": getattr(provider, "name", "?"),
        "model": response.model or model,
        "prompt_sha256": "sha256:" + sha256_hex(prompt.encode("utf-8")),
        "response": value_hash(value),
        "usage": {"input": response.usage.input_tokens, "output": response.usage.output_tokens},
        "replayed": False,
    }
    return StepOutcome(
        "completed",
        result=value,
        outputs=outputs,
        audit=[{"kind": "launch.llm_seam", "fields": record}],
    )


def _replayed(task: StepTask, names: list[str]) -> StepOutcome:
    replay = task.replay or {}
    if not all(name in replay.get("outputs", {}) for name in names):
        raise LaunchError(
            "replay.missing", f"the replayed run has no recorded output for {task.step_id}"
        )
    record = {"step": task.step_id, "replayed": True, "response": value_hash(replay.get("result"))}
    return StepOutcome(
        "completed",
        result=replay.get("result"),
        outputs=dict(replay["outputs"]),
        audit=[{"kind": "launch.llm_seam", "fields": record}],
    )


def _json_object(text: str) -> Any:
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    try:
        return read_json(body)
    except ValueError:  # not JSON, or a model's answer nested too deep
        raise LaunchError(
            "seam.not_json", "a seam with several outputs must answer one JSON object"
        ) from None
