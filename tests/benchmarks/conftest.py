"""The replay benchmark lives in `benchmarks/` (not an installed package): make it importable."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

FIXTURES = REPO / "tests" / "fixtures" / "replay"
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    if not (SHARED_DATA / "trajectories").is_dir():
        pytest.skip(f"the shared samples are not here ({SHARED_DATA}); the committed fixtures cover the converters")
    return SHARED_DATA
