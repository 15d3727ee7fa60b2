"""When Python's cyclic garbage collector runs, so that it never pauses a streamed answer.

A full collection walks every live object: with a long history loaded that is a pause of a tenth
of a second or more, at whatever moment the allocation counters say, often in the middle of a
streamed chunk. So the long-lived objects (the loaded history, the turns already shown) are moved
out of the collector's sight with `gc.freeze()` at quiet moments, and the collections that run
during a turn only walk what the turn made. Frozen objects are never collected, so every so many
turns, at a turn's end, everything is unfrozen and collected once, returning what became garbage
since (widgets unmounted from the top of the conversation, a replaced session's history).

Start-up (the session's code imported, the history loaded and mounted) allocates much and frees
little, so no collection runs until the first history is shown; what start-up made is then frozen
as it is, without walking it first.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass

# Turns between two collections of everything (each one pauses as long as a full collection does).
FULL_COLLECTION_EVERY = 25


@dataclass
class GcPolicy:
    """Freeze what is long-lived after a history is shown and after each turn; collect it all
    every `full_every` turns."""

    full_every: int = FULL_COLLECTION_EVERY
    turns_since_full: int = 0
    starting: bool = False

    def start(self) -> None:
        """The app is starting: no collection until its first history is shown (or `started`)."""
        if gc.isenabled():
            gc.disable()
            self.starting = True

    def started(self) -> None:
        """Start-up is over (its history shown, or it failed): collections run again, and what it
        made is frozen."""
        if self.starting:
            self.starting = False
            gc.freeze()
            gc.enable()

    def history_shown(self) -> None:
        """A history was just loaded and drawn (start, resume, /clear): what it replaced goes, the
        rest is frozen."""
        if self.starting:
            self.started()
            return
        self._collect_everything()

    def turn_ended(self) -> None:
        """Collect what the turn left (only the unfrozen objects are walked), then freeze the rest."""
        self.turns_since_full += 1
        release_render_caches()
        if self.turns_since_full >= self.full_every:
            self._collect_everything()
            return
        gc.collect()
        gc.freeze()

    def _collect_everything(self) -> None:
        self.turns_since_full = 0
        release_render_caches()
        gc.unfreeze()
        gc.collect()
        gc.freeze()


def release_render_caches() -> None:
    """Let the line caches of removed widgets go.

    Textual memoizes a method of its per-widget line cache (`StylesCache.get_inner_outer`) with an
    `lru_cache` keyed by the cache object itself, so up to 1,024 line caches of widgets long removed
    from the conversation stay alive, with every line they drew. Clearing it costs one recomputed
    colour pair per visible widget.

    Rich's cell widths of drawn strings and Textual's region arithmetic are memoized the same way;
    a growing conversation keeps adding new lines and new offsets, so those caches fill up over a
    long session with entries for screens long gone. They are emptied too."""
    from rich import cells
    from textual._styles_cache import StylesCache
    from textual.geometry import Region

    memoized = [getattr(StylesCache, "get_inner_outer", None), getattr(cells, "cached_cell_len", None)]
    memoized += list(vars(Region).values())
    for function in memoized:
        clear = getattr(function, "cache_clear", None)
        if clear is not None:
            clear()
