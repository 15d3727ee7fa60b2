"""The newest entries of a transcript, read from its end: what the app draws while a resume opens.

Opening a resumed session reads the whole file (its side records, the entries before the cut) and
imports the session's machinery; on a long transcript that takes a while. The screen needs far
less: the last entries of the conversation. `tail_messages` reads the file backwards in growing
chunks, follows the newest entry's parents while they are in what was read, and stops at a
compaction boundary (where the model's view starts), at `max_entries`, or at `max_bytes`.

It is a preview: the session, once open, shows its own history in its place. So it is
conservative: only entries this version of our writer wrote for this very session (they were
redacted when written; anything else would need redacting first), only the main conversation (not
a sub-agent's), and any surprise (a line it cannot parse in the chain, a file it cannot read) gives
nothing rather than a guess.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import agent_repl
from agent_repl.core.model.messages import Message
from agent_repl.transcript.convert import record_to_message

FIRST_CHUNK = 256 * 1024
MAX_BYTES = 8 * 1024 * 1024
MAX_ENTRIES = 200
_ENTRY_START = b'{"parentUuid":'


def tail_messages(
    path: Path, *, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES, first_chunk: int = FIRST_CHUNK
) -> list[Message]:
    """The newest entries of the session `path` holds (named `<session id>.jsonl`), oldest first:
    the chain of parents from the newest main-conversation entry back to a compaction boundary,
    to the start of the session, or to `max_entries`. Empty when it cannot tell."""
    try:
        with path.open("rb") as f:
            size = f.seek(0, 2)
            chunk = first_chunk
            while True:
                start = max(0, size - min(chunk, max_bytes))
                f.seek(start)
                data = f.read(size - start)
                chain, whole = _chain(
                    data, at_start=start == 0, session_id=path.stem, max_entries=max_entries
                )
                if whole or start == 0 or chunk >= max_bytes:
                    break  # without reaching its end, the chain's newest part is still the tail
                chunk *= 4
    except OSError:
        return []
    if not chain:
        return []
    try:
        messages = [record_to_message(record) for record in chain]
    except (ValueError, TypeError):
        return []
    return [m for m in messages if m is not None]


def _chain(
    data: bytes, *, at_start: bool, session_id: str, max_entries: int
) -> tuple[list[dict[str, Any]], bool]:
    """The chain ending at the newest entry in `data`, oldest first, and whether it is whole (it
    reached a boundary, the session's first entry or `max_entries`; otherwise more of the file may
    continue it). An empty chain when there is none, or when it cannot be trusted."""
    lines = data.split(b"\n")
    if not at_start:
        lines = lines[1:]  # the first line was cut by the chunk's start
    records: dict[str, dict[str, Any]] = {}
    newest: dict[str, Any] | None = None
    for line in lines:
        if not line.startswith(_ENTRY_START):
            continue  # a side record, a blank line
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue  # a torn or damaged line: if the chain needs it, the chain stops there
        if not isinstance(record, dict) or record.get("isSidechain") is True:
            continue
        uuid = record.get("uuid")
        if not isinstance(uuid, str) or uuid in records:
            continue
        records[uuid] = record
        if record.get("type") in ("user", "assistant", "system", "attachment"):
            newest = record
    if newest is None:
        return [], at_start  # no whole entry in what was read: read further back
    chain: list[dict[str, Any]] = []
    link: dict[str, Any] | None = newest
    while link is not None:
        if link.get("version") != agent_repl.__version__ or link.get("sessionId") != session_id:
            return [], True  # another writer's entry (not redacted by ours), or another session's
        chain.append(link)
        if len(chain) >= max_entries:
            break
        if link.get("type") == "system" and link.get("subtype") == "compact_boundary":
            break  # the model's view starts here
        parent = link.get("parentUuid")
        if parent is None:
            break  # the session's first entry
        if not isinstance(parent, str):
            return [], True
        link = records.get(parent)
        if link is None:
            chain.reverse()
            return chain, at_start  # read further back for the rest (at the file's start: broken)
    chain.reverse()
    return chain, True
