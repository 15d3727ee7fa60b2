"""Checkpoints of the files the model changes, in Claude Code's `file-history-snapshot` layout.

Each prompt opens a snapshot naming, for every file a tool has changed in this session, the
backup that holds its content as the prompt began. Before Edit or Write first changes a file that
the current snapshot does not name yet, its prior content is copied to a new backup (or noted as
absent, for a new file) and an update of the snapshot is written. So for any prompt, the state of
every tracked file just before it is known, and `/rewind` can put it back.

Backups live in `<home>/file-history/<session_id>/<hash of the path>@v<N>` (0600 files in 0700
directories), as Claude Code keeps them under `~/.claude/file-history/`. Only changes made through
the file tools are tracked: what a Bash command changes is not.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from agent_repl.core.model.messages import iso_timestamp, utc_now
from agent_repl.core.tooling.atomic import write_atomic
from agent_repl.transcript.paths import FILE_MODE, ensure_private_dir
from agent_repl.transcript.records import SideRecord

RECORD_TYPE = "file-history-snapshot"


class _Camel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow", defer_build=True)


class TrackedBackup(_Camel):
    # "<hash>@v<N>", or None: the file did not exist then.
    backup_file_name: str | None
    version: int
    backup_time: str


class Snapshot(_Camel):
    message_id: str
    tracked_file_backups: dict[str, TrackedBackup] = Field(default_factory=dict)
    timestamp: str


class FileHistorySnapshotRecord(SideRecord):
    """Claude Code's record (written by us too); the loader keeps it as a raw dict, parsed here."""

    type: Literal["file-history-snapshot"] = "file-history-snapshot"
    message_id: str
    snapshot: Snapshot
    is_snapshot_update: bool = False


@dataclass(frozen=True)
class RestoreReport:
    restored: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


