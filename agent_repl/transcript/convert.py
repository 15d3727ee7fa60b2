"""Our Message models to transcript records and back.

`message_to_record` is pure: it writes the message's own `parent_uuid` and fields. The writer
decides chain links (see writer.py). `record_to_message` accepts real Claude Code records too:
content blocks and block fields our model does not know (`caller` on tool_use,
`citations`, `cache_control`...) are dropped and reported through `on_drop`, because our block
models forbid extra fields.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeGuard, get_args

from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from agent_repl.core.hooks.records import MODEL_ATTACHMENTS, attachment_text
from agent_repl.core.model.messages import (
    AssistantMessage,
    CompactionBlock,
    DocumentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    ServerToolResultBlock,
    ServerToolUseBlock,
    SystemLevel,
    SystemMessage,
    SystemSubtype,
    TextBlock,
    ThinkingBlock,
    ToolReferenceBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from agent_repl.transcript.records import (
    AssistantPayload,
    AssistantRecord,
    AttachmentRecord,
    SystemRecord,
    UserPayload,
    UserRecord,
    parse_message_record,
)

# Claude Code marks messages made up locally (not sent by the model) with this model name.
SYNTHETIC_MODEL = "<synthetic>"

SYSTEM_SUBTYPES: frozenset[str] = frozenset(get_args(SystemSubtype))
_SYSTEM_LEVELS: frozenset[str] = frozenset(get_args(SystemLevel))

OnDrop = Callable[[str], None]

_BLOCK_MODELS: dict[str, type[BaseModel]] = {
    cls.model_fields["type"].default: cls
    for cls in (
        TextBlock,
        ImageBlock,
        DocumentBlock,
        ToolUseBlock,
        ToolResultBlock,
        ThinkingBlock,
        RedactedThinkingBlock,
        CompactionBlock,
        ToolReferenceBlock,
        ServerToolUseBlock,
    )
}
_BLOCK_MODELS.update(dict.fromkeys(("web_search_tool_result", "web_fetch_tool_result"), ServerToolResultBlock))
_TOOL_RESULT_CONTENT_TYPES = frozenset({"text", "image", "document", "tool_reference"})
_TOP_LEVEL_TYPES = frozenset(_BLOCK_MODELS) - {"tool_reference"}

# Envelope fields Claude Code puts on system records; they are not subtype metadata.
_CC_ENVELOPE_EXTRAS = frozenset(
    {
        "slug",
        "agentId",
        "entrypoint",
        "promptId",
        "permissionMode",
        "teamName",
        "agentName",
        "forkedFrom",
        "session_id",
        "requestId",
    }
)


@dataclass(frozen=True)
class Envelope:
    """What a record says about where it was written. `session_id` wins over the message's own."""

    session_id: str
    cwd: str
    version: str
    git_branch: str = ""
    is_sidechain: bool = False
    user_type: str = "external"
    # The sub-agent a sidechain file belongs to.
    agent_id: str | None = None


# --- writing ----------------------------------------------------------------------------------


def block_to_json(block: BaseModel) -> dict[str, Any]:
    data = block.model_dump(mode="json")
    if isinstance(block, ToolResultBlock) and not isinstance(block.content, str):
        data["content"] = [block_to_json(b) for b in block.content]
    return {k: v for k, v in data.items() if v is not None}


def usage_to_json(usage: Usage) -> dict[str, Any]:
    """Usage in the API's shape, as Claude Code stores it (the ephemeral split nested)."""
    data: dict[str, Any] = {
        "input_tokens": usage.input_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
        "cache_creation": {
            "ephemeral_5m_input_tokens": usage.ephemeral_5m_input_tokens,
            "ephemeral_1h_input_tokens": usage.ephemeral_1h_input_tokens,
        },
        "output_tokens": usage.output_tokens,
    }
    if usage.cache_deleted_input_tokens:
        data["cache_deleted_input_tokens"] = usage.cache_deleted_input_tokens
    return data


