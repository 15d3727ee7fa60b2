"""Read a transcript back: ours or a real Claude Code session file (docs/architecture.md 9.1, 9.2).

Nothing in a file makes loading fail. A torn or malformed line, invalid UTF-8, an oversized
line, an unreadable record, duplicate uuids or a `parentUuid` cycle each become a warning that
names the line, and the rest loads.

The conversation is rebuilt by walking `parentUuid` from the leaf (the last message, unless it
is a stale copy of an earlier one) to the root. Every record with a uuid is a link (Claude Code's
`progress` records sit in the chain), and a `compact_boundary` continues through its
`logicalParentUuid`, because our history keeps everything before a compaction. If the chain is
broken or loops, or a damaged line may have broken it, the messages are taken in file order
instead, with a warning.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import ValidationError

import agent_repl
from agent_repl.core.model.messages import AssistantMessage, Message, SystemMessage, UserMessage
from agent_repl.transcript.convert import SYNTHETIC_MODEL, record_to_message
from agent_repl.transcript.records import (
    MESSAGE_RECORD_TYPES,
    SessionMetaRecord,
    SideRecord,
    SideRecordRegistry,
)
from agent_repl.transcript.tail_scan import EarlierHistory, EarlierScan, NotOurs, scan_earlier

MAX_LINE_BYTES = 128 * 1024 * 1024
_LINK_KEYS = ("parentUuid", "logicalParentUuid")
MAX_LINE_WARNINGS = 200
CUT_COMPACTION_NOTICE = "A compaction was interrupted before its summary was saved; the conversation before it is kept."



@dataclass
class SessionMetadata:
    """What the file says about the session; `values` merges every `session-meta` record."""

    title: str | None = None
    model: str | None = None
    cwd: str | None = None
    git_branch: str | None = None
    version: str | None = None
    values: dict[str, Any] = field(default_factory=dict)


@dataclass
class LoadedSession:
    path: Path
    session_id: str
    messages: list[Message]
    # Our pipeline records parsed, in file order; every other non-message record as a raw dict.
    side_records: list[SideRecord | dict[str, Any]]
    warnings: list[str]
    metadata: SessionMetadata
    # The uuid new messages should link to when the session continues.
    leaf_uuid: str | None = None
    # Entries another writer (or another version of ours) wrote: not known to be redacted.
    foreign: set[str] = field(default_factory=set)
    # The entries before the cut, when only the part the model sees was built (`from_compaction`).
    earlier: EarlierHistory | None = None


@dataclass
class _Node:
    line: int
    uuid: str
    parent: str | None
    logical_parent: str | None
    is_sidechain: bool
    message: Message | None
    # parentUuid is missing or holds something other than a string or null: the link is unknown.
    bad_link: bool = False


class _Warnings:
    """Line warnings (capped) plus drops aggregated by kind, reported once with a count."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.suppressed = 0
        # Lines left out or altered: a link the chain needs may have been on one of them.
        self.damaged = 0
        # Lines whose invalid UTF-8 was replaced: their links may have been changed with it.
        self.altered: set[int] = set()
        self.drops: dict[str, list[int]] = {}  # description -> [first line, count]

    def add(self, line: int, text: str) -> None:
        if len(self.lines) < MAX_LINE_WARNINGS:
            self.lines.append(f"line {line}: {text}")
        else:
            self.suppressed += 1

    def damage(self, line: int, text: str) -> None:
        self.damaged += 1
        self.add(line, text)

    def drop(self, line: int, what: str) -> None:
        entry = self.drops.setdefault(what, [line, 0])
        entry[1] += 1

    def result(self) -> list[str]:
        out = list(self.lines)
        if self.suppressed:
            out.append(f"... and {self.suppressed} more line warnings")
        for what, (line, count) in self.drops.items():
            times = "once" if count == 1 else f"{count} times"
            out.append(f"line {line}: dropped {what} (our model does not know it; {times})")
        return out


def _read_lines(
    path: Path, warnings: _Warnings, max_line_bytes: int, start: int = 0, first_line: int = 1
) -> Iterator[tuple[int, str, bool]]:
    """(line number, text, ended with a newline) for each non-blank line from byte `start` (line `first_line`)."""
    with open(path, "rb") as f:
        f.seek(start)
        line_no = first_line - 1
        while True:
            raw = f.readline(max_line_bytes + 1)
            if not raw:
                return
            line_no += 1
            if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n"):
                    raw = f.readline(1024 * 1024)
                warnings.damage(line_no, f"longer than {max_line_bytes} bytes, skipped")
                continue
            ended = raw.endswith(b"\n")
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                text = raw.decode("utf-8", errors="replace")
                warnings.damage(line_no, "invalid UTF-8, replaced with U+FFFD")
                warnings.altered.add(line_no)
            if text.strip():
                yield line_no, text, ended


