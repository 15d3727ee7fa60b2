"""The seam the HTTP server calls: prepare a request, answer it, commit its cache writes.

Per request the server calls, in order:
  prepare(body, ...)   edits applied, tokens counted, cache planned (may raise EmulatorRequestError)
  (the server checks prepared.total_input_tokens against engine.window_for(prepared.spec))
  respond(prepared)    the policy's answer, shaped and counted
  commit(prepared)     when the response starts (message_start, or the JSON body): cache
                       writes become visible, input is metered
  completed(prepared, completion)  after message_stop: output is metered, the policy advances
"""

from __future__ import annotations

import hashlib
import itertools
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent_repl.emulator.blocks import Block, content_blocks, digest, strip_bookkeeping
from agent_repl.emulator.cache import CachePlan, CacheUsage, PromptCache, automatic_ttl_of
from agent_repl.emulator.cache_edits import CACHE_EDITING_BETA, apply_cache_edits, reject_cache_editing_fields
from agent_repl.emulator.compaction import check_compaction_request, compaction_block, compaction_requested
from agent_repl.emulator.context_edits import (
    CONTEXT_MANAGEMENT_BETAS,
    apply_context_management,
    strip_prior_thinking,
)
from agent_repl.emulator.diagnostics import CACHE_DIAGNOSIS_BETA, PromptHistory, PromptRecord, diagnose
from agent_repl.emulator.metering import UsageMeter
from agent_repl.emulator.models import ModelSpec
from agent_repl.emulator.output import shape_reply, thinking_mode
from agent_repl.emulator.policies.base import Policy, PolicyRequest, Reply, base62
from agent_repl.emulator.policies.summary import PlainSummarizer, Summarizer
from agent_repl.emulator.prompt import Draft, PromptView, draft_prompt, draft_tokens, render, visible_body
from agent_repl.emulator.request_error import EmulatorRequestError
from agent_repl.emulator.server_tools import WebFixtures, reject_disabled_web_tools, run_server_tools
from agent_repl.emulator.thinking_binding import THINKING_BINDING_BETA, BindingState, check_thinking
from agent_repl.emulator.tokens import TokenCounter


def unknown_beta(name: str) -> EmulatorRequestError:
    return EmulatorRequestError(
        f"Unexpected value(s) `{name}` for the `anthropic-beta` header. Please consult our documentation at "
        "platform.claude.com/docs or try again without the header."
    )


@dataclass(frozen=True)
class Prepared:
    spec: ModelSpec
    body: dict[str, Any]
    visible_body: dict[str, Any]
    api_key: str
    betas: frozenset[str]
    request_index: int
    serial: int  # unique per engine, in prepare order
    started_at: float
    message_id: str
    total_input_tokens: int
    # The API's `usage` object for `message_start` (output_tokens 0).
    usage: dict[str, Any]
    # `context_management.applied_edits` for the response; None when the request had none.
    applied_edits: list[dict[str, Any]] | None
    # False: leave `diagnostics` out of the response; True: send `diagnostics` (None -> null).
    diagnostics_requested: bool
    diagnostics: dict[str, Any] | None
    cache_plan: CachePlan
    view: PromptView
    policy_request: PolicyRequest
    # What thinking in the reply is bound to (preserved thinking).
    binding: BindingState | None = None
    # `input_transformations` for the response; None leaves the field out.
    input_transformations: list[dict[str, Any]] | None = None


@dataclass(frozen=True)
class Completion:
    content: list[Block]
    stop_reason: str
    stop_sequence: str | None
    output_tokens: int
    # The final `usage` (input side as in Prepared.usage, plus output and output_tokens_details).
    usage: dict[str, Any]
    reply: Reply | None  # None: the policy was not asked (max_tokens 0)
    stop_details: dict[str, Any] | None = None


@dataclass(frozen=True)
class _Built:
    draft: Draft
    deleted_tokens: int | None
    applied_edits: list[dict[str, Any]] | None
    tokens_before_context_edits: int | None
    binding: BindingState


