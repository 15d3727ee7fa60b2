"""Widgets whose size is measured again each time their content changes.

Textual keys a widget's measured size on a count of its layout requests, and counts a request only
when none is pending. A widget's first content (set before it is mounted) stays pending until the
widget next runs its own message loop; if the screen lays everything out in that window (under
load it often does), the size measured then is cached under the current count, and a change made
before the widget's turn comes is drawn in that old size: a tool block's title cut just after the
call, with no outcome, or a diff cut to the lines it had before the result came.
"""

from __future__ import annotations

from typing import Self

from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Collapsible, Static
from textual.widgets.collapsible import CollapsibleTitle


def _count_every_request(widget: Widget, layout: bool) -> None:
    """Count a layout request that comes while another is pending too, so the change is measured."""
    if layout and widget._layout_required:
        widget._layout_updates += 1


class FreshStatic(Static):
    """A `Static` whose content changes while it is shown."""

    def refresh(
        self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False
    ) -> Self:
        _count_every_request(self, layout)
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)


class FreshTitle(CollapsibleTitle):
    """The title line of a `FreshCollapsible`."""

    def refresh(
        self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False
    ) -> Self:
        _count_every_request(self, layout)
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)


class FreshCollapsible(Collapsible):
    """A `Collapsible` whose title changes while it is shown (a tool call's outcome, a mark)."""

    def __init__(self, *children: Widget, title: str, collapsed: bool, classes: str) -> None:
        super().__init__(*children, title=title, collapsed=collapsed, classes=classes)
        made = self._title
        self._title = FreshTitle(
            label=made.label,
            collapsed_symbol=made.collapsed_symbol,
            expanded_symbol=made.expanded_symbol,
            collapsed=collapsed,
        )
