"""The history as the user sees it: display items built from `session.messages` (no UI library).

Each item remembers the uuids of the entries it shows, so snip marks can be applied later; a
tool call and its result are one item, as a tool_use and its tool_result always go together.
Meta entries (environment context, reminders) are not shown. Entries are told apart by their
`type` fields, not their classes, so the app can import this before pydantic is loaded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent_repl.context.ids import short_id
from agent_repl.core.model.web_results import SERVER_TOOL_NAMES, web_result_summary
from agent_repl.core.tooling.display import ToolDisplays
from agent_repl.core.tooling.persisted_output import is_persisted_preview
from agent_repl.ui.tool_render import ToolCall, add_step

if TYPE_CHECKING:
    from agent_repl.context.state import PipelineState
    from agent_repl.core.model.messages import (
        AssistantMessage,
        Message,
        SystemMessage,
        ToolResultBlock,
        UserMessage,
    )

_SAVED_TO = re.compile(r"Output too large \(([^)]*)\)\. Full output saved to: (.+)")
# Claude Code records a slash command as tagged text, and its output as the next record.
_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>", re.S)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)
_COMMAND_OUTPUT = re.compile(r"<local-command-(stdout|stderr)>(.*?)(?:</local-command-\1>|$)", re.S)
# `!command` the user ran, and its output (the same records as Claude Code's bash mode).
_BASH_INPUT = re.compile(r"<bash-input>(.*?)</bash-input>", re.S)
_BASH_OUTPUT = re.compile(r"<bash-(stdout|stderr)>(.*?)(?:</bash-\1>|$)", re.S)
INTERRUPTION_PREFIX = "[Request interrupted by user"
# Claude Code queues a background task's end as a user message of tagged text.
TASK_NOTIFICATION = "<task-notification>"
_TASK_FIELD = re.compile(r"<(task-id|status|summary)>(.*?)</\1>", re.S)
TASK_NOTICE_CHARS = 200


def task_notice(text: str) -> str | None:
    """One line for a queued task notification (None for anything else): the task, its status, its summary."""
    if not text.lstrip().startswith(TASK_NOTIFICATION):
        return None
    fields: dict[str, str] = {}
    for name, value in _TASK_FIELD.findall(text):
        fields.setdefault(name, " ".join(value.split()))
    task = fields.get("task-id") or "?"
    line = f"background task {task} {fields.get('status') or 'reported'}"
    if fields.get("summary"):
        line += f": {fields['summary']}"
    return line if len(line) <= TASK_NOTICE_CHARS else line[: TASK_NOTICE_CHARS - 1] + "…"


@dataclass
class Item:
    uuids: list[str]

    @property
    def key(self) -> str:
        return self.uuids[0]

    def lines(self) -> int:
        return 2


@dataclass
class UserItem(Item):
    text: str = ""

    @property
    def tag(self) -> str:
        return short_id(self.uuids[0])

    def lines(self) -> int:
        return self.text.count("\n") + 3


@dataclass
class AssistantItem(Item):
    text: str = ""

    def lines(self) -> int:
        return self.text.count("\n") + self.text.count("\n\n") + 2


# A thought longer than this many lines shows only its start until it is opened.
THINKING_COLLAPSED_LINES = 3


@dataclass
class ThinkingItem(Item):
    """Thinking whose text came back (Sonnet 5.5's notes between tool calls, a summary of the
    model's reasoning), drawn dimmed; long ones collapsed until opened."""

    text: str = ""
    expanded: bool = False

    @property
    def key(self) -> str:
        # One reply's thinking and its text would otherwise share the entry's uuid.
        return self.uuids[0] + "#thinking"

    @property
    def line_count(self) -> int:
        return self.text.strip("\n").count("\n") + 1

    @property
    def collapsible(self) -> bool:
        return self.line_count > THINKING_COLLAPSED_LINES

    def lines(self) -> int:
        shown = self.line_count if self.expanded or not self.collapsible else THINKING_COLLAPSED_LINES + 1
        return shown + 1


@dataclass
class ToolItem(Item):
    """A tool call and, once it is there, its result (drawn by `agent_repl.ui.tool_render`)."""

    tool_use_id: str = ""
    call: ToolCall = field(default_factory=lambda: ToolCall(""))
    persisted_path: str | None = None
    persisted_size: str | None = None

    @property
    def key(self) -> str:
        # One reply may hold text and several calls: the call's id tells its item from theirs.
        return self.tool_use_id or self.uuids[0]

    def lines(self) -> int:
        return 2

    def set_server_result(self, uuid: str, block: dict[str, Any]) -> None:
        """A server tool's result block (web_search, web_fetch), from the same response as the call."""
        self.uuids.append(uuid)
        summary, failed = web_result_summary(block)
        self.call.result, self.call.is_error, self.call.structured = summary, failed, block

    def set_result(self, message: UserMessage, block: ToolResultBlock) -> None:
        self.uuids.append(message.uuid)
        self.call.result = block.text()
        self.call.is_error = block.is_error
        structured = message.tool_use_result
        self.call.structured = structured
        if isinstance(structured, dict) and structured.get("persistedOutputPath"):
            self.persisted_path = str(structured["persistedOutputPath"])
            size = structured.get("persistedOutputSize")
            self.persisted_size = _format_size(size) if isinstance(size, int) else None
        if is_persisted_preview(self.call.result):
            match = _SAVED_TO.search(self.call.result)
            if match and self.persisted_path is None:
                self.persisted_size, self.persisted_path = match.group(1), match.group(2).strip()


@dataclass
class CommandItem(Item):
    """A slash command from a Claude Code session (`/export path`) and the output it printed."""

    command: str = ""
    output: str | None = None
    is_error: bool = False

    def lines(self) -> int:
        return (self.output or "").count("\n") + 3


@dataclass
class CompactItem(Item):
    trigger: str = "auto"
    pre_tokens: int | None = None
    summary: str | None = None

    def lines(self) -> int:
        return 3


@dataclass
class NoticeItem(Item):
    text: str = ""
    level: str = "info"

    def lines(self) -> int:
        return self.text.count("\n") + 2


def _format_size(n_bytes: int) -> str:
    from agent_repl.core.tooling.persisted_output import format_size

    return format_size(n_bytes)


def _api_error_text(metadata: dict[str, Any]) -> str:
    """Claude Code's api_error records keep the retry and, sometimes, the error's message."""
    error = metadata.get("error")
    detail = ""
    while isinstance(error, dict) and not detail:
        detail = str(error.get("message") or "")
        error = error.get("error")
    attempt, limit = metadata.get("retryAttempt"), metadata.get("maxRetries")
    text = "API error"
    if isinstance(attempt, int):
        text += f", retry {attempt}" + (f" of {limit}" if isinstance(limit, int) else "")
        wait = metadata.get("retryInMs")
        if isinstance(wait, int | float):
            text += f" in {wait / 1000:.1f}s"
    return f"{text}: {detail}" if detail else f"{text} (no error text recorded)"


def _system_notice(message: SystemMessage) -> NoticeItem | None:
    if message.subtype == "stop_hook_summary" and not message.content:
        # A Claude Code record: shown only when its hooks said something (a quiet Stop hook shows nothing).
        errors = [str(e) for e in message.metadata.get("hookErrors") or []]
        if not errors:
            return None
        return NoticeItem([message.uuid], text="Stop hook: " + "; ".join(errors), level="info")
    text = message.content or message.subtype.replace("_", " ")
    if message.subtype == "api_error" and not message.content:
        text = _api_error_text(message.metadata)
    if message.subtype == "microcompact_boundary":
        saved = message.metadata.get("tokensSaved")
        text = "context microcompacted" + (f": {saved:,} tokens saved" if isinstance(saved, int) else "")
    return NoticeItem([message.uuid], text=text, level=message.level)


_COMMAND_RECORD_STARTS = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
)


