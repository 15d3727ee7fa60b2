"""The emulator as the model for both agents: which request is which, and who answers it.

Main requests get the session's next scripted step. Summary requests get the condition's
summarizer, so both agents pay for summaries of the same size. Side requests (no tools offered:
a title, a topic) get a short text and no step.

How each agent's summary request is recognised:

- agent-repl marks its own (`<summary-request>` / `<session-memory-request>`, `request_kind`) or
  asks the API's on-demand compaction (`compaction_requested`; the engine answers those itself).
- Claude Code 2.1.3xx, seen as a black box: the request offers the same tools and `max_tokens` as
  a main request, and repeats the conversation with one long text block (several thousand
  characters) appended as the last block of the last user message, after its tool results or the
  prompt. No typed prompt is in that block. In the row's runs it comes once per compaction, when
  the context reaches the threshold; the agent's own transcript (its compact boundaries) agrees.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from agent_repl.emulator.blocks import content_blocks
from agent_repl.emulator.compaction import compaction_requested
from agent_repl.emulator.policies import PolicyRequest, Reply, ScriptPolicy
from agent_repl.emulator.policies.base import summary_reply, text_block
from agent_repl.emulator.policies.summary import request_kind

Kind = Literal["main", "summary", "memory", "side"]
Client = Literal["claude-code", "agent-repl"]
# Shorter appended texts are reminders; Claude Code's summary instruction is several thousand characters.
MIN_INSTRUCTION_CHARS = 2_000
SIDE_REPLY = "Noted."


def _last_user(body: dict[str, Any]) -> dict[str, Any] | None:
    users = [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
    return users[-1] if users else None


def appended_instruction(body: dict[str, Any], prompts: Sequence[str]) -> str | None:
    """The text block Claude Code appends to ask for a summary, if `body` has one: the last block
    of the last user message, a long text holding none of the typed prompts."""
    last = _last_user(body)
    if last is None or isinstance(last.get("content"), str):
        return None
    blocks = content_blocks(last.get("content"))
    if not blocks or blocks[-1].get("type") != "text":
        return None
    text = str(blocks[-1].get("text", ""))
    if len(text) < MIN_INSTRUCTION_CHARS or any(p and p in text for p in prompts):
        return None
    return text


def classify(body: dict[str, Any], client: Client, prompts: Sequence[str]) -> Kind:
    if compaction_requested(body):
        return "summary"
    marked = request_kind(body)
    if marked is not None:
        return marked
    if not body.get("tools"):
        return "side"
    if client == "claude-code" and appended_instruction(body, prompts) is not None:
        return "summary"
    return "main"


def without_instruction(body: dict[str, Any]) -> dict[str, Any]:
    """The request as the conversation it asks to summarize: the appended instruction block
    removed (a summarizer quoting user texts must not quote it), and a message left empty dropped."""
    messages = list(body.get("messages") or [])
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        blocks = content_blocks(message.get("content"))[:-1]
        if blocks:
            messages[index] = {**message, "content": blocks}
        else:
            del messages[index]
        break
    return {**body, "messages": messages}


class RowPolicy(ScriptPolicy):
    """The script policy for one agent: main requests take steps, the rest do not."""

    def __init__(self, scenario: dict[str, Any], kind_of: Callable[[dict[str, Any]], Kind]) -> None:
        super().__init__(scenario)
        self.kind_of = kind_of

    def reply(self, request: PolicyRequest) -> Reply:
        kind = self.kind_of(request.body)
        if kind == "summary" and request_kind(request.body) is None:
            stripped = PolicyRequest(
                without_instruction(request.body), request.spec, request.request_index, "", request.summarizer
            )
            return summary_reply(stripped, "summary")
        if kind == "side":
            return Reply([text_block(SIDE_REPLY)], "end_turn")
        return super().reply(request)

    def completed(self, request: PolicyRequest, reply: Reply) -> None:
        if self.kind_of(request.body) == "main":
            super().completed(request, reply)
