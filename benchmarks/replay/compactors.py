"""The peers' compactors: Codex CLI, Gemini CLI and OpenCode, each as its source describes it.

Each one answers the loop's two questions: compact now? (`wants`, from the token count before a
request, asked by `PeerTrigger`) and how (`compact`, run through `PeerCompaction`). They summarize through our compaction request
(`peer_summary`) and differ in when, what they summarize and what they keep verbatim. Sources and
the details left out are in README.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_repl.context.budget import replace_results
from agent_repl.context.compact import CompactionOutcome
from agent_repl.context.compact_prompt import continuation_message
from agent_repl.context.estimate import estimate_request
from agent_repl.context.rounds import ConversationIndex
from agent_repl.context.state import CLEARED_TOOL_RESULT
from agent_repl.core.api.failures import CompactTrigger
from agent_repl.core.model.messages import AssistantMessage, Message, UserMessage
from benchmarks.replay.peer_summary import (
    ask_for_summary,
    chars_over_four,
    entry_chars,
    install,
    typed_prompts,
)
from benchmarks.replay.stages import ResultReplacements

if TYPE_CHECKING:
    from agent_repl.session import Session

# Codex CLI: codex-rs/protocol/src/openai_models.rs (90% of the window), codex-rs/core/src/compact.rs.
CODEX_AUTO_COMPACT_FRACTION = 0.9
CODEX_USER_MESSAGE_MAX_TOKENS = 20_000
# Gemini CLI: packages/core/src/context/chatCompressionService.ts.
GEMINI_COMPRESSION_THRESHOLD = 0.5
GEMINI_PRESERVE_FRACTION = 0.3
GEMINI_FUNCTION_RESPONSE_BUDGET = 50_000
GEMINI_TRUNCATED_LINES = 30
# OpenCode: packages/opencode/src/session/compaction.ts and overflow.ts.
OPENCODE_PRUNE_MINIMUM = 20_000
OPENCODE_PRUNE_PROTECT = 40_000
OPENCODE_COMPACTION_BUFFER = 20_000
OPENCODE_MIN_TAIL, OPENCODE_MAX_TAIL = 2_000, 15_000

def _view(session: Session) -> list[Message]:
    return [m for m in session.projector.project(session.messages, dry_run=True).view if not _is_system(m)]


def _is_system(message: Message) -> bool:
    return message.type == "system"


def _window(session: Session) -> int:
    return session.projector.state.config.context_window  # type: ignore[attr-defined]


class CodexCompactor:
    """Summarize the whole view at 90% of the window; keep the newest user messages (up to 20K
    tokens, the one that crosses the budget cut) and the summary, nothing else."""

    name = "codex-style"

    def wants(self, session: Session, tokens: int) -> bool:
        return tokens >= CODEX_AUTO_COMPACT_FRACTION * _window(session)

    async def compact(self, session: Session, trigger: CompactTrigger) -> CompactionOutcome:
        view = _view(session)
        before = estimate_request(view, session.projector.state)  # type: ignore[attr-defined]
        summary = await ask_for_summary(session, view)
        selected: list[str] = []
        remaining = CODEX_USER_MESSAGE_MAX_TOKENS
        for prompt in reversed(typed_prompts(view)):
            text = prompt.text()
            tokens = chars_over_four(text)
            if tokens <= remaining:
                selected.append(text)
                remaining -= tokens
                continue
            if remaining > 0:
                selected.append(text[: remaining * 4] + f"\n[... {tokens - remaining} tokens truncated ...]")
            break
        verbatim: list[Message] = [UserMessage(content=text) for text in reversed(selected)]
        return await install(session, strategy=self.name, trigger=trigger, before=before, summary=summary, verbatim=verbatim)


class GeminiCompactor:
    """At 50% of the window: truncate old tool outputs past a 50K-token budget, split at the first
    user prompt after 70% of the history's characters, summarize the older part (plus Gemini's
    verification call) and keep the newer part verbatim. A summary that would not shrink the
    history is refused, and from then on only the truncation runs (`hasFailedCompressionAttempt`)."""

    name = "gemini-style"

    def __init__(self, replacements: ResultReplacements) -> None:
        self.replacements = replacements
        self.failed = False

    def wants(self, session: Session, tokens: int) -> bool:
        return tokens >= GEMINI_COMPRESSION_THRESHOLD * _window(session)

    async def compact(self, session: Session, trigger: CompactTrigger) -> CompactionOutcome:
        view = _view(session)
        state = session.projector.state  # type: ignore[attr-defined]
        before = estimate_request(view, state)
        # The session's opening context is not part of Gemini's chat history (it is re-sent apart).
        opening = 1 if view and isinstance(view[0], UserMessage) and view[0].is_meta else 0
        history = view[opening:]
        truncations = budget_truncations(history, self.replacements.replaced)
        if self.failed:
            self.replacements.replaced.update(truncations)
            return CompactionOutcome(bool(truncations), trigger, f"{self.name}: truncation only", before)
        split = find_split_point(history, 1 - GEMINI_PRESERVE_FRACTION)
        if split == 0:
            return CompactionOutcome(False, trigger, f"{self.name}: nothing to compress", before)
        # The original older part goes to the summarizer when it fits the window, else the truncated one.
        head = history[:split]
        if estimate_request(head, state) >= _window(session):
            head = [replace_results(m, truncations) if isinstance(m, UserMessage) else m for m in head]
        first = await ask_for_summary(session, head)
        summary = await ask_for_summary(session, head, previous_summary=first) or first
        kept = [replace_results(m, truncations) if isinstance(m, UserMessage) else m for m in history[split:]]
        carrier = UserMessage(content=continuation_message(summary))
        if not summary or estimate_request([*view[:opening], carrier, *kept], state) > before:
            self.failed = True
            return CompactionOutcome(False, trigger, f"{self.name}: the summary would not shrink the history", before)
        self.replacements.replaced.update(truncations)
        kept_from = history[split].uuid if split < len(history) else None
        return await install(session, strategy=self.name, trigger=trigger, before=before, summary=summary, kept_from=kept_from)


def find_split_point(view: list[Message], fraction: float) -> int:
    """Gemini's `findCompressSplitPoint`: the first user prompt (not a tool result) at or after
    `fraction` of the characters; everything when the history ends with a final answer."""
    sizes = [entry_chars(m) for m in view]
    target = sum(sizes) * fraction
    last_split, cumulative = 0, 0
    for index, message in enumerate(view):
        if isinstance(message, UserMessage) and not message.is_tool_result():
            if cumulative >= target:
                return index
            last_split = index
        cumulative += sizes[index]
    last = view[-1] if view else None
    if isinstance(last, AssistantMessage) and not last.tool_uses():
        return len(view)
    return last_split


def budget_truncations(view: list[Message], already: dict[str, str]) -> dict[str, str]:
    """Gemini's `truncateHistoryToBudget`: newest tool outputs keep 50K tokens; older ones past
    the budget keep their last 30 lines."""
    counted, truncated = 0, {}
    for message in reversed(view):
        if not isinstance(message, UserMessage):
            continue
        for block in reversed(message.tool_results()):
            text = already.get(block.tool_use_id, block.text())
            tokens = chars_over_four(text)
            if counted + tokens > GEMINI_FUNCTION_RESPONSE_BUDGET and block.tool_use_id not in already:
                tail = "\n".join(text.splitlines()[-GEMINI_TRUNCATED_LINES:])
                short = f"[Output too long: {tokens} tokens; showing the last {GEMINI_TRUNCATED_LINES} lines]\n{tail}"
                truncated[block.tool_use_id] = short
                counted += chars_over_four(short)
            else:
                counted += tokens
    return truncated


class OpenCodeCompactor:
    """Summarize at window - 20K, keeping a recent tail of whole turns (or the end of the current
    one) within min(15K, max(2K, 25% of the usable window)); prune runs after each turn."""

    name = "opencode-style"

    def __init__(self, replacements: ResultReplacements) -> None:
        self.replacements = replacements
        self.prunes = 0

    def usable(self, session: Session) -> int:
        return _window(session) - OPENCODE_COMPACTION_BUFFER

    def wants(self, session: Session, tokens: int) -> bool:
        return tokens >= self.usable(session)

    def prune(self, session: Session, next_request_tokens: int | None = None) -> None:
        """Clear tool outputs older than the newest 40K tokens of them, when over 20K would go;
        never in the last two user turns, never past a summary or an earlier prune. (An after-turn
        hook: the estimate it is handed is not needed, it counts the outputs itself.)"""
        total = pruned = turns = 0
        chosen: list[str] = []
        for message in reversed(_view(session)):
            if isinstance(message, UserMessage) and not message.is_tool_result():
                if message.is_compact_summary:
                    break
                turns += 1
            if turns < 2 or not isinstance(message, UserMessage):
                continue
            results = message.tool_results()
            if any(b.tool_use_id in self.replacements.replaced for b in results):
                break
            for block in reversed(results):
                tokens = chars_over_four(block.text())
                total += tokens
                if total > OPENCODE_PRUNE_PROTECT:
                    pruned += tokens
                    chosen.append(block.tool_use_id)
        if pruned > OPENCODE_PRUNE_MINIMUM:
            state = session.projector.state  # type: ignore[attr-defined]
            texts = {b.tool_use_id: b.text() for m in _view(session) if isinstance(m, UserMessage) for b in m.tool_results()}
            freed = sum(state.facts.text_tokens(texts.get(tid, "")) for tid in chosen) - len(chosen) * state.facts.text_tokens(
                CLEARED_TOOL_RESULT
            )
            self.replacements.replaced.update(dict.fromkeys(chosen, CLEARED_TOOL_RESULT))
            self.prunes += 1
            # The last usage still counts the cleared outputs, so the next estimate subtracts them.
            state.snip.tokens_freed_since_usage += max(0, round(freed * state.tokens.ratio))

    def tail_start(self, view: list[Message], budget: int) -> int | None:
        # A turn starts at a user prompt or at a summary (OpenCode's synthetic "continue" prompt).
        prompts = [i for i, m in enumerate(view) if isinstance(m, UserMessage) and not m.is_tool_result() and not m.is_meta]
        ends = [*prompts[1:], len(view)][: len(prompts)]
        starts = set(ConversationIndex(view).round_starts())
        keep, total = None, 0
        for start, end in reversed(list(zip(prompts, ends, strict=True))):
            size = sum(entry_chars(m) // 4 for m in view[start:end])
            if total + size <= budget:
                total, keep = total + size, start
                continue
            for inner in range(start + 1, end):
                if inner in starts and sum(entry_chars(m) // 4 for m in view[inner:end]) <= budget - total:
                    keep = inner
                    break
            break
        return keep or None

    async def compact(self, session: Session, trigger: CompactTrigger) -> CompactionOutcome:
        view = _view(session)
        before = estimate_request(view, session.projector.state)  # type: ignore[attr-defined]
        budget = min(OPENCODE_MAX_TAIL, max(OPENCODE_MIN_TAIL, self.usable(session) // 4))
        start = self.tail_start(view, budget)
        head = view[:start] if start is not None else view
        summary = await ask_for_summary(session, head)
        kept_from = view[start].uuid if start is not None else None
        return await install(session, strategy=self.name, trigger=trigger, before=before, summary=summary, kept_from=kept_from)