def load_session(
    path: str | Path,
    *,
    registry: SideRecordRegistry | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
    from_compaction: bool = False,
) -> LoadedSession:
    """Load a transcript. Raises only OSError (the file cannot be opened or read).

    `from_compaction`: in a file our writer wrote, build the entries only from where the model's
    view can reach (agent_repl.transcript.tail_scan) and describe the rest in `earlier`; every side
    record is still read. Any other file is loaded whole."""
    path = Path(path)
    registry = registry or SideRecordRegistry()
    warnings = _Warnings()
    side_records: list[SideRecord | dict[str, Any]] = []
    scan = _scan(path, max_line_bytes) if from_compaction else None
    if scan is not None:
        for line_no, text in scan.damaged:
            warnings.damage(line_no, text)
        side_records += [_side_record(record, registry, warnings, line_no) for line_no, record in scan.side_lines]
    foreign: set[str] = set()
    nodes: dict[str, _Node] = {}
    order: list[_Node] = []
    duplicates: dict[str, list[int]] = {}
    last_message_record: _Node | None = None
    last_main_record: _Node | None = None
    first_session_id = ""
    raw_meta: dict[str, Any] = {}

    start, first_line = (scan.cut, scan.first_line) if scan is not None else (0, 1)
    for line_no, text, ended in _read_lines(path, warnings, max_line_bytes, start, first_line):
        try:
            record = json.loads(text)
        except (ValueError, RecursionError) as exc:
            if ended:
                warnings.damage(line_no, f"malformed JSON, skipped ({str(exc)[:80]})")
            else:
                warnings.damage(line_no, "torn last line (the write was cut off), skipped")
            continue
        if not isinstance(record, dict):
            warnings.damage(line_no, f"not a JSON object ({type(record).__name__}), skipped")
            continue
        record_type = _str(record.get("type"))
        if not record_type:
            warnings.add(line_no, f"the record type is {_kind(record.get('type'))}, kept as raw data")
        first_session_id = first_session_id or _str(record.get("sessionId"))
        message: Message | None = None
        if record_type in MESSAGE_RECORD_TYPES or record_type == "attachment":
            try:
                message = record_to_message(record, on_drop=partial(warnings.drop, line_no))
            except (ValueError, TypeError) as exc:
                warnings.damage(
                    line_no, f"unreadable {record_type} record, kept out of the history ({_short(exc)})"
                )
            for key in ("cwd", "gitBranch", "version"):
                if isinstance(record.get(key), str):
                    raw_meta[key] = record[key]
            if message is not None and record.get("version") != agent_repl.__version__:
                foreign.add(message.uuid)
        if message is None:
            side_records.append(_side_record(record, registry, warnings, line_no))
        uuid = record.get("uuid")
        if not isinstance(uuid, str) or not uuid:
            continue
        node = _Node(
            line=line_no,
            uuid=uuid,
            parent=_str(record.get("parentUuid")) or None,
            logical_parent=_str(record.get("logicalParentUuid")) or None,
            is_sidechain=record.get("isSidechain") is True,
            message=message,
            bad_link=_bad_link(record),
        )
        if uuid in nodes:
            duplicates.setdefault(uuid, [nodes[uuid].line, 0])[1] += 1
            continue
        nodes[uuid] = node
        order.append(node)
        if message is not None:
            last_message_record = node
            if not node.is_sidechain:
                last_main_record = node

    for uuid, (first_line, count) in duplicates.items():
        warnings.add(first_line, f"uuid {uuid} appears {count + 1} times; the first record is kept")

    earlier_uuids = scan.entry_uuids if scan is not None else set()
    leaf = _latest_leaf(order, nodes, last_main_record or last_message_record)
    messages = _keep_context_of_cut_compactions(
        _rebuild(leaf, nodes, order, warnings, earlier_uuids), nodes, warnings
    )
    earlier = None
    if scan is not None and scan.entries:
        first = messages[0].uuid if messages else None
        earlier = EarlierHistory(path, scan.entries, len(scan.reply_ids), first, scan.todo_from, scan.cut)
    return LoadedSession(
        path=path,
        session_id=first_session_id or path.stem,
        messages=messages,
        side_records=side_records,
        warnings=warnings.result(),
        metadata=_metadata(side_records, messages, raw_meta),
        leaf_uuid=leaf.uuid if leaf else None,
        foreign=foreign,
        earlier=earlier,
    )


