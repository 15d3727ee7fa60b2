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
