"""Transcript records: one JSON object per line, in Claude Code's schema where the concepts overlap.

Message records (`user`, `assistant`, `system`) carry Claude Code's envelope: `parentUuid`,
`isSidechain`, `userType`, `cwd`, `sessionId`, `version`, `gitBranch`, `type`, `uuid`,
`timestamp`. Fields we do not know are kept (`extra="allow"`), so a real Claude Code record
validates and nothing in it is lost.

Side records hold pipeline state that is not a message (content replacements, snips, collapse
commits, microcompact clears, session metadata). Their types are kebab-case, like Claude Code's
newer record types; they carry no `uuid`, so they are never links in the `parentUuid` chain.
A `SideRecordRegistry` maps a `type` to its model; the loader keeps unknown types as raw dicts.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any, ClassVar, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from agent_repl.core.model.messages import now_iso

MESSAGE_RECORD_TYPES = frozenset({"user", "assistant", "system"})

# Top-level keys that stay in a record even when null (Claude Code writes `"parentUuid": null`).
_KEEP_NULL = frozenset({"parentUuid"})


def _dump(model: BaseModel, keep_null: frozenset[str] = _KEEP_NULL) -> dict[str, Any]:
    """A record as JSON-ready data: camelCase keys, top-level nulls dropped except `keep_null`."""
    data = model.model_dump(mode="json", by_alias=True)
    return {k: v for k, v in data.items() if v is not None or k in keep_null}


class _CamelModel(BaseModel):
    model_config = ConfigDict(extra="allow", alias_generator=to_camel, populate_by_name=True, defer_build=True)


# --- Claude Code message records --------------------------------------------------------------


class RecordEnvelope(_CamelModel):
    """The fields every message record shares."""

    parent_uuid: str | None = None
    is_sidechain: bool = False
    user_type: str = "external"
    cwd: str = ""
    session_id: str = ""
    version: str = ""
    git_branch: str = ""
    type: str
    uuid: str
    timestamp: str = ""
    # Sidechain (sub-agent) files only.
    agent_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return _dump(self)


class UserPayload(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Literal["user"] = "user"
    # A plain prompt is a string; anything else is a list of API content blocks, kept raw here.
    content: str | list[dict[str, Any]]


class UserRecord(RecordEnvelope):
    type: Literal["user"] = "user"
    message: UserPayload
    is_meta: bool | None = None
    is_compact_summary: bool | None = None
    is_visible_in_transcript_only: bool | None = None
    tool_use_result: Any = None
    # Claude Code spells it with a capital "ID".
    source_tool_use_id: str | None = Field(
        default=None, serialization_alias="sourceToolUseID", validation_alias=AliasChoices("sourceToolUseID")
    )


class AssistantPayload(BaseModel):
    """The API response, holding one of its content blocks."""

    model_config = ConfigDict(extra="allow")

    id: str
    type: Literal["message"] = "message"
    role: Literal["assistant"] = "assistant"
    model: str = ""
    content: list[dict[str, Any]]
    stop_reason: str | None = None
    stop_sequence: str | None = None
    usage: dict[str, Any] | None = None


class AssistantRecord(RecordEnvelope):
    type: Literal["assistant"] = "assistant"
    message: AssistantPayload
    request_id: str | None = None
    is_api_error_message: bool | None = None
    # Ours: the digest of the prefix a thinking or compaction block was produced after.
    prefix_digest: str | None = None


class SystemRecord(RecordEnvelope):
    """A notice for the user; subtype-specific fields (api_error's `retryInMs`...) sit at the top level."""

    type: Literal["system"] = "system"
    subtype: str
    content: str | None = None
    level: str | None = None
    is_meta: bool | None = None
    logical_parent_uuid: str | None = None
    compact_metadata: dict[str, Any] | None = None
    microcompact_metadata: dict[str, Any] | None = None


class AttachmentRecord(RecordEnvelope):
    """Claude Code's `attachment` record; we write the hook ones that hold text for the model."""

    type: Literal["attachment"] = "attachment"
    attachment: dict[str, Any] = Field(default_factory=dict)


MessageRecord = UserRecord | AssistantRecord | SystemRecord

_MESSAGE_RECORD_MODELS: dict[str, type[UserRecord] | type[AssistantRecord] | type[SystemRecord]] = {
    "user": UserRecord,
    "assistant": AssistantRecord,
    "system": SystemRecord,
}


def parse_message_record(raw: dict[str, Any]) -> MessageRecord:
    """Validate a `user`, `assistant` or `system` record. Raises ValueError for any other type."""
    record_type = raw.get("type")
    model = _MESSAGE_RECORD_MODELS.get(record_type) if isinstance(record_type, str) else None
    if model is None:
        raise ValueError(f"not a message record: type {raw.get('type')!r}")
    return model.model_validate(raw)


# --- Side records: our pipeline state ---------------------------------------------------------


class SideRecord(_CamelModel):
    """Base of our own record types. A subclass sets `type` to a kebab-case literal."""

    type: str
    session_id: str = ""
    timestamp: str = Field(default_factory=now_iso)

    def to_json(self) -> dict[str, Any]:
        return _dump(self, keep_null=frozenset())

    @classmethod
    def record_type(cls) -> str:
        default = cls.model_fields["type"].default
        if not isinstance(default, str):
            raise TypeError(f"{cls.__name__} must give `type` a literal default")
        return default


class ContentReplacementRecord(SideRecord):
    """A tool result replaced in the model's view; `replacement` is re-emitted byte for byte."""

    type: Literal["content-replacement"] = "content-replacement"
    tool_use_id: str
    replacement: str


class SnipRecord(SideRecord):
    """Messages removed from the model's view; the history keeps them."""

    type: Literal["snip"] = "snip"
    uuids: list[str]
    source: Literal["model", "user", "auto"]
    tokens_freed: int | None = None
    reason: str | None = None


class CollapseCommitRecord(SideRecord):
    """A span of history shown to the model as one `<collapsed>` summary."""

    type: Literal["collapse-commit"] = "collapse-commit"
    collapse_id: str | None = None
    start_uuid: str
    end_uuid: str
    summary: str
    tokens_before: int | None = None
    tokens_after: int | None = None
    # The entries the span covers, known when it is committed; not written: a resume reads them
    # from the history between the two ends.
    uuids: frozenset[str] | None = Field(default=None, exclude=True)


class StagedSpan(_CamelModel):
    """One span collapse proposed and has not committed yet, with the entries it covers."""

    collapse_id: str
    start_uuid: str
    end_uuid: str
    summary: str
    uuids: list[str]


class CollapseStageRecord(SideRecord):
    """The spans collapse has staged, oldest first, as they stand after a projection.

    Staged spans decide what later projections commit, so a resume must start from the same list;
    each record replaces the one before (a commit takes its own span off the list).
    """

    type: Literal["collapse-stage"] = "collapse-stage"
    spans: list[StagedSpan]


class TokenRatioRecord(SideRecord):
    """The tokens-per-cl100k-token ratio learned from the API's usage; `tokenizer_ratio` is the
    model tokenizer's ratio it was learned from (another model's tokenizer starts over)."""

    type: Literal["token-ratio"] = "token-ratio"
    ratio: float
    tokenizer_ratio: float


class TokenCountsRecord(SideRecord):
    """Exact cl100k counts of texts the session counted, so a resume knows them without the
    encoder: each entry is [digest of the text's UTF-8, its length in bytes, its count], and
    `check` is the digest of the entries (`counts_check`); a record whose check fails is ignored.
    The entries are checked where they are used (`FactCache.learn`), not validated one by one here:
    a resume reads every such record."""

    type: Literal["token-counts"] = "token-counts"
    counts: list[Any]
    check: str = ""

    @classmethod
    def of(cls, counts: list[tuple[str, int, int]]) -> TokenCountsRecord:
        entries = [list(c) for c in counts]
        return cls(counts=entries, check=counts_check(entries))

    def intact(self) -> bool:
        """Whether the entries are the ones written (a damaged record could under-count)."""
        return self.check == counts_check(self.counts)


def counts_check(counts: list[Any]) -> str:
    canonical = json.dumps(counts, separators=(",", ":")).encode()
    return hashlib.blake2b(canonical, digest_size=8).hexdigest()


class MicrocompactClearRecord(SideRecord):
    """Tool results whose stored content was cleared; `replacement` is the exact new text."""

    type: Literal["microcompact-clear"] = "microcompact-clear"
    tool_use_ids: list[str]
    replacement: str = "[Old tool result content cleared]"
    trigger: str | None = None
    tokens_saved: int | None = None


class CacheEditRecord(SideRecord):
    """Tool results deleted from the server's prompt cache (cached microcompact).

    The `cache_edits` block is pinned to the wire message holding `anchor_uuid` and re-sent there
    on every later request, so the bytes the cache has seen never move.
    """

    type: Literal["cache-edit"] = "cache-edit"
    anchor_uuid: str
    tool_use_ids: list[str]


class ServerClearRecord(SideRecord):
    """Tool results the API clears server-side on every later request (`clear_tool_uses_20250919`
    with a `keep` that never lets the cleared set move); the history keeps their text."""

    type: Literal["server-clear"] = "server-clear"
    tool_use_ids: list[str]
    tokens_saved: int | None = None
    trigger: str | None = None
    # The estimate for each result when the batch is decided; not written: a resume splits
    # `tokens_saved` evenly.
    sizes: dict[str, int] | None = Field(default=None, exclude=True)


class CompactionUndoRecord(SideRecord):
    """A compaction taken back: the view goes back to what it was; the history never changed."""

    type: Literal["compaction-undo"] = "compaction-undo"
    boundary_uuid: str
    # The boundary, its summary and its re-injected attachments, which leave the view.
    excluded_uuids: list[str]


class RewindRecord(SideRecord):
    """A /rewind to just before a prompt: what left the model's view, and which files were put back."""

    type: Literal["rewind"] = "rewind"
    prompt_uuid: str
    restore: Literal["both", "conversation", "code"]
    # The entries that left the view (empty when only the code was restored).
    excluded_uuids: list[str] = Field(default_factory=list)
    files_restored: list[str] = Field(default_factory=list)


class SessionMemoryRecord(SideRecord):
    """The session's notes as last extracted; a resume restores them from this alone."""

    type: Literal["session-memory"] = "session-memory"
    content: str
    # The last history entry the extraction request covered.
    last_summarized_uuid: str
    tokens_at_extraction: int


class SessionMetaRecord(SideRecord):
    """Session-level values (`model`, `title`...); on load, later records win key by key."""

    type: Literal["session-meta"] = "session-meta"
    values: dict[str, Any]


BUILTIN_SIDE_RECORDS: tuple[type[SideRecord], ...] = (
    ContentReplacementRecord,
    SnipRecord,
    CollapseCommitRecord,
    CollapseStageRecord,
    TokenRatioRecord,
    TokenCountsRecord,
    MicrocompactClearRecord,
    CacheEditRecord,
    ServerClearRecord,
    CompactionUndoRecord,
    RewindRecord,
    SessionMemoryRecord,
    SessionMetaRecord,
)


class SideRecordRegistry:
    """Which side-record `type` parses into which model.

    To add a record type: subclass `SideRecord` with a `type` literal and list it in
    `BUILTIN_SIDE_RECORDS`, or `register()` it on the registry passed to the loader.
    """

    # Claude Code's own names; ours must not shadow them.
    RESERVED: ClassVar[frozenset[str]] = MESSAGE_RECORD_TYPES | {
        "progress",
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "attachment",
    }

    def __init__(self, types: Iterable[type[SideRecord]] = BUILTIN_SIDE_RECORDS) -> None:
        self._types: dict[str, type[SideRecord]] = {}
        for cls in types:
            self.register(cls)

    def register(self, cls: type[SideRecord]) -> type[SideRecord]:
        name = cls.record_type()
        if name in self.RESERVED:
            raise ValueError(f"side record type {name!r} is a Claude Code record type")
        if name in self._types and self._types[name] is not cls:
            raise ValueError(
                f"side record type {name!r} is already registered to {self._types[name].__name__}"
            )
        self._types[name] = cls
        return cls

    def __contains__(self, record_type: object) -> bool:
        return isinstance(record_type, str) and record_type in self._types

    def names(self) -> list[str]:
        return sorted(self._types)

    def parse(self, raw: dict[str, Any]) -> SideRecord | None:
        """The model for `raw`, or None when its type is not registered. Raises ValidationError."""
        record_type = raw.get("type")
        cls = self._types.get(record_type) if isinstance(record_type, str) else None
        if cls is None:
            return None
        return cls.model_validate(raw)


__all__ = [
    "BUILTIN_SIDE_RECORDS",
    "MESSAGE_RECORD_TYPES",
    "AssistantPayload",
    "AssistantRecord",
    "AttachmentRecord",
    "CacheEditRecord",
    "CollapseCommitRecord",
    "CompactionUndoRecord",
    "ContentReplacementRecord",
    "MessageRecord",
    "MicrocompactClearRecord",
    "ServerClearRecord",
    "RecordEnvelope",
    "RewindRecord",
    "SessionMemoryRecord",
    "SessionMetaRecord",
    "SideRecord",
    "SideRecordRegistry",
    "SnipRecord",
    "SystemRecord",
    "TokenCountsRecord",
    "UserPayload",
    "UserRecord",
    "parse_message_record",
]