def load_earlier(earlier: EarlierHistory) -> LoadedSession:
    """The whole file loaded again, with `messages` cut down to the entries before the part a resume built."""
    whole = load_session(earlier.path)
    at = next((i for i, m in enumerate(whole.messages) if m.uuid == earlier.first_built), len(whole.messages))
    whole.messages = whole.messages[:at]
    return whole


def _scan(path: Path, max_line_bytes: int) -> EarlierScan | None:
    try:
        scan = scan_earlier(path, max_line_bytes)
    except NotOurs:
        return None
    return scan if scan.cut else None


def _keep_context_of_cut_compactions(
    messages: list[Message], nodes: dict[str, _Node], warnings: _Warnings
) -> list[Message]:
    """A `compact_boundary` not followed by its summary (a crash between the two, or a torn write)
    would start the view with nothing before it: it becomes a notice, and the earlier context stays."""
    kept: list[Message] = []
    for i, message in enumerate(messages):
        if isinstance(message, SystemMessage) and message.subtype == "compact_boundary":
            following = messages[i + 1] if i + 1 < len(messages) else None
            # Ours name the summary (a user message, or the API's compaction block); Claude Code's mark it.
            named = following is not None and following.uuid == message.metadata.get("summaryUuid")
            if not (named or (isinstance(following, UserMessage) and following.is_compact_summary)):
                node = nodes.get(message.uuid)
                warnings.add(
                    node.line if node else 0,
                    "a compaction was cut off before its summary was saved; the conversation before it is kept",
                )
                message = message.model_copy(
                    update={"subtype": "informational", "level": "warning", "content": CUT_COMPACTION_NOTICE}
                )
        kept.append(message)
    return kept


def _latest_leaf(order: list[_Node], nodes: dict[str, _Node], last: _Node | None) -> _Node | None:
    """The leaf: the last message in the file, unless other messages descend from it.

    That happens when a stale copy of an early message was written at the end (its first copy
    lost to damage): it must not cut the history down to its ancestors. A loop is left for
    `_rebuild` to report.
    """
    if last is None:
        return None
    ancestors: set[str] = set()
    for node in order:
        if node.message is None:
            continue
        current = _parent_node(node, nodes)
        while current is not None and current.uuid not in ancestors:
            ancestors.add(current.uuid)
            current = _parent_node(current, nodes)
    if last.uuid not in ancestors or _in_loop(last, nodes):
        return last
    leaves = [n for n in order if n.message is not None and n.uuid not in ancestors]
    main = [n for n in leaves if not n.is_sidechain]
    return (main or leaves or [last])[-1]


def _in_loop(node: _Node, nodes: dict[str, _Node]) -> bool:
    seen: set[str] = set()
    current = _parent_node(node, nodes)
    while current is not None and current.uuid not in seen:
        if current is node:
            return True
        seen.add(current.uuid)
        current = _parent_node(current, nodes)
    return False


def _parent_node(node: _Node, nodes: dict[str, _Node]) -> _Node | None:
    return nodes.get(node.parent or node.logical_parent or "")


def _rebuild(
    leaf: _Node | None,
    nodes: dict[str, _Node],
    order: list[_Node],
    warnings: _Warnings,
    earlier: set[str] | frozenset[str] = frozenset(),
) -> list[Message]:
    """The chain from `leaf` back to its root, or to the first link into `earlier` (entries before
    the part that was read)."""
    chain: list[_Node] = []
    seen: set[str] = set()
    node = leaf
    while node is not None:
        seen.add(node.uuid)
        chain.append(node)
        if node.bad_link:
            warnings.add(node.line, "parentUuid is missing or not a string; using file order")
            return _file_order(order)
        next_uuid = node.parent
        if (next_uuid or node.logical_parent) in earlier:
            break
        if next_uuid is None and node.logical_parent is not None:
            if node.logical_parent in nodes:
                next_uuid = node.logical_parent
            elif warnings.damaged:
                # The link may have been on a damaged line: keep everything rather than start here.
                warnings.add(
                    node.line, f"logicalParentUuid {node.logical_parent} is not in this file; using file order"
                )
                return _file_order(order)
            else:
                warnings.add(
                    node.line, "logicalParentUuid not in this file; the history starts at this boundary"
                )
        if next_uuid is None:
            kept = sum(n.message is not None for n in chain)
            if node.line in warnings.altered and kept < sum(n.message is not None for n in order):
                # This root may be one only because its link was garbled: keep everything instead.
                warnings.add(node.line, "the history would start on a garbled line; using file order")
                return _file_order(order)
            break
        if next_uuid in seen:
            warnings.add(node.line, "parentUuid chain loops back on itself; using file order")
            return _file_order(order)
        node = nodes.get(next_uuid)
        if node is None:
            warnings.add(chain[-1].line, f"parentUuid {next_uuid} is not in this file; using file order")
            return _file_order(order)
    return _with_parallel_results(chain, order)


