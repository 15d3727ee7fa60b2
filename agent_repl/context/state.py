"""What the pipeline remembers between turns, and its settings.

Every decision that changes what the model sees is kept here and written to the transcript as a
side record, so a resume rebuilds the same state from the records alone and sends
the same bytes. Records change it through `agent_repl.context.records.apply`; a dry run works on
a `copy()`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from agent_repl.context.facts import FactCache
from agent_repl.context.thresholds import REFERENCE_WINDOW, effective_window, tool_result_budget_chars
from agent_repl.core.model.messages import AssistantMessage, Message, Usage, UserMessage, utc_now
from agent_repl.core.model.tokens import DEFAULT_CLAUDE_RATIO

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_Part = TypeVar("_Part", bound="DataclassInstance")
_Memo = TypeVar("_Memo")

CLEARED_TOOL_RESULT = "[Old tool result content cleared]"


@dataclass
class PipelineConfig:
    # How a full context is handled: summarize it (autocompact) or project collapsed spans.
    strategy: Literal["autocompact", "collapse"] = "autocompact"
    # Tool results of one wire-level user message may total at most this many characters.
    tool_result_budget_chars: int = 200_000
    # Tools whose results are never replaced (unlimited max_result_size_chars: Read).
    unlimited_tools: frozenset[str] = frozenset({"Read"})
    # They bound their own output for a 200K window; in a smaller one, where two such
    # results can fill the window, they are budgeted like the rest.
    unlimited_tools_exempt: bool = True
    # Tools whose old results microcompact may clear: those that declare it
    # (`Tool.microcompact_clearable`), filled in from the session's tools; none by default.
    clearable_tools: frozenset[str] = frozenset()
    # Time-based microcompact: the server cache is cold after this gap, or, with
    # `clear_at_expiry` (settings: clear_at_cache_expiry), when what the last request wrote
    # expired (5 minutes, or the hour).
    cache_cold_gap_minutes: float = 60.0
    clear_at_expiry: bool = True
    # Off (settings: clear_on_resume): a resumed session's first request keeps its old results,
    # however long ago its last reply was; the time-based clear waits for a reply of this run.
    clear_on_resume: bool = True
    keep_recent_tool_results: int = 5
    # Breakpoint lifetimes (agent_repl.context.cache_ttl), and the gap between turns that counts as a pause.
    cache_ttl: Literal["5m", "1h", "prefix-1h", "auto"] = "5m"
    pause_minutes: float = 5.0
    # Cached microcompact: when more clearable results than the trigger are live in the
    # cache, delete the oldest down to `cached_keep`. A delete keeps the rest of the prefix a
    # cache read, so it is the cheapest way to stay small. Over the replay benchmark's 200K-window
    # sessions (before the size rule below) 40/20 cost 6,477K units, 30/15 5,877K, 25/12 5,486K
    # and 20/10 5,221K; 25/12 keeps the cache-read share of tests/e2e/test_long_session.py at
    # 0.91 (20/10: 0.89, since what is deleted is no longer read) and the model's last twelve
    # results in view.
    cache_editing: bool = False
    cached_trigger: int = 25
    cached_keep: int = 12
    # Also by size: when the live results pass half the effective window, delete the oldest until
    # they are under a quarter of it (0 turns the size rule off). A small window never holds 25
    # results; there this rule made the replay benchmark's 50K sessions 11% cheaper (4,145K ->
    # 3,672K units) with 2 compactions instead of 36, and its 200K sessions 7% cheaper.
    cached_trigger_share: float = 0.5
    cached_keep_share: float = 0.25
    # Public fallback when the endpoint has no cache editing (clear_tool_uses_20250919).
    api_context_management: bool = True
    api_clear_trigger_tokens: int = 100_000
    api_clear_keep_tool_uses: int = 5
    # Server-side clears in batches that pay for themselves (agent_repl.context.server_clear): the
    # newest results kept (a 200K-window amount, scaled below), the least a batch frees.
    server_clear: bool = False
    server_clear_protect_tokens: int = 40_000
    server_clear_min_tokens: int = 2_000
    # Also compact below the threshold when carrying the context over the expected rest of the
    # session costs more than summarizing it (agent_repl.context.thresholds.compaction_pays); on in
    # windows of at least `cost_trigger_min_window` tokens (set_window decides; 0: never).
    cost_trigger: bool = False
    cost_trigger_min_window: int = 200_000
    # It spaces compactions as if each cost this many times its price: each summary loses detail
    # no price shows (agent_repl.context.autocompact).
    cost_trigger_margin: float = 2.0
    # After a compaction: at most this much of the current turn is kept verbatim (a 200K-window
    # amount, scaled below), and recently read files are put back within this share of the window.
    kept_tail_tokens: int = 10_000
    reinject_share: float = 0.05
    # After a compaction, list the paths the earlier tool calls named (agent_repl.context.touched_files).
    list_touched_files: bool = True
    # After a compaction, what the user typed is put back within this share of the window
    # (agent_repl.context.user_messages); 0 puts back none.
    user_messages_share: float = 0.05
    # The model's cache-read price relative to base input (its writes: 1.25x for 5 minutes, 2x for the hour).
    cache_read_multiplier: float = 0.1
    # Its output price relative to base input (what a summary costs to write).
    output_multiplier: float = 5.0
    # The model's tokenizer family's cl100k ratio: where the learned ratio (TokenAccounting) starts.
    token_ratio: float = DEFAULT_CLAUDE_RATIO
    # Automatic snip: only over this share of the effective window, and only while no
    # summary manages the context. Every automatic snip rewrites the cached prefix from the snip
    # point, which costs about what a compaction does, and with autocompact on the compaction
    # follows a few requests later anyway (the replay benchmark measured a snip-then-compact
    # session 9% dearer). So it is the fallback for sessions where autocompact is off or its
    # circuit breaker has opened: there it keeps the session under the blocking limit.
    auto_snip_threshold: float = 0.95
    # Whether autocompact will summarize before the view outgrows the window (settings, strategy
    # and circuit breaker); kept up to date by bootstrap and the compactor.
    autocompact_on: bool = False
    context_window: int = 200_000
    effective_window: int = 180_000
    # The system prompt and the tool definitions' JSON, counted through the fact cache when an
    # estimate needs them (the usage covers them after the first response; before it, estimates
    # add them).
    fixed_prompt: tuple[str, ...] = ()
    # Tools sent with `defer_loading` (MCP tools over their share of the window).
    deferred_tools: frozenset[str] = frozenset()
    # Main thread only: a sub-agent or a compaction request must not touch the cached registry.
    main_thread: bool = True
    # The digest of the request header (model, system, tools) the thinking prefix chain starts
    # from (agent_repl.core.api.thinking_prefix); set by the session, again when the model changes.
    prompt_seed: str = ""
    # The seed for a view whose compact boundary loaded deferred tools (the tool list differs).
    prompt_seed_for: Callable[[frozenset[str]], str] | None = None
    # Whether the model being called thinks (clear_thinking is refused without thinking on).
    thinking_on: bool = False
    # Whether it takes the API's on-demand compaction (the summary that keeps kept turns' thinking).
    on_demand_compaction: bool = False
    # Fields every request carries (`thinking`, `output_config`: agent_repl.core.config.thinking_request).
    request_fields: dict[str, Any] = field(default_factory=dict)

    def set_window(self, context_window: int) -> None:
        """The window and what derives from it: the effective window and the tool-result budget."""
        self.context_window = context_window
        self.effective_window = effective_window(context_window)
        self.tool_result_budget_chars = tool_result_budget_chars(self.effective_window)
        self.unlimited_tools_exempt = context_window >= REFERENCE_WINDOW
        self.cost_trigger = 0 < self.cost_trigger_min_window <= context_window


@dataclass
class BudgetState:
    """Content replacement: what was seen and what was replaced, by tool_use_id."""

    seen: set[str] = field(default_factory=set)
    replacements: dict[str, str] = field(default_factory=dict)


@dataclass
class SnipState:
    snipped: set[str] = field(default_factory=set)
    # Freed since the last API usage, which cannot see them.
    tokens_freed_since_usage: int = 0
    tokens_freed_total: int = 0


@dataclass
class PinnedCacheEdit:
    anchor_uuid: str
    tool_use_ids: list[str]


@dataclass
class MicrocompactState:
    # Time-based clears: tool_use_id -> the exact replacement text.
    cleared: dict[str, str] = field(default_factory=dict)
    # The last reply of a resumed history (set on resume): the gap after it is the resume's.
    resumed_after: str | None = None
    # Cached microcompact: results deleted from the server cache, and where each edit is pinned.
    deleted: set[str] = field(default_factory=set)
    pinned: list[PinnedCacheEdit] = field(default_factory=list)
    # cache_deleted_input_tokens is cumulative over the pinned edits; the baseline is the value
    # before the newest edit, so the newest edit's own saving is the difference.
    deleted_tokens_reported: int = 0
    deleted_tokens_baseline: int = 0
    # Tokens cleared or deleted after the last usage, which still counts them (estimates subtract them).
    freed_since_usage: int = 0
    # Cleared server-side on every request (agent_repl.context.server_clear): tool_use_id -> the
    # tokens it frees, oldest first; of `freed_since_usage`, what new batches freed; what the last
    # response said the server cleared.
    server_cleared: dict[str, int] = field(default_factory=dict)
    server_freed_since_usage: int = 0
    server_cleared_reported: int = 0


@dataclass
class TokenAccounting:
    """The last usage the API reported and how far our estimates are from it."""

    last_usage: Usage | None = None
    # The uuid of the last history entry the last usage covers (its assistant reply).
    last_usage_anchor: str | None = None
    ratio: float = DEFAULT_CLAUDE_RATIO
    # Main responses so far in the session: what the expected remaining requests are estimated from.
    responses: int = 0
    # What we estimated for the last request before sending it, to compare with its usage.
    pending_estimate: int | None = None
    # Whether the last usage still describes the view up to its reply (the projection checks the
    # prefix digests); a usage recorded for another view (a foreign transcript) is no anchor.
    anchor_describes_view: bool = True
    errors: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class LastCompaction:
    """What the history says of its last active compaction (derived by the boundary slice on
    every projection, so live, resumed and dry runs agree): the prompt of the first reply after
    it (None before that reply), the main replies since, and what its summary cost in output
    tokens (None when it took no model call, or the boundary does not say)."""

    after_tokens: int | None
    responses_since: int
    summary_output_tokens: int | None


@dataclass
class CompactionState:
    # Boundaries taken back by /uncompact, and the entries (boundary, summary, attachments) that
    # left the view with them.
    undone: set[str] = field(default_factory=set)
    excluded: set[str] = field(default_factory=set)
    # Derived from the history by each projection (agent_repl.context.boundary).
    last: LastCompaction | None = None


@dataclass(frozen=True)
class CollapsedSpan:
    """A span of the view shown to the model as one `<collapsed>` summary.

    `uuids` are the entries it covers (start..end in view order, system entries aside); the
    history keeps them all.
    """

    collapse_id: str
    start_uuid: str
    end_uuid: str
    summary: str
    uuids: frozenset[str]


@dataclass
class CollapseState:
    """Context collapse: the commit log in order, and spans proposed but not yet committed."""

    commits: list[CollapsedSpan] = field(default_factory=list)
    staged: list[CollapsedSpan] = field(default_factory=list)
    # uuid of every covered entry -> the collapse_id of its committed span.
    owner: dict[str, str] = field(default_factory=dict)
    # What commits took out of the count the last API usage reported (that usage predates them),
    # valid while the usage anchor is still `freed_anchor`.
    freed_since_usage: int = 0
    freed_anchor: str | None = None
    # The `<collapsed>` entry of each committed span, built once so its facts are computed once.
    placeholders: dict[str, UserMessage] = field(default_factory=dict)

    def add_commit(self, span: CollapsedSpan) -> None:
        self.commits.append(span)
        self.owner.update(dict.fromkeys(span.uuids, span.collapse_id))


def _parse(timestamp: str) -> datetime | None:
    try:
        return datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return None


@dataclass
class PauseLog:
    """Where in the history a typed prompt came after a pause (scanned once, as the history grows)."""

    scanned: int = 0
    last_reply_at: datetime | None = None
    pauses: list[int] = field(default_factory=list)  # history indexes of the prompts after a pause

    def update(self, history: list[Message], minutes: float) -> None:
        for index in range(self.scanned, len(history)):
            message = history[index]
            if isinstance(message, AssistantMessage) and not message.is_synthetic:
                self.last_reply_at = _parse(message.timestamp) or self.last_reply_at
            elif is_prompt(message) and self.last_reply_at is not None:
                when = _parse(message.timestamp)
                if when is not None and (when - self.last_reply_at).total_seconds() >= 60 * minutes:
                    self.pauses.append(index)
        self.scanned = len(history)

    def seen_before(self, index: int) -> bool:
        return bool(self.pauses) and self.pauses[0] < index


def is_prompt(message: Message) -> bool:
    return isinstance(message, UserMessage) and not message.is_meta and not message.is_tool_result() and not (
        message.is_compact_summary
    )


def _copy_part(part: _Part) -> _Part:
    """A copy of one part of the state with its own sets, dicts and lists (their items are never edited)."""
    duplicate = copy.copy(part)
    for f in fields(part):
        value = getattr(part, f.name)
        if isinstance(value, set | dict | list):
            setattr(duplicate, f.name, copy.copy(value))
    return duplicate


@dataclass
class PipelineState:
    config: PipelineConfig = field(default_factory=PipelineConfig)
    budget: BudgetState = field(default_factory=BudgetState)
    snip: SnipState = field(default_factory=SnipState)
    microcompact: MicrocompactState = field(default_factory=MicrocompactState)
    tokens: TokenAccounting = field(default_factory=TokenAccounting)
    compaction: CompactionState = field(default_factory=CompactionState)
    collapse: CollapseState = field(default_factory=CollapseState)
    pauses: PauseLog = field(default_factory=PauseLog)
    # Derived for each projection from the history: when what the last request wrote expires.
    cold_after_minutes: float = 60.0
    # Entries a /rewind of the conversation took out of the view (the history keeps them).
    rewound: set[str] = field(default_factory=set)
    # Per-entry facts (tokens, wire blocks, tool ids) and per-text token counts, kept across turns.
    facts: FactCache = field(default_factory=FactCache)
    clock: Callable[[], datetime] = utc_now
    # Derived facts about the view being projected, shared by the stages of one projection.
    scratch: dict[tuple[str, int], tuple[list[Message], object]] = field(default_factory=dict)

    def copy(self) -> PipelineState:
        """A copy whose decisions and bookkeeping change without touching this state (a dry run);
        the settings, the fact cache and the clock are shared."""
        return replace(
            self,
            budget=_copy_part(self.budget),
            snip=_copy_part(self.snip),
            microcompact=_copy_part(self.microcompact),
            tokens=_copy_part(self.tokens),
            compaction=_copy_part(self.compaction),
            collapse=_copy_part(self.collapse),
            pauses=_copy_part(self.pauses),
            rewound=set(self.rewound),
            scratch={},
        )

    def memo(self, key: str, view: list[Message], compute: Callable[[], _Memo]) -> _Memo:
        """`compute()` once per projection for this very view list (stages pass lists, never edit them)."""
        slot = (key, id(view))
        cached = self.scratch.get(slot)
        if cached is None or cached[0] is not view:
            cached = (view, compute())
            self.scratch[slot] = cached
        # One key is always computed by one function, so its value has that function's type.
        return cast(_Memo, cached[1])
