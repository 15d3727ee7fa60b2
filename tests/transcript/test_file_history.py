"""Checkpoints: Claude Code's file-history-snapshot records and backups, restore and reload."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_repl.transcript.file_history import FileHistory, FileHistorySnapshotRecord

REAL = (
    Path(__file__).parents[3] / "shared" / "data" / "claude_code" / "phantom_reads" / "wsd-dev-repeat_2.1.6-bad"
    / "504216d1-8285-4ec4-92be-0db8dc92a18a.jsonl"
)


class Records:
    def __init__(self) -> None:
        self.items: list[dict] = []

    async def __call__(self, record: FileHistorySnapshotRecord) -> None:
        self.items.append(json.loads(json.dumps(record.to_json())))


def make(tmp_path: Path) -> tuple[FileHistory, Records, Path]:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    records = Records()
    return FileHistory(tmp_path / "home" / "file-history" / "s1", project, records), records, project


async def test_backups_and_records_follow_claude_codes_layout(tmp_path: Path) -> None:
    history, records, project = make(tmp_path)
    a = project / "a.txt"
    a.write_text("one\n")
    await history.start_prompt("p1")
    await history.before_change(a)
    a.write_text("two\n")
    await history.before_change(a)  # already tracked in this prompt: no second backup
    await history.before_change(project / "new.txt")
    (project / "new.txt").write_text("made\n")
    await history.start_prompt("p2")
    assert [r["isSnapshotUpdate"] for r in records.items] == [False, True, True, False]
    first, update, _, second = records.items
    assert first["type"] == "file-history-snapshot" and first["messageId"] == "p1"
    assert first["snapshot"]["trackedFileBackups"] == {} and first["snapshot"]["messageId"] == "p1"
    backup = update["snapshot"]["trackedFileBackups"]["a.txt"]
    assert set(backup) == {"backupFileName", "version", "backupTime"}
    name = backup["backupFileName"]
    assert name.endswith("@v1") and len(name.split("@")[0]) == 16 and backup["version"] == 1
    assert (history.root / name).read_text() == "one\n"
    assert (history.root / name).stat().st_mode & 0o777 == 0o600
    tracked = second["snapshot"]["trackedFileBackups"]
    assert tracked["a.txt"]["version"] == 2 and (history.root / tracked["a.txt"]["backupFileName"]).read_text() == "two\n"
    assert tracked["new.txt"]["version"] == 2 and (history.root / tracked["new.txt"]["backupFileName"]).read_text() == "made\n"
    first_new = records.items[2]["snapshot"]["trackedFileBackups"]["new.txt"]
    assert first_new["backupFileName"] is None and first_new["version"] == 1


async def test_restore_puts_files_back_as_they_were_before_a_prompt(tmp_path: Path) -> None:
    history, records, project = make(tmp_path)
    a, b = project / "a.txt", project / "b.txt"
    a.write_text("a0\n")
    b.write_text("b0\n")
    await history.start_prompt("p1")
    await history.before_change(a)
    a.write_text("a1\n")
    await history.start_prompt("p2")
    await history.before_change(a)
    a.write_text("a2\n")
    await history.before_change(b)
    b.write_text("b2\n")
    await history.before_change(project / "c.txt")
    (project / "c.txt").write_text("c2\n")
    assert history.changed_after("p2") == ["a.txt", "b.txt", "c.txt"]
    report = history.restore("p2")
    assert sorted(report.restored) == ["a.txt", "b.txt"] and report.deleted == ["c.txt"]
    assert a.read_text() == "a1\n" and b.read_text() == "b0\n" and not (project / "c.txt").exists()
    report = history.restore("p1")
    assert a.read_text() == "a0\n" and b.read_text() == "b0\n"
    assert report.restored == ["a.txt"] and sorted(report.unchanged) == ["b.txt", "c.txt"]

    again = FileHistory(history.root, project, Records())
    again.load(records.items)
    a.write_text("later\n")
    assert again.restore("p2").restored == ["a.txt"] and a.read_text() == "a1\n"


@pytest.mark.skipif(not REAL.is_file(), reason=f"shared Claude Code data not found at {REAL}")
async def test_real_claude_code_snapshot_records_load(tmp_path: Path) -> None:
    raw = [json.loads(line) for line in REAL.read_text().splitlines() if '"file-history-snapshot"' in line]
    history, _, _ = make(tmp_path)
    history.load(raw)
    key = "dev/journal/archive/Journal-Workscope-20260115-171955.md"
    assert [b.version for b in history.versions[key]] == [1, 2, 3]
    assert history.versions[key][0].backup_file_name == "ecacd5c527fdedf9@v1"
    assert len(history.snapshots) == 7
