"""The reply as it streams: its markdown drawn into a region of fixed height that grows by steps.

A widget whose height follows its content makes Textual lay out the whole conversation (every
mounted widget) each time a chunk changes that height. This one keeps a fixed height and only
repaints itself for a chunk; when the text reaches the bottom it grows by `GROWTH_LINES` at once, so
the conversation is laid out once per step instead of once per chunk. Finished blocks (up to the
last blank line outside a code fence) are drawn once and kept; a chunk redraws the last block only.
"""

from __future__ import annotations

from rich.markdown import Markdown as RichMarkdown
from textual import events
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

# Lines the region grows by once the streamed text reaches its bottom.
GROWTH_LINES = 8
_FENCES = ("```", "~~~")


def finished_end(text: str) -> int:
    """Where the finished blocks of `text` end: just after its last blank line outside a code fence
    (0 when no block is finished yet). `text` starts outside any fence."""
    in_fence, end, position = False, 0, 0
    for line in text.splitlines(keepends=True):
        position += len(line)
        stripped = line.strip()
        if stripped.startswith(_FENCES):
            in_fence = not in_fence
        elif not stripped and not in_fence and line.endswith("\n"):
            end = position
    return end


class StreamingAnswerView(Widget):
    """The reply being streamed (`append` each chunk); replaced by an `AssistantMessageView` when its
    message is complete, or `settle`d to its text's height when the turn ends without one."""

    DEFAULT_CSS = """
    StreamingAnswerView {
        height: auto;
    }
    """

    def __init__(self, growth: int = GROWTH_LINES) -> None:
        super().__init__(classes="message assistant streaming")
        self.source = ""
        self.growth = growth
        self.rows = 0
        self.settled = False
        self._width = 0
        self._done = 0  # source[:_done] is drawn in _finished
        self._finished: list[Strip] = []
        self._lines: list[Strip] = []

    def on_mount(self) -> None:
        self.rows = self.growth
        self.styles.height = self.rows

    def append(self, text: str) -> None:
        self.source += text
        self._draw()

    def settle(self) -> None:
        """No more text comes: the region shrinks to the text, without blank lines below it."""
        self.settled = True
        self.styles.height = "auto"

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if width != self._width:
            self._draw(width)
        return max(len(self._lines), 1)

    def on_resize(self, event: events.Resize) -> None:
        if self.size.width != self._width:
            self._draw()

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if y < len(self._lines):
            return self._lines[y].adjust_cell_length(width)
        return Strip.blank(width)

    def _draw(self, width: int | None = None) -> None:
        width = self.size.width if width is None else width
        if width <= 0 or not self.is_attached:
            return
        if width != self._width:
            self._width, self._done, self._finished = width, 0, []
        end = self._done + finished_end(self.source[self._done :])
        if end > self._done:
            self._finished += self._block_gap() + self._markdown_lines(self.source[self._done : end], width)
            self._done = end
        tail = self.source[self._done :]
        tail_lines = self._markdown_lines(tail, width) if tail.strip() else []
        self._lines = self._finished + (self._block_gap() if tail_lines else []) + tail_lines
        if not self.settled and len(self._lines) >= self.rows:
            self.rows = len(self._lines) + self.growth
            self.styles.height = self.rows
        self.refresh()

    def _block_gap(self) -> list[Strip]:
        return [Strip.blank(self._width)] if self._finished else []

    def _markdown_lines(self, markdown: str, width: int) -> list[Strip]:
        console = self.app.console
        options = console.options.update(width=width, height=None)
        return [Strip(line) for line in console.render_lines(RichMarkdown(markdown), options, pad=False)]
