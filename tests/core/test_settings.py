import json

import pytest

from agent_repl.core.config.settings import DEFAULT_MODEL, SettingsError, load_settings


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))


def test_defaults_and_environment(tmp_path):
    home = tmp_path / "home"
    s = load_settings(cwd=tmp_path, env={"AGENT_REPL_HOME": str(home)})
    assert s.home == home and s.model == DEFAULT_MODEL and s.api_key is None
    s = load_settings(
        cwd=tmp_path,
        env={
            "AGENT_REPL_HOME": str(home),
            "ANTHROPIC_API_KEY": "sk-test",
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
            "ANTHROPIC_MODEL": "claude-haiku-4-5",
            "AGENT_REPL_CONTEXT_WINDOW": "60000",
        },
    )
    assert (s.api_key, s.base_url, s.model, s.context_window) == ("sk-test", "http://127.0.0.1:9", "claude-haiku-4-5", 60000)
    assert "sk-test" not in s.model_dump_json()


def test_project_file_wins_and_rules_add_up(tmp_path):
    home = tmp_path / "home"
    write(home / "settings.json", {"model": "claude-opus-4-5", "permissions": {"allow": ["Bash(ls:*)"]}})
    write(tmp_path / ".agent_repl" / "settings.json", {"model": "claude-haiku-4-5", "permissions": {"deny": ["Bash(rm:*)"]}})
    s = load_settings(cwd=tmp_path, env={"AGENT_REPL_HOME": str(home)}, trusted=True)
    assert s.model == "claude-haiku-4-5"
    assert s.permissions.allow == ["Bash(ls:*)"] and s.permissions.deny == ["Bash(rm:*)"]
    # Untrusted, only its deny rules apply; the model waits for trust with the value it would take.
    untrusted = load_settings(cwd=tmp_path, env={"AGENT_REPL_HOME": str(home)})
    assert untrusted.model == "claude-opus-4-5" and untrusted.held_back == {"model": "claude-haiku-4-5"}
    assert untrusted.permissions.deny == ["Bash(rm:*)"]


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ({"modle": "x"}, "unknown setting(s) modle"),
        ({"max_output_tokens": "many"}, "max_output_tokens"),
        ({"permissions": {"allow": "Bash"}}, "permissions.allow"),
    ],
)
def test_broken_settings_file_is_reported_with_its_path(tmp_path, content, message):
    home = tmp_path / "home"
    write(home / "settings.json", content)
    with pytest.raises(SettingsError) as info:
        load_settings(cwd=tmp_path, env={"AGENT_REPL_HOME": str(home)})
    assert str(home / "settings.json") in str(info.value)
    assert message in str(info.value)


def test_bad_context_window_env_is_reported(tmp_path):
    with pytest.raises(SettingsError, match="AGENT_REPL_CONTEXT_WINDOW"):
        load_settings(cwd=tmp_path, env={"AGENT_REPL_HOME": str(tmp_path), "AGENT_REPL_CONTEXT_WINDOW": "lots"})
