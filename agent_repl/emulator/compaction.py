"""On-demand compaction (beta `compact-2026-09-04`, top-level `compaction: {"type": "summarize"}`).

The server summarizes the whole request (with the summarizer it was given) and answers with one
signed `compaction` block and `stop_reason: "compaction"`; nothing is sampled after it. A later
request sends that block first in `messages`, in place of the messages it summarized. The
signature records the prefix chain after those messages, so thinking in turns kept after the
block stays valid when every condition of the docs holds (see `thinking_binding`).
"""

from __future__ import annotations

from typing import Any

from agent_repl.emulator.blocks import Block
from agent_repl.emulator.models import ModelSpec
from agent_repl.emulator.policies.summary import Summarizer
from agent_repl.emulator.request_error import EmulatorRequestError
from agent_repl.emulator.signatures import compaction_signature
from agent_repl.emulator.thinking_binding import BindingState

ON_DEMAND_COMPACTION_BETA = "compact-2026-09-04"


def compaction_requested(body: dict[str, Any]) -> bool:
    return body.get("compaction") is not None


def check_compaction_request(body: dict[str, Any], spec: ModelSpec, betas: frozenset[str]) -> None:
    config = body.get("compaction")
    if config is None:
        return
    if ON_DEMAND_COMPACTION_BETA not in betas:
        raise EmulatorRequestError(
            f"compaction: requires the `{ON_DEMAND_COMPACTION_BETA}` value in the `anthropic-beta` header"
        )
    if not isinstance(config, dict) or config.get("type") != "summarize":
        raise EmulatorRequestError("compaction.type: Input should be 'summarize'")
    if "context_management" in body:
        raise EmulatorRequestError("compaction: cannot be combined with `context_management`")
    if not spec.on_demand_compaction:
        raise EmulatorRequestError(f"compaction: on-demand compaction is not supported for {spec.id}")
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    first = messages[0].get("content") if messages else None
    leading = isinstance(first, list) and bool(first) and all(
        isinstance(b, dict) and b.get("type") == "compaction" for b in first
    )
    if len(messages) - (1 if leading else 0) < 1:
        raise EmulatorRequestError("compaction: there is nothing to summarize after the last compaction block")


def compaction_block(
    visible_body: dict[str, Any],
    spec: ModelSpec,
    binding: BindingState,
    instructions: str | None,
    summarizer: Summarizer,
) -> Block:
    """The signed summary of everything the request holds, written by `summarizer`."""
    content = summarizer.compaction(visible_body, instructions)
    signature = compaction_signature(spec.id, content, binding.chain.state, preserved=spec.preserved_thinking)
    return {"type": "compaction", "content": content, "signature": signature}
