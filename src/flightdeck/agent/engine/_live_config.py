"""What a host may change while the agent runs (aionrs's `set_config`), and
the capabilities the agent reports in `ready` and `config_changed`.

Changes are computed here as a new `AgentSettings` plus a `LiveConfig` and a
list of human-readable change notes; the session applies them from the next
turn. Field names and values follow aionrs (crates/aion-protocol/src/
commands.rs and crates/aion-agent/src/engine.rs `apply_config_update`).
"""

from __future__ import annotations

from typing import Literal

import msgspec
from msgspec.structs import replace

from flightdeck.agent.engine._settings import EFFORT_LEVELS as EFFORT_LEVELS
from flightdeck.agent.engine._settings import AgentSettings
from flightdeck.agent.protocol import _models as p

Compaction = Literal["off", "safe", "full"]
# Used when `thinking: "enabled"` comes without a budget and none was set.
DEFAULT_THINKING_BUDGET = 10_000
MIN_THINKING_BUDGET = 1024


class LiveConfig(msgspec.Struct, frozen=True):
    image_input: p.ImageInput = "unknown"
    effort: str | None = None
    compaction: Compaction = "safe"
    # `[agent] context_window` as configured; `compaction = "off"` hides it.
    context_window: int | None = None


def initial(settings: AgentSettings) -> LiveConfig:
    effort = settings.provider_options.get("reasoning_effort")
    return LiveConfig(
        effort=effort if isinstance(effort, str) else None,
        context_window=settings.context_window,
    )


def capabilities(
    settings: AgentSettings, live: LiveConfig, mode: p.Mode, mcp: bool
) -> p.Capabilities:
    levels = list(EFFORT_LEVELS.get(settings.provider, ()))
    return p.Capabilities(
        tool_approval=True,
        thinking=settings.thinking_budget is not None,
        mcp=mcp,
        image_input=live.image_input,
        effort=bool(levels),
        effort_levels=levels,
        modes=list(p.MODES),
        current_mode=mode,
    )


def effective(settings: AgentSettings, live: LiveConfig) -> p.EffectiveConfig:
    return p.EffectiveConfig(
        model=settings.model or "",
        thinking="enabled" if settings.thinking_budget is not None else "disabled",
        thinking_budget=settings.thinking_budget,
        effort=live.effort,
        compaction=live.compaction,
        image_input=live.image_input,
    )


class Update(msgspec.Struct, frozen=True):
    settings: AgentSettings
    live: LiveConfig
    changes: list[str]
    # the provider must be rebuilt (its options changed)
    rebuild: bool = False


def apply(settings: AgentSettings, live: LiveConfig, cmd: p.SetConfigCommand) -> Update:
    """The settings after `cmd`; invalid values are named in `changes` and ignored."""
    changes: list[str] = []
    rebuild = False
    if cmd.model is not None and cmd.model != settings.model:
        changes.append(f"model: {settings.model} -> {cmd.model}")
        settings = replace(settings, model=cmd.model)
    if cmd.image_input is not None:
        changes.append(f"image input: {live.image_input} -> {cmd.image_input}")
        live = replace(live, image_input=cmd.image_input)
    settings, note = _thinking(settings, cmd)
    changes.extend(note)
    if cmd.effort is not None:
        levels = EFFORT_LEVELS.get(settings.provider, ())
        if cmd.effort == "":
            changes.append("effort: cleared")
            live = replace(live, effort=None)
            rebuild = True
        elif not levels:
            changes.append(f"effort: not supported by the {settings.provider} provider")
        elif cmd.effort not in levels:
            changes.append(f'effort: invalid level "{cmd.effort}" (valid: {", ".join(levels)})')
        else:
            changes.append(f"effort: {live.effort or 'none'} -> {cmd.effort}")
            live = replace(live, effort=cmd.effort)
            rebuild = True
    if rebuild:
        options = {k: v for k, v in settings.provider_options.items() if k != "reasoning_effort"}
        if live.effort is not None:
            options["reasoning_effort"] = live.effort
        settings = replace(settings, provider_options=options)
    if cmd.compaction is not None:
        changes.append(f"compaction: {live.compaction} -> {cmd.compaction}")
        live = replace(live, compaction=cmd.compaction)
        window = None if cmd.compaction == "off" else live.context_window
        settings = replace(settings, context_window=window)
    return Update(settings, live, changes, rebuild)


def _thinking(settings: AgentSettings, cmd: p.SetConfigCommand) -> tuple[AgentSettings, list[str]]:
    budget = cmd.thinking_budget
    if budget is not None and budget < MIN_THINKING_BUDGET:
        return settings, [f"thinking budget: ignored {budget} (at least {MIN_THINKING_BUDGET})"]
    if cmd.thinking == "enabled":
        budget = budget or settings.thinking_budget or DEFAULT_THINKING_BUDGET
        return replace(settings, thinking_budget=budget), [f"thinking: enabled (budget {budget})"]
    if cmd.thinking == "disabled":
        return replace(settings, thinking_budget=None), ["thinking: disabled"]
    if budget is not None and settings.thinking_budget is not None:
        return replace(settings, thinking_budget=budget), [f"thinking budget: {budget}"]
    if budget is not None:
        return settings, ["thinking budget: ignored (thinking is disabled)"]
    return settings, []
