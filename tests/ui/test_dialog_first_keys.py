"""Keys pressed as soon as an option dialog opens move its cursor: nothing the dialog does after it
shows puts the cursor back (under load, /rewind's 'restore code only' came out as 'conversation')."""

from __future__ import annotations

import asyncio

import pytest
from textual.app import App

from agent_repl.context.rewind import RewindTarget
from agent_repl.ui.screens.rewind import RewindOptionsScreen, RewindPicker


class Host(App):
    answer: str | None = "unanswered"


async def _answer(screen, keys: tuple[str, ...], ticks: int) -> str | None:
    app = Host()
    async with app.run_test() as pilot:
        app.push_screen(screen, callback=lambda choice: setattr(app, "answer", choice))
        for _ in range(ticks):  # the keys land at every point of the dialog's opening
            await asyncio.sleep(0)
        await pilot.press(*keys)
        await pilot.pause()
        return app.answer


@pytest.mark.parametrize("ticks", range(0, 30, 3))
def test_down_down_enter_in_the_rewind_options_restores_code_only(ticks: int):
    target = RewindTarget(uuid="u1", text="edit it", timestamp="t", files=["README.md"])
    assert asyncio.run(_answer(RewindOptionsScreen(target), ("down", "down", "enter"), ticks)) == "u1 code"


@pytest.mark.parametrize("ticks", range(0, 30, 3))
def test_up_enter_in_the_rewind_picker_picks_the_prompt_before_the_last(ticks: int):
    targets = [RewindTarget(uuid=f"u{i}", text=f"prompt {i}", timestamp="t") for i in range(3)]
    assert asyncio.run(_answer(RewindPicker(targets), ("up", "enter"), ticks)) == "u1"
