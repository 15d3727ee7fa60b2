"""The message model: what the REPL history holds (docs/architecture.md 3).

Content blocks mirror the Anthropic Messages API one to one, so converting a history entry
to a wire message is a `model_dump`. History entries add what the API does not know: a uuid,
a parent, a timestamp, the session, and flags such as `is_meta`.
"""

from __future__ import annotations

import uuid as uuid_module
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field


class _Block(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TextBlock(_Block):
    type: Literal["text"] = "text"
    text: str
    # Where a web search or fetch result backs this text up (sent back unchanged).
    citations: list[dict[str, Any]] | None = None


class ImageBlock(_Block):
    type: Literal["image"] = "image"
    # {"type": "base64", "media_type": "image/png", "data": "..."} or {"type": "url", "url": "..."}
    source: dict[str, Any]


class DocumentBlock(_Block):
    type: Literal["document"] = "document"
    source: dict[str, Any]
    title: str | None = None


class ToolReferenceBlock(_Block):
    """Inside a tool_result only: the API expands it into the named deferred tool's definition."""

    type: Literal["tool_reference"] = "tool_reference"
    tool_name: str


class ToolUseBlock(_Block):
    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any]


ToolResultContentBlock = Annotated[
    TextBlock | ImageBlock | DocumentBlock | ToolReferenceBlock, Field(discriminator="type")
]


class ToolResultBlock(_Block):
    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: str | list[ToolResultContentBlock] = ""
    is_error: bool = False

    def text(self) -> str:
        """The result's text, with non-text blocks left out."""
        if isinstance(self.content, str):
            return self.content
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    def has_image(self) -> bool:
        return not isinstance(self.content, str) and any(isinstance(b, ImageBlock) for b in self.content)


class ThinkingBlock(_Block):
    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str = ""


class RedactedThinkingBlock(_Block):
    type: Literal["redacted_thinking"] = "redacted_thinking"
    data: str


class CompactionBlock(_Block):
    """The API's own summary of the conversation before it (on-demand compaction); sent back
    unchanged, first in `messages`, in place of what it summarized."""

    type: Literal["compaction"] = "compaction"
    content: str | None = None
    signature: str | None = None
    encrypted_content: str | None = None


class ServerToolUseBlock(_Block):
    """A call of one of the API's own tools (`web_search`, `web_fetch`), run by the server; stored
    and sent back exactly as it came."""

    model_config = ConfigDict(extra="allow")

    type: Literal["server_tool_use"] = "server_tool_use"
    id: str
    name: str
    input: dict[str, Any]


class ServerToolResultBlock(_Block):
    """What the server's tool returned, in the same response as the call; sent back unchanged."""

    model_config = ConfigDict(extra="allow")

    type: Literal["web_search_tool_result", "web_fetch_tool_result"]
    tool_use_id: str
    content: Any = None


ContentBlock = Annotated[
    TextBlock
    | ImageBlock
    | DocumentBlock
    | ToolUseBlock
    | ToolResultBlock
    | ThinkingBlock
    | RedactedThinkingBlock
    | CompactionBlock
    | ServerToolUseBlock
    | ServerToolResultBlock,
    Field(discriminator="type"),
]


def wire_block(block: _Block) -> dict[str, Any]:
    """One content block as the API takes it; the same block always gives the same dict."""
    data = block.model_dump(mode="json", exclude_none=True)
    if data.get("type") == "tool_result" and not data.get("is_error"):
        data.pop("is_error", None)
    return data


class Usage(BaseModel):
    """Token usage as the API reports it for one response."""

    model_config = ConfigDict(extra="ignore")

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    ephemeral_5m_input_tokens: int = 0
    ephemeral_1h_input_tokens: int = 0
    cache_deleted_input_tokens: int = 0
    # Output tokens spent thinking, and the server tools' calls (`server_tool_use`), as reported.
    thinking_tokens: int = 0
    web_search_requests: int = 0
    web_fetch_requests: int = 0
    # How the response was served, as reported (the latest response's, in a sum).
    service_tier: str | None = None
    inference_geo: str | None = None
    speed: str | None = None

    def total_input(self) -> int:
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def context_tokens(self) -> int:
        """What this response says the context holds: every input token plus the output."""
        return self.total_input() + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        def combined(name: str) -> Any:
            mine, theirs = getattr(self, name), getattr(other, name)
            return mine + theirs if isinstance(mine, int) else theirs if theirs is not None else mine

        return Usage(**{name: combined(name) for name in Usage.model_fields})


