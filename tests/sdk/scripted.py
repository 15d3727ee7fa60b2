"""A model for the SDK tests: replies chosen from the conversation, not from a request counter.

Each scenario maps a word of the user's prompt to the steps of that turn. The step taken is the
number of assistant messages after the last prompt that names the word, so the side requests a
client makes (a title, a quota probe, a summary) take no step and two clients that make
different side requests see the same model. A request naming no scenario word gets a short text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_repl.emulator.policies.base import PolicyRequest, Reply, text_block, tool_use_block, tool_use_id


@dataclass
class Step:
    text: str | None = None
    tools: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


class ScriptedModel:
    """`scenarios`: {word: [Step, ...]}; a turn past its last step ends with "done"."""

    def __init__(self, scenarios: dict[str, list[Step]]) -> None:
        self.scenarios = scenarios
        self.tool_calls: list[str] = []

    def reply(self, request: PolicyRequest) -> Reply:
        messages = [m for m in request.body.get("messages") or [] if isinstance(m, dict)]
        if not request.body.get("tools"):
            return Reply([text_block("A side answer.")])
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if message.get("role") != "user":
                continue
            words = [w for w in self.scenarios if w in _text_of(message.get("content"))]
            if not words:
                continue
            steps = self.scenarios[words[0]]
            position = sum(1 for m in messages[index + 1 :] if m.get("role") == "assistant")
            if position >= len(steps):
                return Reply([text_block("done")])
            step = steps[position]
            content = [text_block(step.text)] if step.text else []
            for number, (name, tool_input) in enumerate(step.tools):
                content.append(tool_use_block(tool_use_id(words[0], position, number), name, tool_input))
            return Reply(content, "tool_use" if step.tools else "end_turn")
        return Reply([text_block("A side answer.")])

    def completed(self, request: PolicyRequest, reply: Reply) -> None:
        pass
