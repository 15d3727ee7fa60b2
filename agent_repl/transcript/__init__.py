"""Transcripts: append-only JSONL in Claude Code's schema, written as the session runs and loaded
to resume it (docs/architecture.md 9.1, 9.3). The schema is described in `transcripts/README.md` at the repo root.

- `paths`:    where a session's files live (`SessionPaths`)
- `records`:  the record models (Claude Code message records, our side records, their registry)
- `convert`:  Message <-> record
- `writer`:   `TranscriptWriter`, append-only through aiofiles
- `loader`:   `load_session`, tolerant of torn lines and real Claude Code files
- `sessions`: listing a project's sessions for `--continue` and `/resume`
"""

from agent_repl.transcript.convert import Envelope, message_to_record, record_to_message
from agent_repl.transcript.loader import LoadedSession, SessionMetadata, load_session
from agent_repl.transcript.paths import SessionPaths, project_dir, project_slug, resolve_home
from agent_repl.transcript.records import (
    BUILTIN_SIDE_RECORDS,
    CollapseCommitRecord,
    ContentReplacementRecord,
    MicrocompactClearRecord,
    SessionMetaRecord,
    SideRecord,
    SideRecordRegistry,
    SnipRecord,
)
from agent_repl.transcript.sessions import SessionInfo, list_sessions
from agent_repl.transcript.writer import TranscriptWriter

__all__ = [
    "BUILTIN_SIDE_RECORDS",
    "CollapseCommitRecord",
    "ContentReplacementRecord",
    "Envelope",
    "LoadedSession",
    "MicrocompactClearRecord",
    "SessionInfo",
    "SessionMetaRecord",
    "SessionMetadata",
    "SessionPaths",
    "SideRecord",
    "SideRecordRegistry",
    "SnipRecord",
    "TranscriptWriter",
    "list_sessions",
    "load_session",
    "message_to_record",
    "project_dir",
    "project_slug",
    "record_to_message",
    "resolve_home",
]
