"""Cache-miss diagnostics (§4.8, beta `cache-diagnosis-2026-04-07`).

The engine remembers, per response message id, the prefix hashes of the prompt that produced
it. A later request naming that id as `diagnostics.previous_message_id` is compared with it and
the first divergence is classified as model/tools/system/messages changed.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from agent_repl.emulator.prompt import PromptView

CACHE_DIAGNOSIS_BETA = "cache-diagnosis-2026-04-07"


@dataclass(frozen=True)
class PromptRecord:
    api_key: str
    model_id: str
    view: PromptView


def diagnose(previous: PromptRecord | None, current: PromptRecord) -> dict[str, Any] | None:
    """The `diagnostics` object for `current` compared with `previous` (None: no divergence)."""
    if previous is None or previous.api_key != current.api_key:
        return {"cache_miss_reason": {"type": "previous_message_not_found"}}
    before, now = previous.view.positions, current.view.positions
    if previous.model_id != current.model_id:
        missed = before[-1].cum_tokens if before else 0
        return {"cache_miss_reason": {"type": "model_changed", "cache_missed_input_tokens": missed}}
    if previous.view.params_digest != current.view.params_digest:
        return {"cache_miss_reason": {"type": "unavailable"}}
    shared = min(len(before), len(now))
    first = next((i for i in range(shared) if before[i].cum_hash != now[i].cum_hash), None)
    if first is None:
        if len(now) >= len(before):
            return None  # the new prompt extends the old one
        first = shared
    kept = before[first - 1].cum_tokens if first > 0 else 0
    section = before[first].section
    return {
        "cache_miss_reason": {
            "type": f"{section}_changed",
            "cache_missed_input_tokens": before[-1].cum_tokens - kept,
        }
    }


class PromptHistory:
    """The most recent prompts by response message id (bounded)."""

    def __init__(self, capacity: int = 512) -> None:
        self._records: OrderedDict[str, PromptRecord] = OrderedDict()
        self._capacity = capacity
        self._lock = threading.Lock()

    def remember(self, message_id: str, record: PromptRecord) -> None:
        with self._lock:
            self._records[message_id] = record
            self._records.move_to_end(message_id)
            while len(self._records) > self._capacity:
                self._records.popitem(last=False)

    def get(self, message_id: str) -> PromptRecord | None:
        with self._lock:
            return self._records.get(message_id)
