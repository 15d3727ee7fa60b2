"""A compact boundary as a divider; the summary that replaced the older messages expands under it."""

from __future__ import annotations

from rich.markdown import Markdown
from textual.widgets import Collapsible, Static

from agent_repl.ui.history_view import CompactItem


class CompactDivider(Collapsible):
    def __init__(self, item: CompactItem) -> None:
        self.item = item
        self.mark: str | None = None
        summary = Static(Markdown(item.summary or "_(no summary recorded)_"), classes="compact-summary")
        super().__init__(summary, title=self._title_text(), collapsed=True, classes="compact")

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
