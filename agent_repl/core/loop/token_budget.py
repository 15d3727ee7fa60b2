"""The output token budget of a turn: the loop's `token_budget_continuation` transition.

A prompt can give the turn a budget of output tokens ("+500k", "use 2M tokens"), or
`--max-output-budget` gives every turn one. When the model would end the turn, it is sent back
with a meta nudge saying how much of the budget it has used while its output is under 90% of
the budget, unless it is running dry: after 3 or more continuations, two in a row that each
added under 500 tokens stop it (diminishing returns).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

CONTINUE_BELOW_SHARE = 0.9
DIMINISHING_AFTER_CONTINUATIONS = 3
DIMINISHING_DELTA_TOKENS = 500

_UNITS = {"k": 1_000, "m": 1_000_000}
_SHORTHAND = re.compile(r"(?:^|\s)\+(\d+(?:\.\d+)?)([km])(?=\s|$|[.,!?])", re.IGNORECASE)
_SPOKEN = re.compile(r"\b(?:use|spend)\s+(\d+(?:\.\d+)?)\s*([km])?\s+tokens?\b", re.IGNORECASE)


def parse_budget(prompt: str) -> int | None:
    """The output budget a prompt asks for, in tokens, or None."""
    for pattern in (_SHORTHAND, _SPOKEN):
        match = pattern.search(prompt)
        if match:
            number, unit = match.group(1), (match.group(2) or "").lower()
            tokens = round(float(number) * _UNITS.get(unit, 1))
            if tokens > 0:
                return tokens
    return None


def budget_nudge(used: int, budget: int) -> str:
    return (
        f"Output token budget: {used:,} of {budget:,} tokens used ({percent(used, budget)}%). "
        "Keep working on the task from where you stopped; do not summarize or wrap up until it is done."
    )


def percent(used: int, budget: int) -> int:
    return used * 100 // budget


@dataclass
class BudgetContinue:
    nudge: str
    used: int
    continuation: int


@dataclass
class Stop:
    # "budget": the output reached 90% of the budget; "diminishing": the model was running dry.
    reason: str
    used: int


@dataclass
class TokenBudget:
    budget: int
    continuations: int = 0
    # Output tokens of the turn when the model last wanted to stop, and what each continuation added.
    checked_at: int = 0
    deltas: list[int] = field(default_factory=list)

    def check(self, used: int) -> BudgetContinue | Stop:
        """The model wants to end the turn having written `used` output tokens in it so far."""
        if self.continuations:
            self.deltas.append(used - self.checked_at)
        self.checked_at = used
        recent = self.deltas[-2:]
        if (
            self.continuations >= DIMINISHING_AFTER_CONTINUATIONS
            and len(recent) == 2
            and all(delta < DIMINISHING_DELTA_TOKENS for delta in recent)
        ):
            return Stop("diminishing", used)
        if used < CONTINUE_BELOW_SHARE * self.budget:
            self.continuations += 1
            return BudgetContinue(budget_nudge(used, self.budget), used, self.continuations)
        return Stop("budget", used)