def _command_text(message: Message) -> str | None:
    """The text of a record that is a slash command or its output (Claude Code's tags), else None."""
    if message.type == "system":
        text = message.content if message.subtype == "local_command" else ""
    elif message.type == "user" and not message.is_meta and not message.is_compact_summary:
        text = message.content if isinstance(message.content, str) else ""
    else:
        return None
    stripped = text.lstrip()
    if "<command-name>" in stripped or stripped.startswith(_COMMAND_RECORD_STARTS):
        return text
    return None


@dataclass
class ViewMarks:
    """What the model no longer sees as such: snipped entries, entries inside a committed collapse,
    compact boundaries taken back by /uncompact, and entries a /rewind took back."""

    snipped: set[str] = field(default_factory=set)
    collapsed: set[str] = field(default_factory=set)
    undone: set[str] = field(default_factory=set)
    rewound: set[str] = field(default_factory=set)

    @classmethod
    def from_state(cls, state: PipelineState) -> ViewMarks:
        return cls(
            snipped=set(state.snip.snipped),
            collapsed=set(state.collapse.owner),
            undone=set(state.compaction.undone),
            rewound=set(state.rewound),
        )

    def mark_of(self, item: Item) -> str | None:
        if any(uuid in self.rewound for uuid in item.uuids):
            return "rewound"
        if any(uuid in self.snipped for uuid in item.uuids):
            return "snipped"
        if any(uuid in self.collapsed for uuid in item.uuids):
            return "collapsed"
        if isinstance(item, CompactItem) and item.key in self.undone:
            return "undone"
        return None