def message_to_record(msg: Message, envelope: Envelope) -> dict[str, Any]:
    """The transcript record for one history entry, ready for `json.dumps`."""
    common: dict[str, Any] = {
        "parent_uuid": msg.parent_uuid,
        "is_sidechain": envelope.is_sidechain,
        "agent_id": envelope.agent_id,
        "user_type": envelope.user_type,
        "cwd": envelope.cwd,
        "session_id": envelope.session_id or msg.session_id,
        "version": envelope.version,
        "git_branch": envelope.git_branch,
        "uuid": msg.uuid,
        "timestamp": msg.timestamp,
    }
    if isinstance(msg, UserMessage) and msg.attachment is not None:
        # What a hook told the model: Claude Code's attachment record; its text is derived on load.
        return {**AttachmentRecord(**common).to_json(), "isMeta": True, "attachment": msg.attachment}
    if isinstance(msg, UserMessage):
        content: str | list[dict[str, Any]] = (
            msg.content if isinstance(msg.content, str) else [block_to_json(b) for b in msg.content]
        )
        return UserRecord(
            **common,
            message=UserPayload(content=content),
            is_meta=True if msg.is_meta else None,
            is_compact_summary=True if msg.is_compact_summary else None,
            is_visible_in_transcript_only=True if msg.is_compact_summary else None,
            tool_use_result=msg.tool_use_result,
            source_tool_use_id=msg.source_tool_use_id,
        ).to_json()
    if isinstance(msg, AssistantMessage):
        return AssistantRecord(
            **common,
            message=AssistantPayload(
                id=msg.message_id,
                model=SYNTHETIC_MODEL if msg.is_synthetic else msg.model,
                content=[block_to_json(b) for b in msg.content],
                stop_reason=msg.stop_reason,
                stop_sequence=None,
                usage=usage_to_json(msg.usage) if msg.usage is not None else None,
            ),
            request_id=msg.request_id,
            prefix_digest=msg.prefix_digest,
        ).to_json()
    return _system_to_record(msg, common)


def _system_to_record(msg: SystemMessage, common: dict[str, Any]) -> dict[str, Any]:
    is_compact = msg.subtype == "compact_boundary"
    is_micro = msg.subtype == "microcompact_boundary"
    record = SystemRecord(
        **common,
        subtype=msg.subtype,
        content=msg.content,
        level=msg.level,
        is_meta=False,
        logical_parent_uuid=msg.logical_parent_uuid,
        compact_metadata=dict(msg.metadata) if is_compact else None,
        microcompact_metadata=dict(msg.metadata) if is_micro else None,
    )
    data = record.to_json()
    if is_compact:
        data.setdefault("logicalParentUuid", None)
    elif not is_micro:
        # Other subtypes keep their metadata at the top level, as Claude Code's api_error does.
        for key, value in to_jsonable_python(msg.metadata).items():
            data.setdefault(key, value)
    return data


# --- reading ----------------------------------------------------------------------------------


def _ignore(_: str) -> None:
    return None


def clean_block(raw: Any, on_drop: OnDrop = _ignore, *, nested: bool = False) -> Any:
    """A content block our model knows, or None. Unknown fields and types are dropped and reported."""
    if not isinstance(raw, dict):
        on_drop("a content block that is not an object")
        return None
    block_type = raw.get("type")
    allowed = _TOOL_RESULT_CONTENT_TYPES if nested else _TOP_LEVEL_TYPES
    if not isinstance(block_type, str) or block_type not in allowed:
        where = "tool_result content" if nested else "content"
        on_drop(f"{where} block type {block_type!r}")
        return None
    model = _BLOCK_MODELS[block_type]
    data: dict[str, Any] = {}
    keep_all = model.model_config.get("extra") == "allow"
    for key, value in raw.items():
        if key in model.model_fields or keep_all:
            data[key] = value
        else:
            on_drop(f"field {key!r} on {block_type} blocks")
    if block_type == "tool_result":
        content = data.get("content")
        if content is None:
            data["content"] = ""
        elif isinstance(content, list):
            cleaned = (clean_block(b, on_drop, nested=True) for b in content)
            data["content"] = [b for b in cleaned if b is not None]
        if data.get("is_error") is None:
            data.pop("is_error", None)
    if block_type == "thinking" and data.get("signature") is None:
        data.pop("signature", None)
    if block_type == "document" and data.get("title") is None:
        data.pop("title", None)
    try:
        return model.model_validate(data)
    except ValidationError:
        on_drop(f"an invalid {block_type} block")
        return None