def _content_digest(content: list[Block]) -> bytes:
    return digest([strip_bookkeeping(b) for b in content])


def usage_object(
    cache: CacheUsage, body: dict[str, Any], *, deleted_tokens: int | None, output_tokens: int = 0
) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "input_tokens": cache.input_tokens,
        "cache_creation_input_tokens": cache.cache_creation_input_tokens,
        "cache_read_input_tokens": cache.cache_read_input_tokens,
        "cache_creation": {
            "ephemeral_5m_input_tokens": cache.ephemeral_5m_input_tokens,
            "ephemeral_1h_input_tokens": cache.ephemeral_1h_input_tokens,
        },
        "output_tokens": output_tokens,
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "service_tier": "standard",
        "inference_geo": str(body.get("inference_geo") or "global"),
        "speed": "fast" if body.get("speed") == "fast" else "standard",
    }
    if deleted_tokens is not None:
        usage["cache_deleted_input_tokens"] = deleted_tokens
    return usage


class Engine:
    def __init__(
        self,
        models: dict[str, ModelSpec],
        policy: Policy,
        clock: Callable[[], float] = time.time,
        context_window: int | None = None,
        *,
        cache_editing: bool = False,
        thinking_prefix_enforced: bool = True,
        web_tools_enabled: bool = True,
        summarizer: Summarizer | None = None,
    ) -> None:
        """`summarizer` writes the answers to summary and memory requests (through the policy) and
        on-demand compaction blocks; by default a few plain lines (`PlainSummarizer`).
        `cache_editing`: accept our cache-editing beta (not part of the public API).
        `web_tools_enabled=False` plays an organization whose administrator has not enabled web
        search and fetch: a request that declares them is refused.
        `thinking_prefix_enforced`: the prefix check fails requests by default, as for accounts
        created from 2026-08-31 on (older accounts: only when `block_binding` asks)."""
        self.models = models
        self.policy = policy
        self.clock = clock
        self.context_window = context_window
        self.cache_editing = cache_editing
        self.thinking_prefix_enforced = thinking_prefix_enforced
        self.web_tools_enabled = web_tools_enabled
        self.summarizer: Summarizer = summarizer if summarizer is not None else PlainSummarizer()
        self.cache = PromptCache(clock)
        self.meter = UsageMeter()
        self._history = PromptHistory()
        self._counters: dict[float, TokenCounter] = {}
        self._committed: OrderedDict[int, None] = OrderedDict()
        # Replies that stopped with pause_turn, by content digest: sent back as is, they continue.
        self._paused: OrderedDict[bytes, None] = OrderedDict()
        self._serials = itertools.count(1)
        self._lock = threading.Lock()
        self._web: WebFixtures | None = None

    # Lookups

    def resolve(self, model_id: object) -> ModelSpec:
        spec = self.models.get(model_id) if isinstance(model_id, str) else None
        if spec is None:
            raise EmulatorRequestError(f"model: {model_id}", status=404, error_type="not_found_error")
        return spec

    def window_for(self, spec: ModelSpec) -> int:
        return self.context_window if self.context_window is not None else spec.context_window

    def counter_for(self, spec: ModelSpec) -> TokenCounter:
        with self._lock:
            counter = self._counters.get(spec.token_factor)
            if counter is None:
                counter = self._counters[spec.token_factor] = TokenCounter(spec.token_factor)
            return counter

    # Building the prompt

    def _build(
        self, body: dict[str, Any], spec: ModelSpec, betas: frozenset[str], counter: TokenCounter
    ) -> _Built:
        if CACHE_EDITING_BETA in betas and not self.cache_editing:
            raise unknown_beta(CACHE_EDITING_BETA)
        check_compaction_request(body, spec, betas)
        if not self.web_tools_enabled:
            reject_disabled_web_tools(body)
        draft = draft_prompt(body)
        model_ids = sorted({s.id for s in self.models.values()})
        binding = check_thinking(
            draft, body, spec, model_ids, betas, enforced_by_default=self.thinking_prefix_enforced
        )
        deleted: int | None = None
        if CACHE_EDITING_BETA in betas:
            deleted = apply_cache_edits(draft, counter)
        else:
            reject_cache_editing_fields(draft)
        if not spec.keeps_prior_thinking:
            strip_prior_thinking(draft)
        applied: list[dict[str, Any]] | None = None
        before: int | None = None
        if "context_management" in body:
            if CONTEXT_MANAGEMENT_BETAS.isdisjoint(betas):
                raise EmulatorRequestError("context_management: Extra inputs are not permitted")
            before = draft_tokens(draft, counter)
            thinks = thinking_mode(body, spec)[0]
            applied = apply_context_management(draft, body["context_management"], spec, counter, thinking_on=thinks)
        return _Built(draft, deleted, applied, before, binding)

    def prepare(
        self, body: dict[str, Any], *, api_key: str, betas: set[str] | frozenset[str], request_index: int
    ) -> Prepared:
        started_at = self.clock()
        spec = self.resolve(body.get("model"))
        beta_set = frozenset(betas)
        counter = self.counter_for(spec)
        built = self._build(body, spec, beta_set, counter)
        view = render(built.draft, body, spec.id, beta_set, counter)
        plan = self.cache.plan(
            view.positions,
            api_key=api_key,
            automatic_ttl=automatic_ttl_of(body.get("cache_control")),
            min_tokens=spec.min_cacheable_tokens,
            total_tokens=view.total_tokens,
            started_at=started_at,
        )
        with self._lock:
            serial = next(self._serials)
        seed = f"{serial}\x1f{api_key}\x1f{request_index}\x1f{view.conversation_key}".encode()
        message_id = "msg_01" + base62(hashlib.sha256(seed).digest(), 22)
        requested = CACHE_DIAGNOSIS_BETA in beta_set and isinstance(body.get("diagnostics"), dict)
        diagnostics = None
        if requested:
            previous_id = body["diagnostics"].get("previous_message_id")
            if isinstance(previous_id, str):
                current = PromptRecord(api_key, spec.id, view)
                diagnostics = diagnose(self._history.get(previous_id), current)
        shown = visible_body(built.draft, body)
        return Prepared(
            spec=spec,
            body=body,
            visible_body=shown,
            api_key=api_key,
            betas=beta_set,
            request_index=request_index,
            serial=serial,
            started_at=started_at,
            message_id=message_id,
            total_input_tokens=view.total_tokens,
            usage=usage_object(plan.usage, body, deleted_tokens=built.deleted_tokens),
            applied_edits=built.applied_edits,
            diagnostics_requested=requested,
            diagnostics=diagnostics,
            cache_plan=plan,
            view=view,
            policy_request=PolicyRequest(shown, spec, request_index, view.conversation_key, self.summarizer),
            binding=built.binding,
            input_transformations=(
                built.binding.transformations if THINKING_BINDING_BETA in beta_set else None
            ),
        )

    def count_tokens(self, body: dict[str, Any], *, betas: set[str] | frozenset[str]) -> dict[str, Any]:
        """The count_tokens response body (§8.3): no caching, edits applied."""
        spec = self.resolve(body.get("model"))
        counter = self.counter_for(spec)
        built = self._build(body, spec, frozenset(betas), counter)
        result: dict[str, Any] = {"input_tokens": draft_tokens(built.draft, counter)}
        if built.tokens_before_context_edits is not None:
            result["context_management"] = {"original_input_tokens": built.tokens_before_context_edits}
        return result

    # Answering

    def respond(self, prepared: Prepared) -> Completion:
        spec = prepared.spec
        if prepared.body.get("max_tokens") == 0:
            # Pre-warm (§4.9): write the cache, say nothing, bill no output.
            return Completion([], "max_tokens", None, 0, self._final_usage(prepared, 0, 0), None)
        if compaction_requested(prepared.body):
            return self._compact(prepared)
        reply = self.policy.reply(prepared.policy_request)
        # The API's own tools (web_search, web_fetch) run here, between the policy's rounds.
        served = run_server_tools(prepared.policy_request, reply, self.policy.reply, self.web_fixtures())
        reply = served.reply
        shaped = shape_reply(
            reply,
            body=prepared.body,
            spec=spec,
            counter=self.counter_for(spec),
            room_in_window=self.window_for(spec) - prepared.total_input_tokens,
            binding=prepared.binding,
        )
        usage = self._final_usage(prepared, shaped.output_tokens, shaped.thinking_tokens)
        usage["server_tool_use"] = {
            "web_search_requests": served.web_search_requests,
            "web_fetch_requests": served.web_fetch_requests,
        }
        return Completion(
            shaped.content,
            shaped.stop_reason,
            shaped.stop_sequence,
            shaped.output_tokens,
            usage,
            reply,
            shaped.stop_details,
        )

    def web_fixtures(self) -> WebFixtures:
        if self._web is None:
            self._web = WebFixtures.bundled()
        return self._web

    def _compact(self, prepared: Prepared) -> Completion:
        """The server writes the summary itself: the policy is not asked."""
        assert prepared.binding is not None
        instructions = prepared.body["compaction"].get("instructions")
        block = compaction_block(
            prepared.visible_body, prepared.spec, prepared.binding, instructions, self.summarizer
        )
        output = self.counter_for(prepared.spec).count_block(block)
        return Completion([block], "compaction", None, output, self._final_usage(prepared, output, 0), None)

    def _final_usage(self, prepared: Prepared, output_tokens: int, thinking_tokens: int) -> dict[str, Any]:
        usage = {**prepared.usage, "output_tokens": output_tokens}
        usage["output_tokens_details"] = {"thinking_tokens": thinking_tokens}
        return usage

    def commit(self, prepared: Prepared, message_id: str | None = None) -> None:
        """The response started: its cache writes become visible and its input is metered (once).

        `message_id` is the id the client sees, when the server made its own rather than using
        `prepared.message_id`; cache diagnostics look previous prompts up by it.
        """
        with self._lock:
            if prepared.serial in self._committed:
                return
            self._committed[prepared.serial] = None
            while len(self._committed) > 4096:
                self._committed.popitem(last=False)
        self.cache.commit(prepared.cache_plan)
        self._history.remember(
            message_id or prepared.message_id, PromptRecord(prepared.api_key, prepared.spec.id, prepared.view)
        )
        self.meter.add_input(prepared.spec, prepared.cache_plan.usage, prepared.total_input_tokens)

    def completed(self, prepared: Prepared, completion: Completion) -> None:
        """The response was fully sent: meter its output and let the policy move on."""
        self.meter.add_output(prepared.spec, completion.output_tokens, prepared.total_input_tokens)
        if completion.stop_reason == "pause_turn":
            with self._lock:
                self._paused[_content_digest(completion.content)] = None
                while len(self._paused) > 1024:
                    self._paused.popitem(last=False)
        if completion.reply is not None:
            self.policy.completed(prepared.policy_request, completion.reply)

    def continues_paused_turn(self, body: dict[str, Any]) -> bool:
        """Whether the request ends with a reply of ours that paused (`pause_turn`), sent back as is."""
        messages = body.get("messages") if isinstance(body, dict) else None
        last = messages[-1] if isinstance(messages, list) and messages else None
        if not isinstance(last, dict) or last.get("role") != "assistant":
            return False
        with self._lock:
            return _content_digest(content_blocks(last.get("content"))) in self._paused

    def usage_totals(self) -> dict[str, Any]:
        return self.meter.totals()

    def reset(self) -> None:
        """Forget cache entries, prompt history and usage totals (and the policy's progress)."""
        self.cache = PromptCache(self.clock)
        self.meter = UsageMeter()
        self._history = PromptHistory()
        with self._lock:
            self._committed.clear()
            self._paused.clear()
        reset_policy = getattr(self.policy, "reset", None)
        if callable(reset_policy):
            reset_policy()