class FileHistory:
    def __init__(
        self,
        root: Path,
        cwd: Path,
        append_record: Callable[[Any], Awaitable[None]],
        clock: Callable[[], Any] = utc_now,
    ) -> None:
        self.root = root
        self.cwd = cwd
        self._append = append_record
        self._clock = clock
        # prompt uuid -> the backup of each tracked file as that prompt began (updates merged in).
        self.snapshots: dict[str, dict[str, TrackedBackup]] = {}
        self.versions: dict[str, list[TrackedBackup]] = {}
        self.current: str | None = None

    # -- keys and files ----------------------------------------------------------------

    def key(self, path: Path | str) -> str:
        """The path as Claude Code records it: relative to the project when inside it."""
        real = os.path.realpath(path)
        base = os.path.realpath(self.cwd)
        return os.path.relpath(real, base) if real.startswith(base.rstrip(os.sep) + os.sep) else real

    def path(self, key: str) -> Path:
        return Path(key) if os.path.isabs(key) else self.cwd / key

    def _now(self) -> str:
        return iso_timestamp(self._clock())

    def _write_backup(self, key: str, version: int) -> TrackedBackup:
        source = self.path(key)
        stamp = self._now()
        if not source.exists():
            return TrackedBackup(backup_file_name=None, version=version, backup_time=stamp)
        name = f"{_hash(key)}@v{version}"
        ensure_private_dir(self.root)
        target = self.root / name
        data = source.read_bytes()
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, FILE_MODE)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return TrackedBackup(backup_file_name=name, version=version, backup_time=stamp)

    def _backup_bytes(self, backup: TrackedBackup) -> bytes | None:
        if backup.backup_file_name is None:
            return None
        return (self.root / backup.backup_file_name).read_bytes()

    def _changed_since(self, key: str, backup: TrackedBackup) -> bool:
        path = self.path(key)
        if backup.backup_file_name is None:
            return path.exists()
        try:
            if path.stat().st_size != (self.root / backup.backup_file_name).stat().st_size:
                return True
            return path.read_bytes() != self._backup_bytes(backup)
        except OSError:
            return True

    def _track(self, key: str, backup: TrackedBackup) -> None:
        self.versions.setdefault(key, []).append(backup)

    async def _record(self, prompt: str, *, update: bool) -> None:
        snapshot = Snapshot(message_id=prompt, tracked_file_backups=dict(self.snapshots[prompt]), timestamp=self._now())
        await self._append(FileHistorySnapshotRecord(message_id=prompt, snapshot=snapshot, is_snapshot_update=update))

    # -- the two moments that make checkpoints ---------------------------------------------

    async def start_prompt(self, prompt_uuid: str) -> None:
        """A prompt begins: note each tracked file's backup, backing up those changed since."""
        tracked: dict[str, TrackedBackup] = {}
        for key, versions in self.versions.items():
            latest = versions[-1]
            if await asyncio.to_thread(self._changed_since, key, latest):
                latest = await asyncio.to_thread(self._write_backup, key, latest.version + 1)
                self._track(key, latest)
            tracked[key] = latest
        self.snapshots[prompt_uuid] = tracked
        self.current = prompt_uuid
        await self._record(prompt_uuid, update=False)

    async def before_change(self, path: Path) -> None:
        """A tool is about to change `path`: keep its content first, unless this prompt already did."""
        prompt = self.current
        if prompt is None:
            return
        key = self.key(path)
        if key in self.snapshots[prompt]:
            return
        versions = self.versions.get(key)
        backup = await asyncio.to_thread(self._write_backup, key, versions[-1].version + 1 if versions else 1)
        self._track(key, backup)
        self.snapshots[prompt][key] = backup
        await self._record(prompt, update=True)

    # -- going back ----------------------------------------------------------------------------

    def changed_after(self, prompt_uuid: str) -> list[str]:
        """The tracked files whose content differs from what they were just before that prompt."""
        changed = []
        for key in sorted(self.versions):
            target = self._target(prompt_uuid, key)
            if target is not None and self._changed_since(key, target):
                changed.append(key)
        return changed

    def _target(self, prompt_uuid: str, key: str) -> TrackedBackup | None:
        snapshot = self.snapshots.get(prompt_uuid)
        if snapshot is None:
            return None
        # A file first changed after that prompt was, before it, as its first backup holds it.
        return snapshot.get(key) or self.versions[key][0]

    def restore(self, prompt_uuid: str) -> RestoreReport:
        """Put every tracked file back as it was just before `prompt_uuid`."""
        report = RestoreReport()
        if prompt_uuid not in self.snapshots:
            return report
        for key in sorted(self.versions):
            target = self._target(prompt_uuid, key)
            assert target is not None
            path = self.path(key)
            try:
                if not self._changed_since(key, target):
                    report.unchanged.append(key)
                elif target.backup_file_name is None:
                    path.unlink()
                    report.deleted.append(key)
                else:
                    data = self._backup_bytes(target)
                    assert data is not None
                    mode = path.stat().st_mode & 0o777 if path.exists() else None
                    write_atomic(path, data, mode)
                    report.restored.append(key)
            except OSError:
                report.failed.append(key)
        return report

    # -- resume --------------------------------------------------------------------------------

    def load(self, records: Iterable[Any]) -> None:
        """Rebuild from the transcript's snapshot records (raw dicts or parsed)."""
        for raw in records:
            if isinstance(raw, dict) and raw.get("type") == RECORD_TYPE:
                try:
                    record = FileHistorySnapshotRecord.model_validate(raw)
                except ValidationError:
                    continue
            elif isinstance(raw, FileHistorySnapshotRecord):
                record = raw
            else:
                continue
            prompt = record.snapshot.message_id
            merged = self.snapshots.setdefault(prompt, {})
            for key, backup in record.snapshot.tracked_file_backups.items():
                merged[key] = backup
                known = self.versions.setdefault(key, [])
                if all(b.version != backup.version for b in known):
                    known.append(backup)
                    known.sort(key=lambda b: b.version)
            self.current = prompt


def file_history_dir(home: Path, session_id: str) -> Path:
    return home / "file-history" / session_id


__all__ = ["FileHistory", "FileHistorySnapshotRecord", "RestoreReport", "file_history_dir"]
