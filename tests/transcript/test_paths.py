from pathlib import Path

from agent_repl.transcript.paths import SessionPaths, project_slug, resolve_home


def test_layout_matches_claude_code(tmp_path):
    paths = SessionPaths(home=tmp_path, cwd=Path("/home/ann/my-proj"), session_id="abc-123")
    assert paths.project_dir == tmp_path / "projects" / "-home-ann-my-proj"
    assert paths.transcript == tmp_path / "projects" / "-home-ann-my-proj" / "abc-123.jsonl"
    assert paths.tool_results_dir == tmp_path / "projects" / "-home-ann-my-proj" / "abc-123" / "tool-results"


def test_home_comes_from_the_value_passed_in(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_REPL_HOME", "/should/not/be/read")
    assert resolve_home(str(tmp_path)) == tmp_path
    assert resolve_home(None) == Path.home() / ".agent_repl"
    assert resolve_home("") == Path.home() / ".agent_repl"


def test_slug_replaces_every_separator():
    assert project_slug("/Users/x/proj") == "-Users-x-proj"
    assert project_slug("C:\\work\\proj") == "C--work-proj"


def test_nothing_is_created_until_asked(tmp_path):
    paths = SessionPaths(home=tmp_path / "home", cwd=Path("/p"), session_id="s1")
    assert not (tmp_path / "home").exists()
    paths.ensure_project_dir()
    assert paths.project_dir.is_dir() and not paths.session_dir.exists()