def new_uuid() -> str:
    return str(uuid_module.uuid4())


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso_timestamp(moment: datetime) -> str:
    """ISO-8601 UTC with milliseconds and a Z, as Claude Code writes timestamps."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def now_iso() -> str:
    return iso_timestamp(utc_now())


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    uuid: str = Field(default_factory=new_uuid)
    parent_uuid: str | None = None
    timestamp: str = Field(default_factory=now_iso)
    session_id: str = ""


class UserMessage(_Entry):
    type: Literal["user"] = "user"
    content: str | list[ContentBlock]
    # Injected by the system (reminders, re-injected files, command caveats), not typed by the user.
    is_meta: bool = False
    # The summary a compaction produced; it opens the view after a compact boundary.
    is_compact_summary: bool = False
    # A structured, tool-specific copy of a tool result (Claude Code's `toolUseResult`).
    tool_use_result: Any = None
    source_tool_use_id: str | None = None
    # What a hook told the model, as Claude Code's `attachment` record holds it (core/hooks/records.py).
    attachment: dict[str, Any] | None = None

    def blocks(self) -> list[ContentBlock]:
        if isinstance(self.content, str):
            return [TextBlock(text=self.content)]
        return list(self.content)

    def tool_results(self) -> list[ToolResultBlock]:
        return [b for b in self.blocks() if isinstance(b, ToolResultBlock)]

    def is_tool_result(self) -> bool:
        return not isinstance(self.content, str) and any(isinstance(b, ToolResultBlock) for b in self.content)

    def text(self) -> str:
        return "".join(b.text for b in self.blocks() if isinstance(b, TextBlock))


class AssistantMessage(_Entry):
    """One content block of an API response (a streamed reply is split into several entries
    sharing `message_id`, as Claude Code stores it)."""

    type: Literal["assistant"] = "assistant"
    message_id: str
    model: str = ""
    content: list[ContentBlock]
    stop_reason: str | None = None
    usage: Usage | None = None
    request_id: str | None = None
    # Made up locally (an interruption notice, a synthetic API error), never sent by the model.
    is_synthetic: bool = False
    # The digest of the prompt this block was produced after: the request, then the reply's
    # earlier blocks (core/api/thinking_prefix.py). It tells whether a thinking block may still be
    # sent back, and whether this reply's usage still describes the view.
    prefix_digest: str | None = None

    def tool_uses(self) -> list[ToolUseBlock]:
        return [b for b in self.content if isinstance(b, ToolUseBlock)]

    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def is_api_summary(self) -> bool:
        """The API's own summary (on-demand compaction), which opens the view after its boundary."""
        return any(isinstance(b, CompactionBlock) for b in self.content)


SystemSubtype = Literal[
    "compact_boundary",
    "microcompact_boundary",
    "local_command",
    "api_error",
    "informational",
    "stop_hook_summary",
]


SystemLevel = Literal["info", "warning", "error", "suggestion"]


class SystemMessage(_Entry):
    """Shown to the user and kept in the transcript; never sent to the model."""

    type: Literal["system"] = "system"
    subtype: SystemSubtype
    content: str = ""
    # "suggestion": Claude Code's level for a stop hook summary.
    level: SystemLevel = "info"
    # compact_boundary: {"trigger", "preTokens", "preCompactDiscoveredTools"...}; microcompact_boundary likewise.
    metadata: dict[str, Any] = Field(default_factory=dict)
    logical_parent_uuid: str | None = None


Message = Annotated[UserMessage | AssistantMessage | SystemMessage, Field(discriminator="type")]
# One kind of entry in, the same kind out (appending a SystemMessage hands back a SystemMessage).
MessageT = TypeVar("MessageT", bound=UserMessage | AssistantMessage | SystemMessage)


def user_text(text: str, *, is_meta: bool = False, session_id: str = "") -> UserMessage:
    return UserMessage(content=text, is_meta=is_meta, session_id=session_id)
