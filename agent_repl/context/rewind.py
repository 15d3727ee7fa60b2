"""/rewind (docs/architecture.md 7.4): back to just before one of the user's prompts, for the code, the
conversation or both.

The conversation part is a projection like snip: the prompt and everything after it leave the
model's view through a `RewindRecord`; the history keeps them (the user still sees them, marked).
The code part puts every file the file tools changed back as it was before that prompt, from the
session's file history. Files a Bash command changed are not tracked, so they stay as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from agent_repl.context.compact import is_typed_prompt, last_active_boundary
from agent_repl.context.projector import Pipeline
from agent_repl.context.records import apply
from agent_repl.core.model.messages import AssistantMessage, Message
from agent_repl.core.model.todos import TODOS_STATE_KEY, latest_todos
from agent_repl.transcript.file_history import FileHistory
from agent_repl.transcript.records import RewindRecord

RestoreWhat = Literal["both", "conversation", "code"]
BASH_NOT_TRACKED = "Files changed by Bash commands are not tracked, so a rewind does not restore them."


@dataclass(frozen=True)
class RewindTarget:
    """A prompt the user may rewind to, with what going back to it would touch."""

    uuid: str
    text: str
    timestamp: str
    # Files the file tools changed from this prompt on (paths as the file history keys them).
    files: list[str] = field(default_factory=list)
    # Bash ran from this prompt on: its changes, if any, stay.
    ran_bash: bool = False


@dataclass(frozen=True)
class RewindOutcome:
    ok: bool
    text: str
    # The prompt's text, for the input box (the user usually edits and resends it).
    prompt_text: str = ""
    record: RewindRecord | None = None


class RewindSession(Protocol):
    messages: list[Message]
    tool_state: dict[str, Any]
    file_history: Any
    files: Any

    async def append_record(self, record: Any) -> None: ...


def rewind_targets(session: RewindSession, pipeline: Pipeline) -> list[RewindTarget]:
    """The typed prompts still in the model's view, oldest first."""
    view = pipeline.project(session.messages, dry_run=True).view
    history: FileHistory | None = session.file_history
    index = {m.uuid: i for i, m in enumerate(session.messages)}
    targets = []
    for message in view:
        if not is_typed_prompt(message) or message.uuid not in index:
            continue
        later = session.messages[index[message.uuid] :]
        ran_bash = any(
            use.name == "Bash" for m in later if isinstance(m, AssistantMessage) for use in m.tool_uses()
        )
        files = history.changed_after(message.uuid) if history is not None else []
        targets.append(RewindTarget(message.uuid, message.text(), message.timestamp, files, ran_bash))
    return targets


def _excluded_from(session: RewindSession, pipeline: Pipeline, uuid: str) -> list[str]:
    """The prompt and every entry after it; an active compaction's boundary and summary stay when
    the prompt is in the tail that compaction kept."""
    start = next(i for i, m in enumerate(session.messages) if m.uuid == uuid)
    keep: set[str] = set()
    boundary = last_active_boundary(session.messages, pipeline.state)
    if boundary is not None and session.messages.index(boundary) > start:
        keep = {boundary.uuid, str(boundary.metadata.get("summaryUuid") or "")}
    return [m.uuid for m in session.messages[start:] if m.uuid not in keep]


async def rewind(session: RewindSession, pipeline: Pipeline, prompt_uuid: str, what: RestoreWhat) -> RewindOutcome:
    targets = {t.uuid: t for t in rewind_targets(session, pipeline)}
    target = targets.get(prompt_uuid) or next(
        (t for t in targets.values() if t.uuid.startswith(prompt_uuid)), None
    )
    if target is None:
        return RewindOutcome(False, f"No prompt {prompt_uuid!r} to rewind to (see /rewind for the list).")
    restored: list[str] = []
    notes: list[str] = []
    if what in ("both", "code"):
        history: FileHistory | None = session.file_history
        if history is None:
            notes.append("This session keeps no file history, so no file was restored.")
        else:
            report = history.restore(target.uuid)
            restored = report.restored + report.deleted
            if report.restored:
                notes.append("Restored " + ", ".join(report.restored) + ".")
            if report.deleted:
                notes.append("Removed " + ", ".join(report.deleted) + " (created after that prompt).")
            if report.failed:
                notes.append("Could not restore " + ", ".join(report.failed) + ".")
            if not restored and not report.failed:
                notes.append("No file needed restoring.")
            # Files on disk moved under the model: it must read them again before editing.
            session.files.clear()
        if target.ran_bash:
            notes.append(BASH_NOT_TRACKED)
    conversation = what in ("both", "conversation")
    excluded = _excluded_from(session, pipeline, target.uuid) if conversation else []
    record = RewindRecord(prompt_uuid=target.uuid, restore=what, excluded_uuids=excluded, files_restored=restored)
    apply(pipeline.state, record)
    if conversation:
        remaining = [m for m in session.messages if m.uuid not in pipeline.state.rewound]
        session.tool_state[TODOS_STATE_KEY] = [t.model_dump() for t in latest_todos(remaining)]
        session.files.clear()
        notes.insert(0, f"The conversation is back to just before that prompt ({len(excluded)} entries left the model's view; your history keeps them).")
    await session.append_record(record)
    return RewindOutcome(True, " ".join(notes), target.text, record)
