"""Skills put back after a compaction (docs/architecture.md 5.6): a skill the model loaded is its
standing instructions for the work, and a summary would keep only a mention of it.

The text re-injected is the Skill call's own result as the history holds it (never a fresh read
of SKILL.md, so a resume re-sends the same bytes), newest first, each skill once, within a budget:
5K tokens a skill and 25K in all, never more than the files' re-injection budget.
"""

from __future__ import annotations

from agent_repl.context.state import PipelineState
from agent_repl.core.model.messages import AssistantMessage, Message, UserMessage

SKILL_TOOL = "Skill"
MAX_TOKENS_PER_SKILL = 5_000
MAX_TOKENS_TOTAL = 25_000


def _loaded_skills(messages: list[Message]) -> list[tuple[str, str]]:
    """(name, the Skill result's text) of each successful load in `messages`, oldest first."""
    names: dict[str, str] = {}
    loaded: list[tuple[str, str]] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            for use in message.tool_uses():
                if use.name == SKILL_TOOL and isinstance(use.input.get("skill"), str):
                    names[use.id] = use.input["skill"].strip().lstrip("/")
        elif isinstance(message, UserMessage):
            for result in message.tool_results():
                if result.tool_use_id in names and not result.is_error and result.text().strip():
                    loaded.append((names[result.tool_use_id], result.text()))
    return loaded


def skill_reminders(summarized: list[Message], kept: list[Message], state: PipelineState, budget: int) -> list[str]:
    """The reminders for skills loaded before the compaction point and not loaded again in the
    kept tail, newest first, within `budget` tokens (and this module's limits)."""
    in_tail = {name for name, _ in _loaded_skills(kept)}
    total_budget = min(MAX_TOKENS_TOTAL, budget)
    reminders: list[str] = []
    seen: set[str] = set(in_tail)
    total = 0
    for name, text in reversed(_loaded_skills(summarized)):
        if name in seen or total >= total_budget:
            continue
        seen.add(name)
        tokens = round(state.facts.text_tokens(text) * state.tokens.ratio)
        allowed = min(MAX_TOKENS_PER_SKILL, total_budget - total)
        if tokens > allowed:
            text = text[: int(len(text) * allowed / tokens)].rsplit("\n", 1)[0] + "\n[... truncated; call Skill again for the rest]"
            tokens = allowed
        total += tokens
        reminders.append(
            f"<system-reminder>\nThe skill {name} was loaded before the conversation was compacted; "
            f"its instructions still apply:\n\n{text}\n</system-reminder>"
        )
    return reminders
