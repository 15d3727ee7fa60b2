"""The small habits Claude Code users bring, in a real terminal: /doctor, /config, the user's own
memory file, `# note`, an image path in a prompt, and the statusLine command."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path

from .tmux import TmuxBed

READY = "/help lists commands"


def _png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x00\x00\xff" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def _bodies(bed: TmuxBed) -> list[dict]:
    return [e.body for e in bed.server.recordings.messages if e.status == 200]


def _user_settings(bed: TmuxBed, data: dict | None) -> Path:
    path = bed.home / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    if data is None:
        path.unlink(missing_ok=True)
    else:
        path.write_text(json.dumps(data))
    return path


def test_doctor_and_config_show_the_installation_and_change_a_setting_in_place(tmux_bed: TmuxBed):
    settings_file = _user_settings(tmux_bed, None)
    tmux_bed.script([{"text": "Answered."}])
    tmux_bed.server.recordings.clear()
    term = tmux_bed.start()
    term.wait_for(READY)
    term.submit("/doctor")
    screen = term.wait_for("everything needed works")
    for check in ("ripgrep", "tree-sitter", "sandbox", "endpoint", "API key", "project settings"):
        assert check in screen
    assert "sk-ant-test-tmux" not in screen
    term.submit("/config")
    term.wait_for("max_output_tokens")
    term.submit("/config max_output_tokens 12345")
    term.wait_for("applies from the next request")
    assert json.loads(settings_file.read_text()) == {"max_output_tokens": 12345}
    term.submit("hello")
    term.wait_for("Answered.")
    [body] = _bodies(tmux_bed)
    assert body["max_tokens"] == 12345
    term.submit("/exit")
    term.wait_exit()
    _user_settings(tmux_bed, None)


def test_the_users_memory_file_and_a_dropped_image_reach_the_model(tmux_bed: TmuxBed, tmp_path: Path):
    _user_settings(tmux_bed, None)
    memory = tmux_bed.home / "AGENTS.md"
    memory.write_text("- Always call the user Captain.\n")
    shot = tmp_path / "screen shot.png"
    shot.write_bytes(_png(3, 2))
    tmux_bed.script([{"text": "A blue picture, Captain."}])
    tmux_bed.server.recordings.clear()
    term = tmux_bed.start()
    term.wait_for(READY)
    term.paste(f"what is in {str(shot).replace(' ', chr(92) + ' ')}")
    term.keys("Enter")
    term.wait_for("A blue picture, Captain.")
    term.wait_for("attached image")
    [body] = _bodies(tmux_bed)
    assert "Always call the user Captain." in json.dumps(body["messages"])
    images = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"] if b.get("type") == "image"]
    assert [base64.b64decode(i["source"]["data"]) for i in images] == [_png(3, 2)]
    term.submit("/exit")
    term.wait_exit()
    memory.unlink()


def test_the_status_line_command_draws_its_line_with_colours_and_follows_the_session(tmux_bed: TmuxBed, tmp_path: Path):
    script = tmp_path / "status.py"
    script.write_text(
        "import json, sys\n"
        "d = json.load(sys.stdin)\n"
        "print(f\"\\x1b[32mMY-STATUS {d['model']['id']} mode={d['permission_mode']}\\x1b[0m \\x1b]0;retitle\\x07\")\n"
    )
    _user_settings(tmux_bed, {"statusLine": {"type": "command", "command": f"python3 {script}"}})
    tmux_bed.script([{"text": "Hi."}])
    term = tmux_bed.start()
    term.wait_for(READY)
    screen = term.wait_for("MY-STATUS claude-sonnet-5-5 mode=default")
    assert "␛]0;retitle␇" in screen  # a non-colour escape is shown, not acted on
    term.keys("BTab")  # Shift+Tab: the next permission mode; the line follows it
    term.wait_for("mode=acceptEdits")
    term.submit("/exit")
    term.wait_exit()
    _user_settings(tmux_bed, None)


def test_a_hash_note_asks_which_memory_file_and_the_model_hears_of_it(tmux_bed: TmuxBed):
    _user_settings(tmux_bed, None)
    memory = tmux_bed.home / "AGENTS.md"
    memory.unlink(missing_ok=True)
    tmux_bed.script([{"text": "Noted."}])
    tmux_bed.server.recordings.clear()
    project = tmux_bed.project()
    term = tmux_bed.start(project=project)
    term.wait_for(READY)
    term.submit("# run the tests with make test")
    term.wait_for("Remember: run the tests with make test")
    term.wait_for("User memory (read in every project)")
    term.keys("Down", "Enter")
    term.wait_for(f"Saved to {memory}")
    assert memory.read_text() == "- run the tests with make test\n"
    assert not (project / "AGENTS.md").exists()
    term.submit("what did I ask you to remember?")
    term.wait_for("Noted.")
    [body] = _bodies(tmux_bed)
    assert f"The user added to {memory}: run the tests with make test" in json.dumps(body["messages"])
    term.submit("/exit")
    term.wait_exit()
    memory.unlink()
