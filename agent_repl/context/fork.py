"""Forked requests: a side request that reuses the main conversation's cached prefix.

Compaction and session-memory extraction ask the model about the conversation. Sending the same
system prompt, tools, body extras and messages the main thread would send next, with the
question appended to the last user message, lets the request read that whole prefix from the
prompt cache instead of writing a new one. The projection is a dry run, so a fork never changes
pipeline state, and it never goes through the query loop, so it can never trigger a compaction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agent_repl.context.thinking import without_thinking
from agent_repl.core.api.client import ModelResponse
from agent_repl.core.api.request import build_request

if TYPE_CHECKING:
    from agent_repl.context.context_session import ContextSession
    from agent_repl.core.loop.projection import Projection

Wire = list[dict[str, Any]]
WireTransform = Callable[[Wire], Wire]


def append_question(wire: list[dict[str, Any]], question: str) -> list[dict[str, Any]]:
    """The wire with `question` as the last user text (merged into a trailing user message)."""
    block = {"type": "text", "text": question}
    if wire and wire[-1]["role"] == "user":
        return [*wire[:-1], {**wire[-1], "content": [*wire[-1]["content"], block]}]
    return [*wire, {"role": "user", "content": [block]}]


async def fork_request(
    session: ContextSession,
    question: str,
    *,
    max_tokens: int,
    transform: WireTransform | None = None,
    before_uuid: str | None = None,
    projection: Projection | None = None,
) -> ModelResponse:
    """Ask `question` about the conversation as the model currently sees it; costs are added to the session.

    `before_uuid`: send only the wire messages before the one built from that history entry (when
    what comes before it ends with a user message), e.g. only what the last main request sent, so
    the fork reads that whole request from the cache and writes nothing but the question.
    `projection`: the dry run of the view the caller already made for it (else it is made here).
    """
    if projection is None:
        projection = session.projector.project(session.messages, dry_run=True)
    wire = projection.wire
    if before_uuid is not None:
        cut = next((i for i, sources in enumerate(projection.wire_sources) if before_uuid in sources), None)
        if cut and wire[cut - 1]["role"] == "user":
            wire = wire[:cut]
    # Rewritten messages change the prefix of every thinking block after them: none may go.
    wire = without_thinking(transform(wire)) if transform else wire
    body = build_request(
        model=session.model,
        max_tokens=max_tokens,
        system=session.system_prompt,
        tools=session.request_tools(projection.loaded_tools),
        messages=append_question(wire, question),
        extra=projection.body_extras,
    )
    response: ModelResponse | None = None
    async for item in session.client.stream(body):
        if isinstance(item, ModelResponse):
            response = item
    assert response is not None, "the stream ended without a final message"
    session.add_usage(response.usage, response.model)
    return response
