"""A prompt past a quarter of the window is saved to a file; the model gets its preview and path."""

from __future__ import annotations

from pathlib import Path

from agent_repl.core.loop.big_prompt import attach_if_large


def test_a_huge_paste_becomes_a_saved_file_with_a_preview(tmp_path: Path) -> None:
    paste = "".join(f"line {n} of the pasted log\n" for n in range(200_000))  # about 5 MB
    sent = attach_if_large(paste, 200_000, tmp_path)
    assert len(sent) < 10_000
    saved = [p for p in tmp_path.iterdir()]
    assert len(saved) == 1 and saved[0].read_text() == paste
    assert str(saved[0]) in sent
    assert "line 0 of the pasted log" in sent


def test_an_ordinary_prompt_goes_as_typed(tmp_path: Path) -> None:
    assert attach_if_large("run echo hi", 200_000, tmp_path) == "run echo hi"
    assert list(tmp_path.iterdir()) == []