class HistoryView:
    """Builds items from history entries, incrementally: feed entries in order with `add`."""

    def __init__(
        self, subagents: dict[str, list[Message]] | None = None, displays: ToolDisplays | None = None
    ) -> None:
        """`subagents`: by Task call id, the sub-agent's history (its sidechain transcript);
        `displays`: how each tool's calls are shown (the session's tools)."""
        self.subagents = subagents or {}
        self.displays = displays or ToolDisplays()
        self.items: list[Item] = []
        self._tools: dict[str, ToolItem] = {}
        self._open_compact: CompactItem | None = None
        self._open_command: CommandItem | None = None

    def extend(self, messages: Iterable[Message]) -> list[Item]:
        added: list[Item] = []
        for message in messages:
            added.extend(self.add(message))
        return added

    def add(self, message: Message) -> list[Item]:
        """The new items this entry makes (a reply of text and tool calls makes several); none when it
        joined an existing item or is not shown."""
        made = self._item_for(message)
        items = made if isinstance(made, list) else [made] if made is not None else []
        self.items.extend(items)
        return items

    def tool(self, tool_use_id: str) -> ToolItem | None:
        return self._tools.get(tool_use_id)

    def item_holding(self, uuid: str) -> Item | None:
        """The newest item that shows the entry `uuid` (joined entries included)."""
        return next((item for item in reversed(self.items) if uuid in item.uuids), None)

    def _item_for(self, message: Message) -> Item | list[Item] | None:
        tagged = _command_text(message)
        if tagged is not None:
            return self._command(message, tagged)
        self._open_command = None
        if message.type == "system":
            self._open_compact = None
            if message.subtype == "compact_boundary":
                pre = message.metadata.get("preTokens")
                item = CompactItem(
                    [message.uuid],
                    trigger=str(message.metadata.get("trigger", "auto")),
                    pre_tokens=pre if isinstance(pre, int) else None,
                )
                self._open_compact = item
                return item
            return _system_notice(message)
        if message.type == "assistant":
            summary = next((b for b in message.content if b.type == "compaction"), None)
            if summary is not None and self._open_compact is not None and self._open_compact.summary is None:
                # The API's own summary (on-demand compaction) fills the compaction it follows.
                self._open_compact.summary = summary.content or ""
                self._open_compact.uuids.append(message.uuid)
                self._open_compact = None
                return None
            self._open_compact = None
            return self._assistant(message)
        return self._user(message)

    def _command(self, message: Message, text: str) -> Item | None:
        """A slash command opens an item; the output record after it joins that item."""
        typed = _BASH_INPUT.search(text)
        if typed is not None:
            item = CommandItem([message.uuid], command=f"! {typed.group(1).strip()}")
            self._open_command = item
            return item
        name = _COMMAND_NAME.search(text)
        if name is not None:
            args = _COMMAND_ARGS.search(text)
            words = [name.group(1).strip(), args.group(1).strip() if args else ""]
            item = CommandItem([message.uuid], command=" ".join(w for w in words if w))
            self._open_command = item
            return item
        found = _COMMAND_OUTPUT.search(text) or _BASH_OUTPUT.search(text)
        output, is_error = (found.group(2), found.group(1) == "stderr") if found else (text, False)
        opened, self._open_command = self._open_command, None
        if opened is not None and opened.output is None:
            opened.output, opened.is_error = output, is_error
            opened.uuids.append(message.uuid)
            return None
        return CommandItem([message.uuid], command="command output", output=output, is_error=is_error)

    def _assistant(self, message: AssistantMessage) -> Item | list[Item] | None:
        items: list[Item] = []
        for block in message.content:
            if block.type in ("web_search_tool_result", "web_fetch_tool_result"):
                tool = self._tools.get(block.tool_use_id)
                if tool is not None:
                    tool.set_server_result(message.uuid, block.model_dump(mode="json"))
                return None
            if block.type == "server_tool_use":
                call = ToolCall(SERVER_TOOL_NAMES.get(block.name, block.name), dict(block.input), displays=self.displays)
                item = ToolItem([message.uuid], tool_use_id=block.id, call=call)
                self._tools[block.id] = item
                return item
            if block.type == "tool_use":
                call = ToolCall(block.name, dict(block.input), displays=self.displays)
                item = ToolItem([message.uuid], tool_use_id=block.id, call=call)
                for entry in self.subagents.get(block.id, []):
                    add_step(item.call, entry)
                self._tools[block.id] = item
                items.append(item)
            elif block.type == "text" and block.text.strip():
                items.append(AssistantItem([message.uuid], text=block.text))
            elif block.type == "thinking" and block.thinking.strip():
                items.append(ThinkingItem([message.uuid], text=block.thinking))
        return items

    def _user(self, message: UserMessage) -> Item | None:
        if message.is_compact_summary:
            if self._open_compact is not None and self._open_compact.summary is None:
                self._open_compact.summary = message.text()
                self._open_compact.uuids.append(message.uuid)
                self._open_compact = None
                return None
            return NoticeItem([message.uuid], text=message.text(), level="info")
        self._open_compact = None
        if message.is_meta:  # hidden, but for the end of a background command (one line)
            notice = task_notice(message.text())
            return NoticeItem([message.uuid], text=notice, level="info") if notice is not None else None
        results = message.tool_results()
        if results:
            for block in results:
                tool = self._tools.get(block.tool_use_id)
                if tool is not None:
                    tool.set_result(message, block)
            return None
        text = message.text()
        if text.startswith(INTERRUPTION_PREFIX):
            return NoticeItem([message.uuid], text="interrupted", level="warning")
        notice = task_notice(text)
        if notice is not None:
            return NoticeItem([message.uuid], text=notice, level="info")
        return UserItem([message.uuid], text=text)
