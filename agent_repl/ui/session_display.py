"""What the full-screen app shows of a session outside a turn's events: its history in the
conversation, its figures in the status line, its mode and its todo list."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from agent_repl.ui.widgets.conversation import Conversation
from agent_repl.ui.widgets.status_line import StatusLine, model_label
from agent_repl.ui.widgets.todo_panel import TodoPanel

if TYPE_CHECKING:
    from agent_repl.core.model.events import ToolResultEvent
    from agent_repl.session import Session

WELCOME = (
    "agent-repl in {cwd} · /help lists commands and keys · Enter sends, Ctrl+J adds a line, "
    "Esc interrupts, Ctrl+C twice exits"
)


@dataclass
class SessionDisplay:
    conversation: Conversation
    status: StatusLine
    todos: TodoPanel

    async def show(self, session: Session) -> None:
        """A session just opened, resumed or switched to: its whole history and its figures."""
        from agent_repl.transcript.sidechain import subagent_histories
        from agent_repl.ui.history_view import ViewMarks
        from agent_repl.ui.session_info import last_request_usage, pipeline_state

        state = pipeline_state(session)
        path = session.sink.path
        subagents = await asyncio.to_thread(subagent_histories, Path(path), session.messages) if path else {}
        earlier = session.earlier
        await self.conversation.load(
            session.messages,
            ViewMarks.from_state(state),
            subagents,
            session.tool_displays,
            earlier=(earlier.count, partial(asyncio.to_thread, earlier.load))
            if earlier is not None
            else None,
        )
        if not self.conversation.view.items:
            await self.conversation.add_notice(WELCOME.format(cwd=session.cwd), "info")
        usage = last_request_usage(session.messages)
        total = usage.total_input() if usage else 0
        self.status.set_session(
            model=model_label(session.model, session.effort),
            context_window=state.config.context_window,
            effective_window=state.config.effective_window,
            context_tokens=None,
            cost_usd=session.cost_total_usd,
            session_label=session.session_id[:8],
            cache_read_share=(usage.cache_read_input_tokens / total) if usage and total else None,
        )
        self.count_context_after_paint(session)
        self.show_mode(session)
        self.show_todos(session)

    def show_todos(self, session: Session) -> None:
        from agent_repl.core.model.todos import latest_todos
        from agent_repl.ui.session_info import pipeline_state

        rewound = pipeline_state(session).rewound
        before = session.earlier.todo_entries if session.earlier is not None else []
        self.todos.show(latest_todos(m for m in [*before, *session.messages] if m.uuid not in rewound))

    def show_todo_result(self, event: ToolResultEvent) -> None:
        """A TodoWrite call finished: the list it left, from its result."""
        from agent_repl.core.model.todos import parse_todos

        structured = event.message.tool_use_result
        todos = (
            parse_todos(structured.get("newTodos"))
            if isinstance(structured, dict) and not event.is_error
            else None
        )
        if todos is not None:
            self.todos.show(todos)

    def show_mode(self, session: Session) -> None:
        from agent_repl.core.permissions.mode import MODE_LABELS

        self.status.set_mode(MODE_LABELS[session.permission_mode])

    def show_context_figure(self, session: Session, next_request_tokens: int | None) -> None:
        """The status line's context figure after a turn: the estimate its `TurnEnded` carried, or a
        dry run when it carried none (no request has been projected yet)."""
        if next_request_tokens is None:
            self.refresh_context_figure(session)
            return
        from agent_repl.ui.session_info import pipeline_state

        try:
            config = pipeline_state(session).config
        except TypeError:  # a session without the context pipeline keeps the last reported figure
            return
        self.status.set_context(next_request_tokens, config.context_window, config.effective_window)

    def count_context_after_paint(self, session: Session) -> None:
        """The context figure of a session just shown, counted once its history is drawn: from the
        counts its transcript gave when they cover every text, else with the token encoder, loaded
        in a thread first, while the screen is drawn."""

        async def count() -> None:
            if self._figure_from_known_counts(session):
                return
            from agent_repl.core.model.tokens import cl100k_tokens

            await asyncio.to_thread(cl100k_tokens, "load the encoder")
            self.refresh_context_figure(session)

        self.status.call_after_refresh(
            self.status.run_worker, count, group="context-figure", exclusive=True, exit_on_error=False
        )

    def _figure_from_known_counts(self, session: Session) -> bool:
        """Whether the figure could be set from counts known already (a resumed session's
        transcript holds its session's counts): loading the encoder holds the screen up to 0.1 s."""
        from agent_repl.context.facts import UncountedText
        from agent_repl.ui.session_info import pipeline_state

        try:
            facts = pipeline_state(session).facts
        except TypeError:
            return False
        with facts.known_only():
            try:
                self.refresh_context_figure(session)
            except UncountedText:
                return False
        return True

    def refresh_context_figure(self, session: Session) -> None:
        """The status line's context figure, from the dry-run projection /context shows as well."""
        from agent_repl.context.report import context_usage

        try:
            usage = context_usage(session)
        except TypeError:  # a session without the context pipeline keeps the last reported figure
            return
        self.status.set_context(usage.used_tokens, usage.context_window, usage.effective_window)

    def refresh_marks(self, session: Session) -> None:
        """Snip, compaction and rewind change what the model sees, not the history: re-mark it."""
        from agent_repl.ui.history_view import ViewMarks
        from agent_repl.ui.session_info import pipeline_state

        self.conversation.apply_marks(ViewMarks.from_state(pipeline_state(session)))
