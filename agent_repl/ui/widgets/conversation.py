"""The scrolling conversation: the whole history, with only a window of it mounted.

Items for every history entry are kept as data (`HistoryView`); widgets exist only for the
newest ~`max_lines` lines (at most `MAX_MOUNTED_ITEMS` items) plus whatever the user scrolled back to. Reaching the top mounts the
previous batch above (keeping the view still); new content while at the bottom unmounts the
oldest widgets again, so memory follows what is mounted, not the length of the session.
A history just loaded mounts what fills the screen first, and the rest of its window once that is drawn.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING

from rich.console import RenderableType
from textual.containers import VerticalScroll
from textual.scrollbar import ScrollBar
from textual.widget import Widget

from agent_repl.core.model.messages import ServerToolResultBlock
from agent_repl.core.model.visible import show_controls
from agent_repl.core.tooling.display import ToolDisplays
from agent_repl.ui.history_view import (
    AssistantItem,
    CommandItem,
    CompactItem,
    HistoryView,
    Item,
    NoticeItem,
    ThinkingItem,
    ToolItem,
    UserItem,
    ViewMarks,
)
from agent_repl.ui.widgets.compact_divider import CompactDivider
from agent_repl.ui.widgets.messages import (
    AssistantMessageView,
    CommandOutput,
    LocalCommandView,
    NoticeView,
    StreamingThinkingView,
    ThinkingView,
    UserMessageView,
)
from agent_repl.ui.widgets.streaming import StreamingAnswerView
from agent_repl.ui.widgets.tool_block import ToolBlock

if TYPE_CHECKING:
    from textual._arrange import DockArrangeResult
    from textual.geometry import Size

    from agent_repl.core.model.events import AgentEvent, AssistantMessageEvent, ToolResultEvent
    from agent_repl.core.model.messages import Message

# The widget of one history item: each shows a mark (snipped, collapsed, rewound).
ItemWidget = (
    UserMessageView | AssistantMessageView | ThinkingView | ToolBlock | CompactDivider | LocalCommandView | NoticeView
)

DEFAULT_MAX_LINES = 400
# Each mounted widget costs every layout something, however few lines it has.
MAX_MOUNTED_ITEMS = 80
SCROLL_BACK_LINES = 400
# Seconds after a loaded history's first paint before the rest of its window is mounted: the paint
# reaches the terminal first, and a keypress or a scroll in the meantime is served at once.
WINDOW_FILL_DELAY = 0.2


def make_widget(item: Item) -> ItemWidget:
    if isinstance(item, UserItem):
        return UserMessageView(item)
    if isinstance(item, AssistantItem):
        return AssistantMessageView(item)
    if isinstance(item, ThinkingItem):
        return ThinkingView(item)
    if isinstance(item, ToolItem):
        return ToolBlock(item)
    if isinstance(item, CompactItem):
        return CompactDivider(item)
    if isinstance(item, CommandItem):
        return LocalCommandView(item)
    assert isinstance(item, NoticeItem)
    return NoticeView(item)


def tail_start(items: list[Item], budget_lines: int, budget_items: int = MAX_MOUNTED_ITEMS) -> int:
    """The index from which the newest items fit in `budget_lines` and `budget_items` (at least the last one)."""
    total, index = 0, len(items)
    while index > 0 and (
        (total + items[index - 1].lines() <= budget_lines and len(items) - index < budget_items) or index == len(items)
    ):
        index -= 1
        total += items[index].lines()
    return index


class Conversation(VerticalScroll):
    def __init__(self, *, max_lines: int = DEFAULT_MAX_LINES, id: str | None = None) -> None:
        super().__init__(id=id)
        self.max_lines = max_lines
        self.view = HistoryView()
        # view.items[first:] are mounted (plus command outputs, which are not history items).
        self.first = 0
        self.widgets: dict[str, ItemWidget] = {}
        self.marks = ViewMarks()
        self._seen: set[str] = set()
        self._stream_view: StreamingAnswerView | None = None
        self._thinking_view: StreamingThinkingView | None = None
        self._loading_older = False
        self._window_pending = False
        # The widget kept still on screen while older ones are mounted above it, and where it was.
        self._held: tuple[Widget, int] | None = None
        # How many entries a resume left in the transcript (None: it left none, or no resume).
        self._earlier_count: int | None = None
        # Reads the entries a resume left in the transcript (shown when the user scrolls up to them).
        self._earlier: Callable[[], Awaitable[list[Message]]] | None = None
        self._shown: tuple[list[Message], ViewMarks | None, dict[str, list[Message]] | None, ToolDisplays | None] | None = None

    # -- the whole history -------------------------------------------------------------

    async def load(
        self,
        messages: list[Message],
        marks: ViewMarks | None = None,
        subagents: dict[str, list[Message]] | None = None,
        displays: ToolDisplays | None = None,
        earlier: tuple[int, Callable[[], Awaitable[list[Message]]]] | None = None,
    ) -> None:
        """Show a session's history (a fresh start, a resume, /clear); `subagents`: the history of the
        sub-agent each Task call started, by the call's id; `displays`: how the session's tools show;
        `earlier`: how many entries a resume left in the transcript before `messages`, and how to
        read them (they are read and shown when the user scrolls up to the top)."""
        self._earlier = earlier[1] if earlier else None
        self._shown = (messages, marks, subagents, displays)
        await self._end_stream()
        await self.remove_children()
        self.view = HistoryView(subagents, displays)
        self.widgets = {}
        self.marks = marks or ViewMarks()
        self._seen = {m.uuid for m in messages}
        items = self.view.extend(messages)
        window = tail_start(items, self.max_lines * 3 // 4, MAX_MOUNTED_ITEMS * 3 // 4)
        # What fills the screen is mounted (and drawn) first; the rest of the window after that.
        self.first = max(window, tail_start(items, self._screen_lines()))
        self._earlier_count = earlier[0] if earlier else None
        await self.mount_all(self._with_earlier_notice([self._widget_for(item) for item in items[self.first :]]))
        self.anchor()
        self._window_pending = window < self.first
        if self._window_pending:
            self.call_after_refresh(self.set_timer, WINDOW_FILL_DELAY, partial(self._mount_window, self.view, window))

    def _screen_lines(self) -> int:
        """Lines enough to fill the conversation's part of the screen (items may take fewer rows
        than they count, and more)."""
        height = self.size.height or self.app.size.height
        return max(height, 10) * 2

    def _with_earlier_notice(self, widgets: list[Widget]) -> list[Widget]:
        """`widgets` (mounted from the top of the history when `first` is 0), headed by the note
        that a resume left earlier entries in the transcript, if it did."""
        if self._earlier_count is not None and self.first == 0:
            text = f"{self._earlier_count:,} earlier entries, before the compaction this session resumed at: scroll up to show them"
            widgets.insert(0, NoticeView(NoticeItem(["earlier"], text=text)))
        return widgets

    async def _mount_window(self, view: HistoryView, start: int) -> None:
        """After the first paint of a loaded history, mount the rest of the window above what fills
        the screen, unless the history changed or older items were mounted meanwhile."""
        if view is not self.view:
            return
        try:
            if not self._loading_older and start < self.first:
                self._loading_older = True
                await self._mount_above(start)
        finally:
            self._window_pending = False

    @property
    def window_pending(self) -> bool:
        """Whether a history just loaded has more of its window to mount (it is, shortly after its
        first paint)."""
        return self._window_pending

    async def show_earlier(self) -> None:
        """Read the entries a resume left in the transcript and show the whole history, the entry
        that was at the top still on screen."""
        if self._earlier is None or self._shown is None:
            return
        read, self._earlier = self._earlier, None
        messages, marks, subagents, displays = self._shown
        top = self.view.items[0].key if self.view.items else None
        await self.load([*await read(), *messages], marks, subagents, displays)
        while top is not None and top not in self.widgets and await self.mount_older():
            pass
        widget = self.widgets.get(top) if top is not None else None
        if widget is not None:
            self.release_anchor()
            self.call_after_refresh(self.scroll_to_widget, widget, top=True, animate=False)

    def shown_before(self, messages: list[Message]) -> bool:
        """Whether `messages` holds entries not shown yet in front of ones shown (a resume's earlier
        entries were taken back into the history): the history must be shown again, not appended to."""
        first_seen = next((i for i, m in enumerate(messages) if m.uuid in self._seen), None)
        return first_seen is not None and any(m.uuid not in self._seen for m in messages[:first_seen])

    def _widget_for(self, item: Item) -> ItemWidget:
        widget = make_widget(item)
        self.widgets[item.key] = widget
        mark = self.marks.mark_of(item)
        if mark is not None:
            widget.set_mark(mark)
        return widget

    @property
    def mounted_items(self) -> list[Item]:
        return self.view.items[self.first :]

    def mounted_lines(self) -> int:
        return sum(item.lines() for item in self.mounted_items)

    async def add_messages(self, messages: Iterable[Message]) -> None:
        """Show history entries not shown yet (what a command appended)."""
        for message in messages:
            await self.add_message(message)

    async def add_message(self, message: Message) -> Widget | None:
        if message.uuid in self._seen:
            return None
        self._seen.add(message.uuid)
        items = self.view.add(message)
        if not items:
            self._refresh_joined(message)
            return None
        widgets = [self._widget_for(item) for item in items]
        await self.mount_all(widgets)
        self._prune()
        return widgets[-1]

    def _refresh_joined(self, message: Message) -> None:
        """A tool_result (or a server tool's result block) joined its call's item, a summary its
        divider, or an output its command: redraw that widget."""
        if message.type == "assistant":
            # The API's own summary (on-demand compaction) joins its divider too.
            joined: list[Item | None] = [self.view.item_holding(message.uuid)] if message.is_api_summary else []
            joined += [self.view.tool(b.tool_use_id) for b in message.content if isinstance(b, ServerToolResultBlock)]
        elif message.type == "user":
            joined = [self.view.tool(block.tool_use_id) for block in message.tool_results()]
            if not joined:
                joined.append(self.view.item_holding(message.uuid))  # a summary, a command's output
        else:
            return
        for item in joined:
            widget = self.widgets.get(item.key) if item else None
            if isinstance(widget, ToolBlock | CompactDivider | LocalCommandView):
                widget.refresh_item()

    async def add_output(self, command: str, renderable: RenderableType) -> CommandOutput:
        output = CommandOutput(command, renderable)
        await self.mount(output)
        self.anchor()
        return output

    async def add_notice(self, text: str, level: str = "info") -> NoticeView:
        notice = NoticeView(NoticeItem(["notice"], text=text, level=level))
        await self.mount(notice)
        return notice

    def apply_marks(self, marks: ViewMarks) -> None:
        """Re-mark the mounted widgets (after /snip, /uncompact, a collapse commit)."""
        self.marks = marks
        for item in self.mounted_items:
            widget = self.widgets.get(item.key)
            if widget is not None:
                widget.set_mark(marks.mark_of(item))

    # -- a turn as it happens ------------------------------------------------------------

    async def apply(self, event: AgentEvent) -> None:
        """Show one event of the running turn; the turn's history entries come in its events."""
        from agent_repl.core.model.events import (
            AssistantMessageEvent,
            EntryAppended,
            RequestRetry,
            SubagentProgress,
            SystemMessageEvent,
            TextDelta,
            ThinkingDelta,
            ToolProgress,
            ToolResultEvent,
            TurnEnded,
            TurnStarted,
        )

        match event:
            case TurnStarted(message=started):
                await self.add_message(started)
                self.anchor()
            case EntryAppended(message=entry):
                await self.add_message(entry)
            case TextDelta(text=text):
                await self._stream_text(text)
            case ThinkingDelta(text=text):
                await self._stream_thinking(text)
            case AssistantMessageEvent():
                await self._assistant(event)
            case ToolProgress(tool_use_id=tool_use_id, text=text):
                if (block := self._tool_block(tool_use_id)) is not None:
                    block.set_progress(text)
            case SubagentProgress(tool_use_id=tool_use_id, message=step):
                if (block := self._tool_block(tool_use_id)) is not None:
                    block.add_step(step)
            case ToolResultEvent():
                await self._tool_result(event)
            case SystemMessageEvent(message=notice):
                await self._end_stream()
                # A compaction's summary, which joins its divider, follows in its own event.
                await self.add_message(notice)
            case RequestRetry(attempt=attempt, error=error):
                await self.add_notice(f"retrying (attempt {attempt}) after: {error}", "warning")
            case TurnEnded():
                await self._end_stream()
                await self._end_thinking()

    def _tool_block(self, tool_use_id: str) -> ToolBlock | None:
        tool = self.view.tool(tool_use_id)
        widget = self.widgets.get(tool.key) if tool else None
        return widget if isinstance(widget, ToolBlock) else None

    async def _tool_result(self, event: ToolResultEvent) -> None:
        await self.add_message(event.message)
        tool = self.view.tool(event.tool_use_id)
        if tool is not None:
            tool.persisted_path = tool.persisted_path or event.persisted_path
            widget = self.widgets.get(tool.key)
            if isinstance(widget, ToolBlock):
                widget.refresh_item()

    async def _stream_text(self, text: str) -> None:
        if self._stream_view is None:
            self._stream_view = StreamingAnswerView()
            await self.mount(self._stream_view)
        self._stream_view.append(show_controls(text))

    async def _stream_thinking(self, text: str) -> None:
        if not text:
            return
        if self._thinking_view is None:
            self._thinking_view = StreamingThinkingView()
            await self.mount(self._thinking_view)
        self._thinking_view.add(text)

    async def _end_thinking(self) -> None:
        """The streamed thought goes: its finished message (or nothing, when interrupted) stays."""
        if self._thinking_view is not None:
            view, self._thinking_view = self._thinking_view, None
            await view.remove()

    async def _assistant(self, event: AssistantMessageEvent) -> None:
        message = event.message
        if any(block.type == "thinking" for block in message.content):
            await self._end_thinking()
        is_text = bool(message.content) and message.content[0].type == "text"
        view = self._stream_view
        await self._end_stream()
        if is_text and view is not None and message.uuid not in self._seen:
            # The finished reply takes the streamed one's place, as the lighter widget history uses.
            items = self.view.add(message)
            self._seen.add(message.uuid)
            if items:
                await self.mount_all([self._widget_for(item) for item in items], after=view)
            await view.remove()
            self._prune()
            return
        if view is not None:
            await view.remove()
        await self.add_message(message)

    async def _end_stream(self) -> None:
        if self._stream_view is not None:
            self._stream_view.settle()
        self._stream_view = None

    @property
    def streaming(self) -> bool:
        return self._stream_view is not None

    # -- keeping the mounted window small ------------------------------------------------

    def _prune(self) -> None:
        """At the bottom, unmount the oldest widgets once the mounted lines or items go over the limit."""
        if self._loading_older or self.scroll_y < self.max_scroll_y - 1:
            return
        lines = self.mounted_lines()
        if lines <= self.max_lines and len(self.mounted_items) <= MAX_MOUNTED_ITEMS:
            return
        keep, keep_items = self.max_lines * 3 // 4, MAX_MOUNTED_ITEMS * 3 // 4
        doomed: list[Widget] = []
        while self.first < len(self.view.items) - 1 and (lines > keep or len(self.view.items) - self.first > keep_items):
            item = self.view.items[self.first]
            widget = self.widgets.pop(item.key, None)
            if widget is not None:
                doomed.append(widget)
            lines -= item.lines()
            self.first += 1
        if doomed:
            self.remove_children(doomed)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        # Following the bottom, a top position is a layout passing through (a tall entry mounted,
        # older ones pruned), not the user scrolling up, which releases the anchor first: loading
        # older entries then released the anchor and left the view stuck at the top.
        at_top = new_value <= 1 and not (self.is_anchored and not self._anchor_released)
        if at_top and self.first == 0 and self._earlier is not None and not self._loading_older:
            self.call_later(self.show_earlier)
        elif at_top and self.first > 0 and not self._loading_older:
            self._loading_older = True
            self.call_later(self.mount_older)
        elif new_value >= self.max_scroll_y - 1 and self.first < len(self.view.items) - 1:
            # Back at the bottom after reading old messages: unmount what is over the limit again.
            self.call_later(self._prune)

    async def mount_older(self, lines: int = SCROLL_BACK_LINES) -> int:
        """Mount the batch of items just above the first mounted one; returns how many."""
        if self.first == 0:
            self._loading_older = False
            return 0
        start, total = self.first, 0
        while start > 0 and (total < lines or start == self.first):
            start -= 1
            total += self.view.items[start].lines()
        return await self._mount_above(start)

    async def _mount_above(self, start: int) -> int:
        """Mount the items from `start` up to the first mounted one; returns how many. While the
        view follows the bottom it stays there; otherwise the text on screen is kept still."""
        try:
            following = self.is_anchored and not self._anchor_released
            anchor_widget = self.widgets.get(self.view.items[self.first].key)
            widgets: list[Widget] = [self._widget_for(item) for item in self.view.items[start : self.first]]
            self.first = start
            if following:
                widgets = self._with_earlier_notice(widgets)
            else:
                self.release_anchor()
            if anchor_widget is not None and anchor_widget.parent is self:
                if not following:
                    self._held = (anchor_widget, anchor_widget.virtual_region.y)
                await self.mount_all(widgets, before=anchor_widget)
                if not following:
                    self.call_after_refresh(self._let_go, anchor_widget)
            else:
                await self.mount_all(widgets, before=0)
            return len(widgets)
        finally:
            self._loading_older = False

    def arrange(self, size: Size, optimal: bool = False) -> DockArrangeResult:
        """Place the children; while a widget is held (older ones were mounted above it), scroll by
        however much it moved, in the same layout, so that no frame shows the text on screen moved."""
        arrangement = super().arrange(size, optimal)
        if self._held is not None:
            widget, was_at = self._held
            now_at = next((p.region.y for p in arrangement.placements if p.widget is widget), None)
            if now_at is None:
                self._held = None
            elif now_at != was_at:
                self._held = (widget, now_at)
                scroll_y = self.scroll_y + now_at - was_at
                # What Textual's compositor does for an anchored view: set before it places the children.
                self.set_reactive(Widget.scroll_y, scroll_y)
                self.set_reactive(Widget.scroll_target_y, scroll_y)
                self.vertical_scrollbar.set_reactive(ScrollBar.position, scroll_y)
        return arrangement

    def _let_go(self, widget: Widget) -> None:
        """The widgets mounted above `widget` are laid out: the view scrolls freely again."""
        if self._held is not None and self._held[0] is widget:
            self._held = None
