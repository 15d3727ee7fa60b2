"""Which trajectories the benchmark replays, and where each one comes from.

Real sessions of other agents from `../shared/data` (provenance in its README), plus our own
long explorations of installed packages (`explore.py`). The Claude Code viewer sample is left out
of the benchmark (its main chain has 9 replies; the rest is a sub-agent) but its converter is tested.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.replay.convert_claude_code import convert_claude_code
from benchmarks.replay.convert_mini_swe import load_mini_swe
from benchmarks.replay.convert_swe_agent import load_swe_agent
from benchmarks.replay.explore import EXPLORATIONS, load_or_record
from benchmarks.replay.trajectory import Trajectory

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO.parent / "shared" / "data"
RECORDINGS = Path(__file__).resolve().parent / ".recordings"

MINI_SWE = "SWE-agent/mini-swe-agent"
PHANTOM = "rcgray/claude-code-bug-phantom-reads-17407 @ 96731ef2"


@dataclass(frozen=True)
class Sample:
    name: str
    path: str  # relative to the shared data folder
    load: Callable[..., Trajectory]
    source: str


SAMPLES = (
    Sample(
        "sqlfluff-1733",
        "trajectories/mini_swe_agent/output_deepseek_lite_dev_noparallel_sqlfluff__sqlfluff-1733_sqlfluff__sqlfluff-1733.traj.json",
        load_mini_swe,
        f"mini-swe-agent run ({MINI_SWE} @ ec0e8e84, PR 816)",
    ),
    Sample(
        "astropy-12907",
        "trajectories/mini_swe_agent/eval_example_trajectories_astropy__astropy-12907.traj.json",
        load_mini_swe,
        f"mini-swe-agent run ({MINI_SWE} @ 9c0e0e77, PR 854)",
    ),
    Sample(
        "django-11099",
        "trajectories/mini_swe_agent/output_deepseek_chat_test_1-100_django__django-11099_django__django-11099.traj.json",
        load_mini_swe,
        f"mini-swe-agent run ({MINI_SWE} @ ec0e8e84, PR 816)",
    ),
    Sample(
        "marshmallow-1867",
        "trajectories/swe_agent/marshmallow-1867__function_calling_replace_from_source.traj",
        load_swe_agent,
        "SWE-agent run (SWE-agent/SWE-agent @ 3ea751c0)",
    ),
    Sample(
        "pydicom-1458",
        "trajectories/swe_agent/pydicom__pydicom-1458__gpt4.traj",
        load_swe_agent,
        "SWE-agent run (SWE-agent/SWE-agent @ 3ea751c0)",
    ),
    Sample(
        "cc-wsd-dev",
        "claude_code/phantom_reads/wsd-dev-repeat_2.1.6-bad/504216d1-8285-4ec4-92be-0db8dc92a18a.jsonl",
        convert_claude_code,
        f"Claude Code 2.1.6 session ({PHANTOM})",
    ),
    Sample(
        "cc-session-examples",
        "claude_code/phantom_reads/session-examples_2.0.58-bad/3020c1e3-a661-4879-8854-35eb023fd030.jsonl",
        convert_claude_code,
        f"Claude Code 2.0.58 session ({PHANTOM})",
    ),
    Sample(
        "cc-barebones",
        "claude_code/phantom_reads/barebones-2122_20260128-152044/f28e368b-423a-4989-a7b9-33d64ce6da47.jsonl",
        convert_claude_code,
        f"Claude Code 2.1.22 session ({PHANTOM})",
    ),
)


# Real Claude Code sessions whose gaps the drawn times come from (timeline.py): the three above and
# the viewer sample, whose main chain is short but real.
VIEWER_SAMPLE = Sample(
    "cc-viewer",
    "claude_code/claude_code_viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
    convert_claude_code,
    "Claude Code 1.0.98 session (d-kimuson/claude-code-viewer @ 9367cf00)",
)


def claude_code_samples(shared_data: Path = SHARED_DATA) -> list[Trajectory]:
    chosen = [s for s in SAMPLES if s.load is convert_claude_code] + [VIEWER_SAMPLE]
    return [
        s.load(shared_data / s.path, name=s.name, source=f"{s.source}: {s.path}")
        for s in chosen
        if (shared_data / s.path).is_file()
    ]


def load_samples(shared_data: Path = SHARED_DATA) -> list[Trajectory]:
    """The shared samples that are present (none when `../shared` is not there)."""
    loaded = []
    for sample in SAMPLES:
        path = shared_data / sample.path
        if path.is_file():
            loaded.append(sample.load(path, name=sample.name, source=f"{sample.source}: {sample.path}"))
    return loaded


def load_all(
    *, shared_data: Path = SHARED_DATA, recordings: Path = RECORDINGS, fresh: bool = False, only: list[str] | None = None
) -> list[Trajectory]:
    """Every trajectory, or those named in `only` (only those explorations are recorded when missing)."""
    own = [load_or_record(e, recordings, fresh=fresh) for e in EXPLORATIONS if only is None or e.name in only]
    loaded = [*load_samples(shared_data), *own]
    return loaded if only is None else [t for t in loaded if t.name in only]