def _with_parallel_results(chain: list[_Node], order: list[_Node]) -> list[Message]:
    """The chain plus what it skips when tools ran in parallel, in file order.

    Claude Code links each parallel tool result to the assistant record holding its own
    tool_use, so the history is a tree: the walk from the leaf passes through one branch only.
    The other blocks of the same API response (same `message.id`) and the first result of every
    tool_use they hold belong to the conversation too.
    """
    include = {n.uuid for n in chain}
    message_ids = {n.message.message_id for n in chain if isinstance(n.message, AssistantMessage)}
    answered: set[str] = set()
    for n in chain:
        if isinstance(n.message, UserMessage):
            answered.update(r.tool_use_id for r in n.message.tool_results())
    pending: set[str] = set()
    for n in order:
        if isinstance(n.message, AssistantMessage) and n.message.message_id in message_ids:
            include.add(n.uuid)
            pending.update(b.id for b in n.message.tool_uses())
    pending -= answered
    for n in order:
        if n.uuid in include or not isinstance(n.message, UserMessage):
            continue
        ids = {r.tool_use_id for r in n.message.tool_results()}
        if ids & pending:
            include.add(n.uuid)
            pending -= ids
    return [n.message for n in order if n.uuid in include and n.message is not None]


def _file_order(order: list[_Node]) -> list[Message]:
    main = [n for n in order if not n.is_sidechain]
    return [n.message for n in (main or order) if n.message is not None]


def _side_record(
    record: dict[str, Any], registry: SideRecordRegistry, warnings: _Warnings, line_no: int
) -> SideRecord | dict[str, Any]:
    if _str(record.get("type")) not in registry:
        return record
    try:
        parsed = registry.parse(record)
    except ValidationError as exc:
        warnings.add(line_no, f"invalid {record.get('type')} record kept as raw data ({_short(exc)})")
        return record
    return parsed if parsed is not None else record


def _metadata(
    side_records: list[SideRecord | dict[str, Any]], messages: list[Message], raw_meta: dict[str, Any]
) -> SessionMetadata:
    values: dict[str, Any] = {}
    cc_title: str | None = None
    for record in side_records:
        if isinstance(record, SessionMetaRecord):
            values.update(record.values)
        elif isinstance(record, dict):
            # Claude Code's newer title records.
            title = record.get("customTitle") or record.get("aiTitle")
            if record.get("type") in ("custom-title", "ai-title") and isinstance(title, str):
                cc_title = title
    model = values.get("model")
    if not isinstance(model, str):
        models = [
            m.model
            for m in messages
            if isinstance(m, AssistantMessage) and m.model and m.model != SYNTHETIC_MODEL
        ]
        model = models[-1] if models else None
    title = values.get("title")
    return SessionMetadata(
        title=title if isinstance(title, str) else cc_title,
        model=model,
        cwd=raw_meta.get("cwd"),
        git_branch=raw_meta.get("gitBranch"),
        version=raw_meta.get("version"),
        values=values,
    )


def _bad_link(record: dict[str, Any]) -> bool:
    """A message record whose parentUuid is missing or not a string or null (every writer sets it)."""
    if _str(record.get("type")) in MESSAGE_RECORD_TYPES and "parentUuid" not in record:
        return True
    return any(record.get(k) is not None and not isinstance(record.get(k), str) for k in _LINK_KEYS)


def _kind(value: Any) -> str:
    return "missing" if value is None else f"not a string ({type(value).__name__})"


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _short(exc: Exception) -> str:
    return " ".join(str(exc).split())[:120]
