"""What a request asks of the model's thinking: its display, up-front thinking, and effort.

Models that think by default (the 5-generation ones) return their thinking, and on Sonnet 5.5
the short notes written between tool calls, with empty text unless the request sets a `display`
that returns it. So on those models every request asks for `display: "summarized"` (setting
`thinking_display: "updates"` asks, under its beta, for the notes' text only, as Claude Code does;
`"omitted"` keeps the API's default and sends nothing). `thinking:
"between_tools"` turns up-front thinking off: the model thinks only between tool calls, and its
notes come back with their text (that mode takes no display). Effort is sent only when the user
chose one (`output_config.effort`); unset, the API's own default applies (high on Sonnet 5.5).
The same fields go on every request of a session (main thread, sub-agents, summaries, forks), so
a change of them is the user's choice, never a silent cache miss.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeGuard, get_args

Effort = Literal["low", "medium", "high", "xhigh", "max"]
EFFORT_LEVELS: tuple[str, ...] = get_args(Effort)
# What `/effort` may choose: a level, or "auto" for the API's own default.
SessionEffort = Literal["low", "medium", "high", "xhigh", "max", "auto"]


def is_session_effort(level: str) -> TypeGuard[SessionEffort]:
    """Whether `level` is a level `/effort` takes (one of the five, or "auto")."""
    return level in (*EFFORT_LEVELS, "auto")
ThinkingMode = Literal["adaptive", "between_tools"]
ThinkingDisplay = Literal["summarized", "updates", "omitted"]

# The effort levels each model takes, from the effort documentation; a model missing here is
# offered all five and the API says if one is not for it.
_MODEL_EFFORT_LEVELS: dict[str, tuple[str, ...]] = {
    "claude-sonnet-4-5": (),
    "claude-haiku-4-5": (),
    "claude-opus-4-5": ("low", "medium", "high"),
    "claude-opus-4-6": ("low", "medium", "high", "max"),
    "claude-sonnet-4-6": ("low", "medium", "high", "max"),
}
# Up-front thinking off (`between_tools`) goes up to this effort.
BETWEEN_TOOLS_LEVELS: tuple[str, ...] = ("low", "medium", "high")


def effort_levels(model: str) -> tuple[str, ...]:
    """The effort levels `model` takes (a dated id counts as its model)."""
    for known, levels in _MODEL_EFFORT_LEVELS.items():
        if model == known or model.startswith(known + "-"):
            return levels
    return EFFORT_LEVELS


def effort_problem(model: str, effort: str | None, thinking: ThinkingMode) -> str | None:
    """Why `effort` cannot be sent to `model` with this thinking mode, or None when it can."""
    if effort is None:
        return None
    levels = effort_levels(model)
    if not levels:
        return f"{model} takes no effort level"
    if effort not in levels:
        return f"{model} takes effort {', '.join(levels)}; not {effort}"
    if thinking == "between_tools" and effort not in BETWEEN_TOOLS_LEVELS:
        return f"effort {effort} needs up-front thinking (the setting thinking is between_tools)"
    return None


def chosen_effort(
    model: str,
    *,
    session_effort: str | None,
    model_effort: Mapping[str, str],
    effort: str | None,
    thinking: ThinkingMode,
) -> str | None:
    """The effort level to send to `model` (None: send none, the API's default applies).

    First what `/effort` chose this session ("auto": the API's default), then the level `/effort`
    saved for this model, then the `effort` setting; a level the model does not take is not sent
    (`/effort` says so)."""
    if session_effort is not None:
        chosen = None if session_effort == "auto" else session_effort
    else:
        chosen = model_effort.get(model) or effort
    return chosen if effort_problem(model, chosen, thinking) is None else None


def thinking_on(thinks_by_default: bool, thinking: ThinkingMode) -> bool:
    """Whether the model thinks up front on these requests (clearing thinking needs it on)."""
    return thinks_by_default and thinking == "adaptive"


def request_fields(
    *,
    thinks_by_default: bool,
    effort: str | None,
    thinking: ThinkingMode = "adaptive",
    display: ThinkingDisplay = "summarized",
) -> dict[str, Any]:
    """The `thinking` and `output_config` fields of every request (empty: the API's defaults).
    A model that does not think by default gets no `thinking` field: asking would turn it on."""
    fields: dict[str, Any] = {}
    if thinks_by_default:
        if thinking == "between_tools":
            fields["thinking"] = {"type": "between_tools"}
        elif display != "omitted":
            fields["thinking"] = {"type": "adaptive", "display": display}
    if effort is not None:
        fields["output_config"] = {"effort": effort}
    return fields
