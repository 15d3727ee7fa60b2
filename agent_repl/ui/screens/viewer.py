"""A full-screen view of a persisted tool output (the file behind a preview)."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Log, Static

from agent_repl.core.model.visible import show_controls

# A bigger file is shown up to here, with a note; the file itself is untouched.
MAX_VIEW_BYTES = 16 * 1024 * 1024


class OutputViewer(Screen[None]):
    BINDINGS = [Binding("escape,q", "app.pop_screen", "close")]

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = Path(path)

    def compose(self) -> ComposeResult:
        yield Static(Text(show_controls(str(self.path))), id="viewer-title")
        yield Log(id="viewer-log", highlight=False)
        yield Footer()

    def on_mount(self) -> None:
        log = self.query_one(Log)
        try:
            size = self.path.stat().st_size
            with self.path.open("rb") as f:
                data = f.read(MAX_VIEW_BYTES)
        except OSError as exc:
            log.write_line(f"cannot open {self.path}: {exc.strerror or exc}")
            return
        log.write_lines(show_controls(data.decode("utf-8", errors="replace")).splitlines())
        if size > MAX_VIEW_BYTES:
            log.write_line(f"… showing the first {MAX_VIEW_BYTES:,} of {size:,} bytes")
        log.scroll_home(animate=False)
        log.focus()
