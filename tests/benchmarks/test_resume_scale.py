"""benchmarks/resume_scale.py measures the code as installed: compiled to bytecode before any run."""

from __future__ import annotations

from pathlib import Path

from benchmarks.resume_scale import _compile


def test_the_measured_code_is_compiled_before_it_runs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    package = tmp_path / "agent_repl"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "module.py").write_text("VALUE = 1\n")

    _compile(tmp_path)

    compiled = sorted(p.name.split(".")[0] for p in (package / "__pycache__").glob("*.pyc"))
    assert compiled == ["__init__", "module"]


def test_the_peak_is_the_childs_own_not_this_process(tmp_path: Path) -> None:
    """A child forked from a big process reports that process's memory in ru_maxrss; the figure
    must be the child's own high-water mark."""
    import subprocess
    import sys

    from benchmarks.resume_scale import _wait

    ballast = bytearray(200 * 1024 * 1024)  # this process: at least 200 MB resident
    ballast[::4096] = b"x" * len(ballast[::4096])
    code = "import time; block = bytearray(40 * 1024 * 1024); block[::4096] = b'y' * len(block[::4096]); time.sleep(0.3)"
    child = subprocess.Popen([sys.executable, "-c", code])
    status, peak_mb, _ = _wait(child)
    del ballast
    assert status == 0
    assert 40 <= peak_mb < 150


def test_a_child_whose_output_is_read_still_has_its_peak_measured() -> None:
    import subprocess
    import sys

    from benchmarks.resume_scale import _wait_reading

    code = "import time; block = bytearray(40 * 1024 * 1024); block[::4096] = b'y' * len(block[::4096]); print('SHOWN 1 2', flush=True); time.sleep(0.3)"
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    status, peak_mb, _, lines = _wait_reading(child)
    assert status == 0
    assert lines == ["SHOWN 1 2\n"]
    assert peak_mb >= 40
