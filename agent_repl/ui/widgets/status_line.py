"""The status line (the permission mode when it is not the default, model, context used against
the window, distance to autocompact, cache-read share of the last request, cost) and the working
indicator shown while a turn runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from agent_repl.context.thresholds import autocompact_threshold
from agent_repl.core.api.models import cost_text

if TYPE_CHECKING:
    from agent_repl.core.model.events import AgentEvent

BAR_WIDTH = 16
SPINNER_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def short_tokens(tokens: int) -> str:
    """A token count as the status line shows it: 950, 8.7k, 87k, 1.2M."""
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:.1f}M"
    if tokens >= 10_000:
        return f"{tokens // 1000}k"
    if tokens >= 1_000:
        return f"{tokens / 1000:.1f}k"
    return str(tokens)


def context_bar(used: int, window: int, width: int = BAR_WIDTH) -> Text:
    share = min(1.0, used / window) if window > 0 else 0.0
    filled = round(share * width)
    style = "green" if share < 0.6 else ("yellow" if share < 0.85 else "red")
    bar = Text("▕", style="dim")
    bar.append("█" * filled, style=style)
    bar.append("░" * (width - filled), style="dim")
    bar.append("▏", style="dim")
    return bar


def model_label(model: str, effort: str | None) -> str:
    """The model, and the effort level its requests carry when one is chosen."""
    return f"{model} · {effort} effort" if effort else model


class StatusLine(Static):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model = ""
        self.context_tokens = 0
        # Whether `context_tokens` is counted yet (a session just shown is counted a moment later).
        self.context_counted = False
        # The figure is out of the whole window, as /context shows it; the distance to autocompact
        # comes from the effective window (the window less the reply's reserve).
        self.context_window = 0
        self.effective_window = 0
        self.cache_read_share: float | None = None
        self.cost_usd: float | None = 0.0
        self.session_label = ""
        self.note = ""
        # The permission mode's label ("" in the default mode).
        self.mode_label = ""
        # The running turn's output tokens against its budget, when it has one.
        self.budget: tuple[int, int] | None = None

    def set_session(
        self,
        *,
        model: str,
        context_window: int,
        effective_window: int,
        context_tokens: int | None,
        cost_usd: float | None,
        session_label: str,
        cache_read_share: float | None = None,
    ) -> None:
        """A session's figures; `context_tokens` None: not counted yet (`set_context` follows)."""
        self.model = model
        self.context_window = context_window
        self.effective_window = effective_window
        self.context_tokens = context_tokens or 0
        self.context_counted = context_tokens is not None
        self.cost_usd = cost_usd
        self.session_label = session_label
        self.cache_read_share = cache_read_share
        self.refresh_line()

    def set_context(self, used_tokens: int, context_window: int, effective_window: int) -> None:
        self.context_tokens = used_tokens
        self.context_counted = True
        self.context_window = context_window
        self.effective_window = effective_window
        self.refresh_line()

    def apply(self, event: AgentEvent, *, cost_usd: float | None) -> None:
        from agent_repl.core.model.events import (
            ContextProjected,
            TokenBudgetProgress,
            TurnStarted,
            UsageEvent,
        )

        match event:
            case ContextProjected(estimated_tokens=tokens):
                self.context_tokens, self.context_counted = tokens, True
            case UsageEvent(usage=usage):
                total = usage.total_input()
                self.cache_read_share = usage.cache_read_input_tokens / total if total else None
                self.context_tokens, self.context_counted = usage.context_tokens(), True
                self.cost_usd = cost_usd
            case TokenBudgetProgress(used=used, budget=budget):
                self.budget = (used, budget)
            case TurnStarted():
                self.budget = None
            case _:
                return
        self.refresh_line()

    def set_mode(self, label: str) -> None:
        self.mode_label = label
        self.refresh_line()

    def refresh_line(self) -> None:
        text = Text(no_wrap=True, overflow="ellipsis")
        if self.mode_label:
            style = "bold cyan" if "plan" in self.mode_label else "bold magenta"
            text.append(self.mode_label, style=style)
            text.append(" (shift+tab to cycle)  ", style="dim")
        text.append(self.model or "starting…", style="bold")
        if self.context_window and self.context_counted:
            share = self.context_tokens / self.context_window
            text.append("  ")
            text.append_text(context_bar(self.context_tokens, self.context_window))
            text.append(f" {short_tokens(self.context_tokens)}/{short_tokens(self.context_window)} ({share:.0%})")
            to_compact = autocompact_threshold(self.effective_window) - self.context_tokens
            text.append(
                f"  {short_tokens(max(0, to_compact))} to autocompact", style="dim" if to_compact > 0 else "red"
            )
        if self.cache_read_share is not None:
            text.append(f"  cache read {self.cache_read_share:.0%}", style="dim")
        if self.budget is not None:
            used, budget = self.budget
            text.append(f"  output {short_tokens(used)}/{short_tokens(budget)} ({used * 100 // budget}%)", style="cyan")
        # An unknown price is said as such, never guessed.
        text.append(f"  {cost_text(self.cost_usd)}" if self.cost_usd is not None else "  cost: ?")
        if self.session_label:
            text.append(f"  {self.session_label}", style="dim")
        if self.note:
            text.append(f"  {self.note}", style="yellow")
        self.update(text)


class WorkingIndicator(Static):
    """A spinner with elapsed time and tokens streamed; the clock is injected so tests can freeze it."""

    def __init__(self, clock: Callable[[], float], *, animate: bool = True, id: str | None = None) -> None:
        super().__init__(id=id)
        self.clock = clock
        # Not `animate`: that is Textual's animation method on every widget.
        self.spinner_runs = animate
        self.started_at: float | None = None
        self.tokens = 0
        self._completed = 0
        self._streaming = 0
        self.label = "Working"
        self.display = False

    def on_mount(self) -> None:
        if self.spinner_runs:
            self.set_interval(0.1, self.refresh_line)

    def start(self, label: str = "Working") -> None:
        self.started_at = self.clock()
        self.tokens = self._completed = self._streaming = 0
        self.label = label
        self.display = True
        self.refresh_line()

    def stop(self) -> None:
        self.started_at = None
        self.display = False

    def apply(self, event: AgentEvent) -> None:
        from agent_repl.core.model.events import (
            CompactionFinished,
            CompactionStarted,
            TextDelta,
            TurnStarted,
            UsageEvent,
        )

        match event:
            case TurnStarted() | CompactionFinished():
                self.label = "Working"
            case CompactionStarted():
                self.label = "Compacting the conversation"
            case TextDelta(text=text):
                self._streaming += max(1, len(text) // 4)
            case UsageEvent(usage=usage):
                # The exact count replaces the estimate once a response is complete.
                self._completed += usage.output_tokens
                self._streaming = 0
            case _:
                return
        self.tokens = self._completed + self._streaming
        self.refresh_line()

    def refresh_line(self) -> None:
        if self.started_at is None:
            return
        elapsed = max(0.0, self.clock() - self.started_at)
        frame = SPINNER_FRAMES[int(elapsed * 10) % len(SPINNER_FRAMES)]
        text = Text()
        text.append(f"{frame} {self.label}… ", style="bold magenta")
        text.append(f"{elapsed:.0f}s · ↓ {short_tokens(self.tokens)} tokens · esc to interrupt", style="dim")
        self.update(text)
