"""The summary conditions: who writes the summaries both agents receive.

The replay benchmark's summarizers (`benchmarks/replay/summarizers.py`): `realistic` (the
acceptance condition: the size of a real Claude Code summary) and `lossy` (the same size, nothing
verbatim). Claude Code's summary requests reach them with the appended instruction removed
(`policy.without_instruction`), so they summarize the same conversation for both agents.
"""

from __future__ import annotations

from agent_repl.emulator.policies.summary import Summarizer
from benchmarks.replay import summarizers

CONDITIONS = ("realistic", "lossy")
SOURCE = "`benchmarks/replay/summarizers.py`"


def summarizer_for(condition: str) -> Summarizer:
    if condition not in CONDITIONS:
        raise ValueError(f"unknown summary condition {condition!r}: one of {', '.join(CONDITIONS)}")
    return summarizers.summarizer_for(condition)