def clean_blocks(raw_blocks: list[Any], on_drop: OnDrop = _ignore) -> list[Any]:
    return [b for b in (clean_block(raw, on_drop) for raw in raw_blocks) if b is not None]


def usage_from_json(raw: dict[str, Any] | None) -> Usage | None:
    if raw is None:
        return None
    values: dict[str, Any] = {k: v for k, v in raw.items() if k in Usage.model_fields and isinstance(v, int)}
    nested = raw.get("cache_creation")
    if isinstance(nested, dict):
        for key in ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens"):
            if isinstance(nested.get(key), int):
                values.setdefault(key, nested[key])
    return Usage(**values)


def _level(value: str | None) -> SystemLevel:
    return value if value is not None and _is_level(value) else "info"


def _is_level(value: str) -> TypeGuard[SystemLevel]:
    return value in _SYSTEM_LEVELS


def _is_subtype(value: str) -> TypeGuard[SystemSubtype]:
    return value in SYSTEM_SUBTYPES


def record_to_message(raw: dict[str, Any], *, on_drop: OnDrop = _ignore) -> Message | None:
    """Our Message for a `user`, `assistant` or known-subtype `system` record, else None.

    None also when every content block of the record was unknown. Raises ValueError (a pydantic
    ValidationError) when a message record is malformed.
    """
    if raw.get("type") == "attachment":
        return _attachment_from_record(raw)
    if raw.get("type") not in ("user", "assistant", "system"):
        return None
    record = parse_message_record(raw)
    common: dict[str, Any] = {
        "uuid": record.uuid,
        "parent_uuid": record.parent_uuid,
        "timestamp": record.timestamp,
        "session_id": record.session_id,
    }
    if isinstance(record, UserRecord):
        content: str | list[Any] = record.message.content
        if not isinstance(content, str):
            blocks = clean_blocks(content, on_drop)
            if content and not blocks:
                on_drop("a user record with no content block our model knows")
                return None
            content = blocks
        return UserMessage(
            **common,
            content=content,
            is_meta=bool(record.is_meta),
            is_compact_summary=bool(record.is_compact_summary),
            tool_use_result=record.tool_use_result,
            source_tool_use_id=record.source_tool_use_id,
        )
    if isinstance(record, AssistantRecord):
        payload = record.message
        blocks = clean_blocks(payload.content, on_drop)
        if payload.content and not blocks:
            on_drop("an assistant record with no content block our model knows")
            return None
        return AssistantMessage(
            **common,
            message_id=payload.id,
            model=payload.model,
            content=blocks,
            stop_reason=payload.stop_reason,
            usage=usage_from_json(payload.usage),
            request_id=record.request_id,
            is_synthetic=payload.model == SYNTHETIC_MODEL or bool(record.is_api_error_message),
            prefix_digest=record.prefix_digest,
        )
    return _system_from_record(record, common)


def _system_from_record(record: SystemRecord, common: dict[str, Any]) -> SystemMessage | None:
    subtype = record.subtype
    if not _is_subtype(subtype):
        return None
    if record.subtype == "compact_boundary":
        metadata = dict(record.compact_metadata or {})
    elif record.subtype == "microcompact_boundary":
        metadata = dict(record.microcompact_metadata or {})
    else:
        extra = record.model_extra or {}
        metadata = {k: v for k, v in extra.items() if k not in _CC_ENVELOPE_EXTRAS}
    return SystemMessage(
        **common,
        subtype=subtype,
        content=record.content or "",
        level=_level(record.level),
        metadata=metadata,
        logical_parent_uuid=record.logical_parent_uuid,
    )


def _attachment_from_record(raw: dict[str, Any]) -> Message | None:
    """A hook's words to the model as a meta user entry; other attachments are not ours to send."""
    attachment = raw.get("attachment")
    if not isinstance(attachment, dict) or attachment.get("type") not in MODEL_ATTACHMENTS:
        return None
    record = AttachmentRecord.model_validate(raw)
    return UserMessage(
        uuid=record.uuid,
        parent_uuid=record.parent_uuid,
        timestamp=record.timestamp,
        session_id=record.session_id,
        content=attachment_text(attachment),
        is_meta=True,
        attachment=attachment,
    )
