"""The install a newcomer runs: `make run` installs what running needs, `make test` the rest, and the
package metadata is the kind setuptools does not warn about."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _planned(target: str, tmp_path: Path) -> str:
    """What `make TARGET` would run on a fresh clone (make -n: nothing is executed)."""
    venv = tmp_path / "venv"
    done = subprocess.run(
        ["make", "-n", "-B", target, f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_run_installs_only_the_emulator_extra_and_make_test_the_dev_tools(tmp_path: Path):
    # The offline demo model needs the emulator's server; the test and benchmark tools stay out of `make run`.
    run = _planned("run", tmp_path)
    assert "pip install" in run and "-e '.[emulator]'" in run
    assert "[dev]" not in run
    assert "[dev]" in _planned("test", tmp_path)


def test_the_license_is_an_spdx_string_and_setuptools_new_enough_for_it():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["license"] == "MIT"
    assert "setuptools>=77" in project["build-system"]["requires"]
