"""Needles: unique facts the user states early in a session and asks about at its end.

`plant_needles` gives a trajectory a few such facts (one typed user message each, in its first
turns: all in the first when it has fewer) and a last turn whose user message asks for them. The
values are drawn with a generator seeded by the trajectory's name, so every run of a trajectory
plants the same ones. The retention measure looks for each value in the view after each
compaction and in the request the question goes out in.
"""

from __future__ import annotations

import hashlib
import random

from benchmarks.replay.trajectory import Step, Trajectory, Turn, UserText

NEEDLE_COUNT = 3
_WORDS = (
    "ZEBRA", "OTTER", "HERON", "MAPLE", "COBALT", "JUNIPER", "QUARTZ", "FALCON", "TUNDRA", "SAFFRON",
    "WALRUS", "PEWTER", "LOTUS", "MARLIN", "ONYX", "BISON",
)
# What each fact is about, and how the user says it (the value goes in `{}`).
_FACTS = (
    ("the deploy token name", "Before you go on, remember this: the deploy token name is {}. I will ask for it later."),
    ("the staging cluster", "Please keep in mind that the staging cluster is called {}; I will need it at the end."),
    ("the reviewer's handle", "Note for later: the reviewer's handle for this change is {}."),
    ("the feature flag", "Remember that the feature flag guarding this work is {}, I'll come back to it."),
)
QUESTION = "One last thing before we stop: what were {} that I asked you to remember?"
ANSWER = "(The recorded session has no answer to this question; the replay only measures what the request held.)"


def needle_values(name: str, count: int = NEEDLE_COUNT) -> list[str]:
    """`count` distinct values for `name`'s trajectory, the same every time."""
    rng = random.Random(hashlib.sha256(f"needles/{name}".encode()).digest())
    words = rng.sample(_WORDS, count)
    return [f"{word}-{rng.randint(1000, 9999)}" for word in words]


def plant_needles(trajectory: Trajectory, count: int = NEEDLE_COUNT) -> Trajectory:
    """A copy of `trajectory` with `count` facts stated in its first turns and a last turn asking for them."""
    planted = trajectory.model_copy(deep=True)
    values = needle_values(trajectory.name, count)
    facts = [_FACTS[i % len(_FACTS)] for i in range(count)]
    for index, (value, (_, sentence)) in enumerate(zip(values, facts, strict=True)):
        turn = planted.turns[min(index, len(planted.turns) - 1)]
        # Before the turn's prompt: the harness sends the earlier user texts first.
        turn.user.insert(max(0, len(turn.user) - 1), UserText(text=sentence.format(value)))
    subjects = ", ".join(subject for subject, _ in facts[:-1]) + f" and {facts[-1][0]}" if count > 1 else facts[0][0]
    planted.turns.append(Turn(user=[UserText(text=QUESTION.format(subjects))], steps=[Step(text=ANSWER)]))
    planted.needles = values
    return planted
