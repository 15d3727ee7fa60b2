"""The memoized render helpers are emptied at a turn's end, so a long session's drawn lines and
screen offsets do not stay cached for screens long gone."""

from __future__ import annotations

from rich.cells import cached_cell_len
from textual.geometry import Region

from agent_repl.ui.gc_policy import release_render_caches


def test_release_render_caches_empties_cell_widths_and_region_arithmetic():
    for offset in range(200):
        cached_cell_len(f"line {offset} of a long conversation")
        Region(0, offset, 120, 3).intersection(Region(0, 0, 120, 40))
        Region(0, offset, 120, 3).translate((0, 1))
    assert cached_cell_len.cache_info().currsize > 0
    assert Region.intersection.cache_info().currsize > 0

    release_render_caches()

    assert cached_cell_len.cache_info().currsize == 0
    assert Region.intersection.cache_info().currsize == 0
    assert Region.translate.cache_info().currsize == 0
