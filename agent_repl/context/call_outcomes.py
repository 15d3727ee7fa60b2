"""Which tool calls of a history ran, from the results that answer them.

What a compaction puts back (re-read files, the list of paths the calls named) may only come
from calls that were allowed and ran: a refused call (by a rule, the user, a hook or plan mode)
or one that failed before doing anything named a path the model chose, not one it was given.
A call with no result at all (interrupted) did not run either.
"""

from __future__ import annotations

from collections.abc import Iterable

from agent_repl.core.model.messages import Message, UserMessage


def succeeded_calls(messages: Iterable[Message]) -> set[str]:
    """The tool_use ids whose result came back without an error."""
    return {
        result.tool_use_id
        for message in messages
        if isinstance(message, UserMessage)
        for result in message.tool_results()
        if not result.is_error
    }


def ran_calls(messages: Iterable[Message]) -> set[str]:
    """The tool_use ids that ran: succeeded, or failed while running and said how (a command that
    exited non-zero reports its exit code; a refusal or an early failure is a plain error text)."""
    ran: set[str] = set()
    for message in messages:
        if not isinstance(message, UserMessage):
            continue
        reported = isinstance(message.tool_use_result, dict)
        for result in message.tool_results():
            if not result.is_error or (reported and len(message.tool_results()) == 1):
                ran.add(result.tool_use_id)
    return ran
