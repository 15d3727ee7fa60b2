"""Every history entry a turn appends reaches the front ends as an event (docs/architecture.md 4).

Most entries travel in the event that announces them (the prompt in `TurnStarted`, a reply in
`AssistantMessageEvent`, a result in `ToolResultEvent`, a notice in `SystemMessageEvent`); the
others (a reminder, a hook's context, an interruption's marker, a `!command`'s output) are
announced here as `EntryAppended`, in history order, so no front end reads the history to learn
what a turn produced.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from agent_repl.core.model.events import (
    AgentEvent,
    AssistantMessageEvent,
    EntryAppended,
    SystemMessageEvent,
    ToolResultEvent,
    TurnStarted,
)

if TYPE_CHECKING:
    from agent_repl.core.loop.turn_session import TurnSession

CARRYING = (TurnStarted, AssistantMessageEvent, ToolResultEvent, SystemMessageEvent)


async def with_entries(session: TurnSession, events: AsyncIterator[AgentEvent]) -> AsyncIterator[AgentEvent]:
    """`events`, with an `EntryAppended` for each entry the history gained that no event carries,
    placed where the entry stands in the history."""
    announced = len(session.messages)
    async for event in events:
        history = session.messages
        new = history[announced:] if len(history) >= announced else []
        announced = len(history)
        carried = event.message.uuid if isinstance(event, CARRYING) else None
        at = next((i for i, entry in enumerate(new) if entry.uuid == carried), None)
        if at is None:
            for entry in new:
                yield EntryAppended(message=entry)
            yield event
            continue
        for entry in new[:at]:
            yield EntryAppended(message=entry)
        yield event
        for entry in new[at + 1 :]:
            yield EntryAppended(message=entry)
