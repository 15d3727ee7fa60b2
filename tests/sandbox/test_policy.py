"""The sandbox's policy, its settings (ours and Claude Code's names), macOS's profile and the
words a blocked command gets: pure functions, no kernel needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_repl.core.config.settings import SettingsError, load_settings
from agent_repl.core.sandbox import SandboxPolicy, SandboxSettings, detect
from agent_repl.core.sandbox.outcome import explain, sandbox_refusals
from agent_repl.core.sandbox.policy import readable_grants
from agent_repl.core.sandbox.seatbelt import profile

from .conftest import Layout


def policy_for(layout: Layout, **settings: object) -> SandboxPolicy:
    return SandboxPolicy.build(
        SandboxSettings(**settings), project=layout.project, home=layout.home, agent_home=layout.agent_home,
        temp_dir=layout.temp,
    )  # fmt: skip


def test_writes_stay_in_the_project_the_added_folders_the_temp_dir_and_named_paths(layout: Layout) -> None:
    extra = layout.outside / "cache"
    policy = SandboxPolicy.build(
        SandboxSettings(allow_write=[str(extra)]), project=layout.project, added_dirs=[layout.outside / "lib"],
        home=layout.home, temp_dir=layout.temp,
    )  # fmt: skip
    assert policy.may_write(layout.project / "a" / "b")
    assert policy.may_write(layout.temp / "x") and policy.may_write(extra / "y")
    assert policy.may_write(layout.outside / "lib" / "z")
    assert not policy.may_write(layout.outside / "other")
    assert not policy.may_write(layout.home / ".bashrc")
    assert not policy.may_write(layout.project.parent / "project-evil" / "f")  # a prefix is not a parent
    assert policy.may_write(Path("/dev/null"))


def test_reads_are_refused_only_under_the_secrets_and_the_agents_store(layout: Layout) -> None:
    policy = policy_for(layout, deny_read=["~/notes-private"])
    assert not policy.may_read(layout.home / ".ssh" / "id_ed25519")
    assert not policy.may_read(layout.home / ".aws" / "credentials")
    assert not policy.may_read(layout.agent_home / "projects" / "x.jsonl")
    assert not policy.may_read(layout.home / "notes-private" / "a")
    assert policy.may_read(layout.home / ".bashrc") and policy.may_read(Path("/usr/lib/os-release"))


def test_the_readable_grants_are_the_siblings_of_every_denied_path(layout: Layout) -> None:
    (layout.home / "src").mkdir()
    (layout.home / "link-to-keys").symlink_to(layout.home / ".ssh")
    (layout.home / "link-to-src").symlink_to(layout.home / "src")
    policy = policy_for(layout)
    grants = readable_grants(policy, root=layout.home.parent)
    assert layout.home / ".ssh" not in grants and layout.agent_home not in grants
    assert layout.home not in grants  # it holds secrets, so only its other entries are granted
    assert layout.home / "src" in grants and layout.home / ".bashrc" in grants
    assert layout.home / "link-to-keys" not in grants  # a link into a secret grants nothing
    assert layout.home / "link-to-src" in grants
    assert layout.project in grants and layout.temp in grants


def test_settings_take_claude_codes_names_and_reject_bad_ports() -> None:
    cc = SandboxSettings.model_validate(
        {"enabled": True, "autoAllowBashIfSandboxed": True, "allowUnsandboxedCommands": False,
         "filesystem": {"allowWrite": ["~/.cache"], "denyRead": ["~/secret"]}}
    )  # fmt: skip
    assert cc.auto_allow and not cc.allow_unsandboxed
    assert cc.allow_write == ["~/.cache"] and cc.deny_read == ["~/secret"]
    with pytest.raises(ValueError, match="not a TCP port"):
        SandboxSettings(allow_ports=[70000])
    with pytest.raises(ValueError, match="unknown key"):
        SandboxSettings.model_validate({"filesystem": {"allowEverything": True}})


def test_a_settings_file_sets_the_sandbox_and_a_bad_one_names_the_field(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    cwd.mkdir()
    (home / "settings.json").write_text('{"sandbox": {"auto_allow": true, "allow_ports": [443]}}')
    settings = load_settings(cwd=cwd, env={"AGENT_REPL_HOME": str(home)})
    assert settings.sandbox.auto_allow and settings.sandbox.allow_ports == [443] and settings.sandbox.enabled
    (home / "settings.json").write_text('{"sandbox": {"allow_ports": ["https"]}}')
    with pytest.raises(SettingsError, match=r"settings.json: sandbox.allow_ports"):
        load_settings(cwd=cwd, env={"AGENT_REPL_HOME": str(home)})


def test_the_macos_profile_confines_writes_reads_and_tcp_to_the_policy(layout: Layout) -> None:
    text = profile(policy_for(layout, allow_ports=[443]))
    assert text.startswith("(version 1)\n(allow default)")
    assert f'(subpath "{layout.project}")' in text and f'(subpath "{layout.temp}")' in text
    assert "(deny file-write* (require-not" in text
    assert f'(subpath "{layout.home / ".ssh"}")' in text and "(deny file-read*" in text
    assert '(deny network-outbound (remote tcp "*:*"))' in text
    assert '(allow network-outbound (remote tcp "*:443"))' in text


def test_a_quote_in_a_path_cannot_break_out_of_the_profile(tmp_path: Path) -> None:
    odd = tmp_path / 'we"ird) (allow file-write* (subpath "/'
    odd.mkdir(parents=True)
    text = profile(SandboxPolicy.build(SandboxSettings(), project=odd, home=tmp_path, temp_dir=tmp_path))
    assert '(subpath "' + str(odd).replace('"', '\\"') + '")' in text


def test_blocked_commands_are_explained_and_other_failures_are_not(layout: Layout) -> None:
    policy = policy_for(layout, allow_ports=[443])
    out = f"touch: cannot touch '{layout.outside}/x': Permission denied"
    assert sandbox_refusals(out, policy) == [f"write to {layout.outside}/x outside the project and the folders the sandbox may write"]
    out = f"cat: {layout.home}/.ssh/id_ed25519: Permission denied"
    assert sandbox_refusals(out, policy) == [f"read of {layout.home}/.ssh/id_ed25519 (a private path the sandbox hides)"]
    out = "nc: connect to 127.0.0.1 port 22 (tcp) failed: Permission denied"
    assert sandbox_refusals(out, policy) == ["a TCP connection (allowed ports: 443)"]
    # A project file that is merely read-only, or a test failure, is not the sandbox's doing.
    assert explain(f"bash: {layout.project}/ro.txt: Permission denied", 1, policy) is None
    assert explain("AssertionError: expected 2", 1, policy) is None
    assert explain(out, 0, policy) is None


def test_detection_names_the_mechanism_or_says_why_not() -> None:
    assert not detect("Windows").active and "Windows" in detect("Windows").reason
    status = detect()
    assert status.active == (status.mechanism != "none")
    assert status.line.startswith("on (") if status.active else status.line.startswith("off: ")


def test_where_no_sandbox_exists_one_notice_says_so_and_commands_are_not_confined(layout: Layout) -> None:
    from agent_repl.core.sandbox import Sandbox

    settings = SandboxSettings()
    sandbox = Sandbox(settings, policy_for(layout), system=detect("Windows"))
    assert not sandbox.active and not sandbox.auto_allow
    assert sandbox.notice() == "Commands run without an OS sandbox: no sandbox is available on Windows."
    assert sandbox.status_line().startswith("off: no sandbox is available")
    assert Sandbox(SandboxSettings(enabled=False), policy_for(layout), system=detect("Windows")).notice() is None


def test_an_untrusted_folder_cannot_loosen_the_sandbox(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "project"
    (cwd / ".agent_repl").mkdir(parents=True)
    home.mkdir()
    loosen = {"sandbox": {"enabled": False, "auto_allow": True, "allow_write": ["/"], "allow_ports": [22]}}
    (cwd / ".agent_repl" / "settings.json").write_text(json.dumps(loosen))
    untrusted = load_settings(cwd=cwd, env={"AGENT_REPL_HOME": str(home)}, trusted=False)
    assert untrusted.sandbox == SandboxSettings()
    trusted = load_settings(cwd=cwd, env={"AGENT_REPL_HOME": str(home)}, trusted=True)
    assert not trusted.sandbox.enabled and trusted.sandbox.allow_ports == [22]
