"""`!command` in the line REPL when the command did not run: the notice is shown as its output."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator

from rich.console import Console

from agent_repl.commands.submit import ShellLine
from agent_repl.core.model.events import AgentEvent, SystemMessageEvent, TurnStarted
from agent_repl.core.model.messages import SystemMessage, UserMessage


class NoShells:
    def request_move(self) -> None:
        pass


class ShellThatDidNotRun:
    """A session whose `!command` ends in a system notice (the loop's "the command did not run")."""

    shells = NoShells()

    def interrupt(self) -> None:
        pass

    async def run_shell(self, command: str) -> AsyncIterator[AgentEvent]:
        yield TurnStarted(prompt=f"!{command}", message=UserMessage(content=f"<bash-input>{command}</bash-input>"))
        yield SystemMessageEvent(message=SystemMessage(subtype="informational", content="the command did not run"))


async def test_a_system_notice_after_a_shell_command_is_its_output():
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from agent_repl.ui.inline import InlineRenderer, _run_one_turn

    screen = io.StringIO()
    renderer = InlineRenderer(Console(file=screen, width=100, force_terminal=False))
    with create_pipe_input() as keys, create_app_session(input=keys, output=DummyOutput()):
        await _run_one_turn(ShellThatDidNotRun(), ShellLine(line="!ls", command="ls"), renderer)
    lines = [line.strip() for line in screen.getvalue().splitlines() if line.strip()]
    assert lines[-2:] == ["! ls", "the command did not run"]
