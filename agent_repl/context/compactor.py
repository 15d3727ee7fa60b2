"""The compactor a session holds (docs/architecture.md 5.6): the circuit breaker, the turn-start
decision and the way into a compaction.

Every session gets one, but few sessions compact, so this module is light: the compaction itself
(agent_repl.context.compact: the summary request, the kept tail, what is put back) is imported
when the first one runs. The numbers the autocompact check prices a compaction with live in
agent_repl.context.compaction_sizes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_repl.context.compaction_sizes import SUMMARY_MAX_TOKENS, is_typed_prompt
from agent_repl.context.session_memory import extraction_thresholds, has_reply, uncovered
from agent_repl.context.thresholds import autocompact_threshold
from agent_repl.core.model.messages import Message

if TYPE_CHECKING:
    from agent_repl.context.compact import CompactionOutcome
    from agent_repl.context.context_session import ContextSession
    from agent_repl.context.projector import Pipeline
    from agent_repl.core.api.failures import CompactTrigger

MAX_CONSECUTIVE_FAILURES = 3


class Compactor:
    """Runs compactions for one session's pipeline and keeps the circuit breaker."""

    def __init__(self, pipeline: Pipeline, *, summary_max_tokens: int = SUMMARY_MAX_TOKENS) -> None:
        self.pipeline = pipeline
        self.summary_max_tokens = summary_max_tokens
        self.consecutive_failures = 0
        # What this session's last summary reply took (output tokens): the room the next one needs.
        self.summary_output_tokens = 0
        self.disabled = False
        self._breaker_reported = False

    def breaker_just_opened(self) -> bool:
        """True once, for the failure that opened the breaker (so the user hears it once)."""
        if self.disabled and not self._breaker_reported:
            self._breaker_reported = True
            return True
        return False

    async def compact(
        self, session: ContextSession, *, trigger: CompactTrigger, instructions: str | None = None, byte_budget: int | None = None
    ) -> CompactionOutcome:
        """`byte_budget`: after a 413, the most bytes the summary request and the kept tail may hold."""
        from agent_repl.context.compact import CompactionRun

        outcome = await CompactionRun(self).run(session, trigger=trigger, instructions=instructions, byte_budget=byte_budget)
        if outcome.ok:
            self.consecutive_failures = 0
        else:
            self.consecutive_failures += 1
            if self.consecutive_failures >= MAX_CONSECUTIVE_FAILURES and not self.disabled:
                self.disabled = True
                self.pipeline.state.config.autocompact_on = False  # the blocking limit and automatic snip take over
                outcome.message += (
                    f" Automatic compaction failed {MAX_CONSECUTIVE_FAILURES} times in a row, so it is off "
                    "for the rest of this session; /compact still works."
                )
        return outcome

    def due_between_turns(self, session: ContextSession, view: list[Message], tokens: int) -> bool:
        """At a turn's start, whether to compact from the session's notes now: they cover every entry
        before the new prompt and the view is past the size the notes wait for (near the threshold).
        Nothing of the finished turns is then kept verbatim, whereas the threshold reached within
        the turn keeps every result of the turn so far."""
        config = self.pipeline.state.config
        memory = session.memory
        if not config.autocompact_on or self.disabled or memory is None or memory.extracting:
            return False
        if not memory.content or not memory.last_summarized_uuid:
            return False
        if tokens < extraction_thresholds(autocompact_threshold(config.effective_window))[0]:
            return False
        rest = uncovered(view, memory.last_summarized_uuid)
        return rest is not None and any(is_typed_prompt(m) for m in rest) and not has_reply(rest)

    def summary_room(self) -> int:
        """The tokens a summary request leaves for the reply: the window's reserve for it, or what
        the last summary of this session took when that was more."""
        config = self.pipeline.state.config
        return max(config.context_window - config.effective_window, self.summary_output_tokens)
