"""The typed events the query loop yields; the TUI, the line REPL and print mode only consume them."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_repl.core.model.messages import AssistantMessage, Message, SystemMessage, Usage, UserMessage


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class TurnStarted(_Event):
    kind: Literal["turn_started"] = "turn_started"
    prompt: str
    message: UserMessage


class StageReportEvent(_Event):
    """What one pipeline stage did to the view this request."""

    stage: str
    tokens_before: int
    tokens_after: int
    items: int = 0
    detail: str = ""


# Why the query loop goes round again (agent_repl.core.loop.state). A retry sends the same request
# again: its reply was withheld or it failed.
RetryTransition = Literal[
    "stream_retry",
    "collapse_drain_retry",
    "reactive_compact_retry",
    "max_output_tokens_escalate",
    "web_tools_off_retry",
    "fallback_model",
    "refusal_fallback",
]
# The model wanted to end its turn and was sent back.
SentBackTransition = Literal["stop_hook_blocking", "token_budget_continuation"]
# A continuation goes on from what the pass added to the history.
ContinueTransition = Literal["tool_results", "pause_turn", "max_output_tokens_recovery", SentBackTransition]
Transition = Literal["start", RetryTransition, ContinueTransition]


class ContextProjected(_Event):
    """The view for one request; `transition` says why the loop is sending it."""

    kind: Literal["context_projected"] = "context_projected"
    request_index: int
    wire_messages: int
    estimated_tokens: int
    stages: list[StageReportEvent] = Field(default_factory=list)
    transition: Transition = "start"


class RequestRetry(_Event):
    kind: Literal["request_retry"] = "request_retry"
    attempt: int
    delay_seconds: float
    error: str


class TextDelta(_Event):
    kind: Literal["text_delta"] = "text_delta"
    text: str


class StreamEvent(_Event):
    """One raw event of the response stream (`message_start`, `content_block_delta`...), as the API
    sent it; only yielded when the session asks for them (print mode's --include-partial-messages)."""

    kind: Literal["stream_event"] = "stream_event"
    event: dict[str, Any]
    # On `message_start`: milliseconds from sending the request to this first event.
    ttft_ms: int | None = None


class ThinkingDelta(_Event):
    kind: Literal["thinking_delta"] = "thinking_delta"
    text: str


class ToolUseStarted(_Event):
    kind: Literal["tool_use_started"] = "tool_use_started"
    tool_use_id: str
    name: str
    input: dict[str, Any]


class ToolProgress(_Event):
    kind: Literal["tool_progress"] = "tool_progress"
    tool_use_id: str
    text: str


class SubagentProgress(_Event):
    """What a sub-agent started by a Task call did: one of its tool calls (the assistant entry holding
    it) or that call's result, for the parent's tool block. Never part of the parent's history."""

    kind: Literal["subagent_progress"] = "subagent_progress"
    # The parent's Task call.
    tool_use_id: str
    agent_id: str
    message: AssistantMessage | UserMessage


class ToolResultEvent(_Event):
    kind: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    name: str
    is_error: bool
    summary: str
    # Where the full output went when it was over the tool's limit.
    persisted_path: str | None = None
    # The call never ran: permission was refused.
    denied: bool = False
    message: UserMessage


class AssistantMessageEvent(_Event):
    kind: Literal["assistant_message"] = "assistant_message"
    message: AssistantMessage


class EntryAppended(_Event):
    """A history entry no other event carries (a reminder, a hook's context, a command's output), so
    the front ends learn the whole history from the events alone, in its order."""

    kind: Literal["entry_appended"] = "entry_appended"
    message: Message


class SystemMessageEvent(_Event):
    kind: Literal["system_message"] = "system_message"
    message: SystemMessage


class UsageEvent(_Event):
    kind: Literal["usage"] = "usage"
    usage: Usage
    model: str


class CompactionStarted(_Event):
    kind: Literal["compaction_started"] = "compaction_started"
    trigger: Literal["auto", "manual", "reactive"]


class CompactionFinished(_Event):
    kind: Literal["compaction_finished"] = "compaction_finished"
    trigger: Literal["auto", "manual", "reactive"]
    tokens_before: int
    tokens_after: int


class PermissionModeChanged(_Event):
    """The session's permission mode changed during the turn (an approval switched it)."""

    kind: Literal["permission_mode_changed"] = "permission_mode_changed"
    mode: str


class LoopContinued(_Event):
    """The model wanted to end its turn and was sent back: a Stop hook blocked
    (`stop_hook_blocking`) or the turn's output budget is not spent (`token_budget_continuation`)."""

    kind: Literal["loop_continued"] = "loop_continued"
    transition: SentBackTransition
    detail: str = ""


class TokenBudgetProgress(_Event):
    """Output tokens the turn has written against its budget (the status line shows used / budget)."""

    kind: Literal["token_budget"] = "token_budget"
    used: int
    budget: int


class ErrorEvent(_Event):
    kind: Literal["error"] = "error"
    message: str
    recoverable: bool = True
    # The HTTP status of the API call that failed, when an API call did.
    api_status: int | None = None


# "refusal": the model declined (stop_reason refusal); the refused reply left the model's view.
# "hook_stopped": a hook refused the prompt or answered `continue: false`.
TurnEndReason = Literal["completed", "max_turns", "max_budget", "interrupted", "error", "refusal", "hook_stopped"]


class TurnEnded(_Event):
    kind: Literal["turn_ended"] = "turn_ended"
    reason: TurnEndReason
    num_requests: int
    usage: Usage
    final_text: str = ""
    # The estimated size of the next request's view, from the turn's last projection and what the
    # turn appended after it (None when the turn sent no request): the status line and session
    # memory read it instead of projecting again.
    next_request_tokens: int | None = None


AgentEvent = Annotated[
    TurnStarted
    | ContextProjected
    | RequestRetry
    | TextDelta
    | StreamEvent
    | ThinkingDelta
    | ToolUseStarted
    | ToolProgress
    | SubagentProgress
    | ToolResultEvent
    | AssistantMessageEvent
    | EntryAppended
    | SystemMessageEvent
    | UsageEvent
    | CompactionStarted
    | CompactionFinished
    | PermissionModeChanged
    | LoopContinued
    | TokenBudgetProgress
    | ErrorEvent
    | TurnEnded,
    Field(discriminator="kind"),
]
