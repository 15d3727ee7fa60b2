"""A compact boundary as a divider; the summary that replaced the older messages expands under it."""

from __future__ import annotations

from rich.markdown import Markdown

from agent_repl.core.model.visible import show_controls
from agent_repl.ui.history_view import CompactItem
from agent_repl.ui.widgets.fresh_size import FreshCollapsible, FreshStatic


def _summary(item: CompactItem) -> Markdown:
    return Markdown(show_controls(item.summary) if item.summary is not None else "_(no summary recorded)_")


class CompactDivider(FreshCollapsible):
    def __init__(self, item: CompactItem) -> None:
        self.item = item
        self.mark: str | None = None
        # The summary is drawn when the divider is first opened, and again when it changes.
        self._summary_stale = True
        self._summary_view = FreshStatic("", classes="compact-summary")
        super().__init__(self._summary_view, title=self._title_text(), collapsed=True, classes="compact")

    def watch_collapsed(self, collapsed: bool) -> None:
        if not collapsed and self._summary_stale:
            self.refresh_item()

    def refresh_item(self) -> None:
        """The summary record came after the boundary (it always does live): show it."""
        self._summary_stale = self.collapsed
        if not self._summary_stale:
            self._summary_view.update(_summary(self.item))

    def _title_text(self) -> str:
        item = self.item
        before = f" · {item.pre_tokens:,} tokens before" if item.pre_tokens else ""
        if self.mark == "undone":
            return f"━━ compaction undone ({item.trigger}{before}) · the model sees the earlier messages again ━━"
        return f"━━ conversation compacted ({item.trigger}{before}) · the model sees the summary from here ━━"

    def set_mark(self, mark: str | None) -> None:
        if mark != self.mark:
            self.mark = mark
            self.set_class(mark == "undone", "-undone")
            self.title = self._title_text()
