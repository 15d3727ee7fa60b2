"""The seam between the query loop and the context pipeline.

The loop asks a `Projector` for the model's view of the history each turn; the pipeline in
`agent_repl.context` implements it. `/context` asks the same projector with `dry_run=True`,
which must have no side effects (no records written, no model call, no state changed: the
pipeline runs it on a copy of its state).
The projection carries the pipeline's decision about the request, an `Action` the loop matches on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent_repl.core.api.betas import request_betas
from agent_repl.core.api.failures import CompactTrigger
from agent_repl.core.api.request import CacheMarks
from agent_repl.core.model.messages import Message, Usage


@dataclass(frozen=True)
class Compact:
    """Compact before sending (the autocompact check)."""

    trigger: CompactTrigger


@dataclass(frozen=True)
class Block:
    """Do not send: the request is over the blocking limit; `message` says so to the user."""

    message: str


Action = Compact | Block


@dataclass(frozen=True)
class StageReport:
    """What one stage did this turn: the estimated request size before and after it."""

    stage: str
    tokens_before: int
    tokens_after: int
    items: int = 0
    detail: str = ""


@dataclass
class Projection:
    view: list[Message]
    wire: list[dict[str, Any]]
    # token_count_with_estimation: last usage + estimate of what came after - snip freed.
    estimated_tokens: int
    reports: list[StageReport] = field(default_factory=list)
    # Transcript side records and history entries the stages' decisions produced, already applied to
    # the state (in a dry run, to its copy: nothing to write).
    records: list[Any] = field(default_factory=list)
    new_messages: list[Message] = field(default_factory=list)
    body_extras: dict[str, Any] = field(default_factory=dict)
    # For each wire message, the uuids of the history entries it was built from.
    wire_sources: list[list[str]] = field(default_factory=list)
    # The thinking prefix chain (agent_repl.core.api.thinking_prefix): the header seed the view was
    # walked from and the chain value after each wire message, so a reply's own blocks record
    # what they came after without hashing the request again.
    prompt_seed: str = ""
    chain_after: list[str] = field(default_factory=list)
    # Deferred tools the view's compact boundary says were discovered before it: sent loaded.
    loaded_tools: frozenset[str] = frozenset()
    # Which breakpoints of the request get the 1-hour cache lifetime.
    cache: CacheMarks = field(default_factory=CacheMarks)
    # What the checks at the end of the pipeline ask of the loop before this request is sent.
    action: Action | None = None
    # Whether `estimated_tokens` is an upper bound (counted without the encoder, where no check
    # could act on it: agent_repl.context.projector); a decision outside the pipeline that could
    # act on it asks the projector for the exact estimate first.
    estimate_is_upper_bound: bool = False

    @property
    def betas(self) -> list[str]:
        """The betas a request built from this view names: read from its content, as the client
        reads them when it sends it (`core/api/betas.py`)."""
        return request_betas({"messages": self.wire, **self.body_extras})


class Projector(Protocol):
    def project(self, history: list[Message], *, dry_run: bool = False) -> Projection: ...

    def next_request_tokens(self, history: list[Message]) -> int | None:
        """The next request's estimated size from the last projection and what the history gained
        since, without projecting again; None when only a projection can tell."""
        ...

    def check(self, estimated_tokens: int) -> Action | None:
        """The pipeline's checks again, on a count already projected (after a compaction failed)."""
        ...

    def set_aside(self, history: list[Message], prompt_uuid: str) -> list[Any]:
        """A prompt refused as too long even after recovery, and what its turn appended after it,
        leave the view: the records applied, for the caller to write."""
        ...

    def recover_from_overflow(self, history: list[Message]) -> list[Any]:
        """After a prompt-too-long error, the cheapest recovery (draining staged collapses):
        the records it applied, for the caller to write; [] when it freed nothing."""
        ...

    def configure_model(
        self,
        *,
        prompt_seed: str,
        thinking_on: bool,
        on_demand_compaction: bool,
        prompt_seed_for: Callable[[frozenset[str]], str] | None = None,
        cache_read_multiplier: float | None = None,
        output_multiplier: float | None = None,
        request_fields: Mapping[str, Any] | None = None,
        token_ratio: float | None = None,
    ) -> None:
        """The model being called: the thinking prefix seed (`prompt_seed_for` gives it for a tool
        list with deferred tools loaded), what the model accepts, its cache-read and output prices,
        the fields every request carries (`thinking`, `output_config`), and its tokenizer's cl100k
        ratio (the estimates start from it when it changes)."""
        ...

    def set_window(self, context_window: int) -> None:
        """The model's context window (or the one the settings ask for) changed."""
        ...

    def configure_endpoint(self, *, cache_editing: bool) -> None:
        """Whether the endpoint offers cache editing (asked once per session)."""
        ...

    def observe_response(
        self, usage: Usage, *, anchor_uuid: str, context_management: dict[str, Any] | None = None
    ) -> list[Message]: ...

    def take_records(self) -> list[Any]:
        """The records the last `observe_response` applied (what it learned), for the caller to write."""
        ...

    def take_counts(self, history: list[Message] | None = None) -> list[Any]:
        """The exact token counts learned since the last call, as records for the caller to write
        at a turn's end (what a resume reads instead of counting again); `history`, the session's,
        lets it count the turn's last entries too."""
        ...
