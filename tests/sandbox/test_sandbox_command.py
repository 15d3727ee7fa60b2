"""/sandbox: the report and the session changes it makes."""

from __future__ import annotations

from types import SimpleNamespace

from agent_repl.commands.results import StatusReport, TextOutput
from agent_repl.commands.sandbox import sandbox_command

from .conftest import Layout, make_sandbox


def ctx_for(sandbox: object) -> SimpleNamespace:
    return SimpleNamespace(session=SimpleNamespace(sandbox=sandbox))


async def test_the_report_names_mechanism_writes_hidden_paths_and_ports(layout: Layout) -> None:
    sandbox = make_sandbox(layout, allow_ports=[443])
    report = await sandbox_command(ctx_for(sandbox), "")  # type: ignore[arg-type]
    assert isinstance(report, StatusReport)
    rows = dict(report.rows)
    assert rows["sandbox"] == sandbox.status_line()
    assert str(layout.project) in rows["writes"] and str(layout.temp) in rows["writes"]
    assert str(layout.home / ".ssh") in rows["reads"]
    if sandbox.system.filters_network:
        assert "443" in rows["network"] and "any host" in rows["network"]


async def test_modes_and_ports_change_for_the_session(layout: Layout) -> None:
    sandbox = make_sandbox(layout)
    said = await sandbox_command(ctx_for(sandbox), "auto")  # type: ignore[arg-type]
    assert isinstance(said, TextOutput) and sandbox.settings.auto_allow == sandbox.system.active
    await sandbox_command(ctx_for(sandbox), "ask")  # type: ignore[arg-type]
    assert not sandbox.settings.auto_allow
    await sandbox_command(ctx_for(sandbox), "allow-port 8080")  # type: ignore[arg-type]
    assert sandbox.policy.allow_ports == (8080,) and sandbox.settings.allow_ports == [8080]
    await sandbox_command(ctx_for(sandbox), "deny-port 8080")  # type: ignore[arg-type]
    assert sandbox.policy.allow_ports == ()
    await sandbox_command(ctx_for(sandbox), "off")  # type: ignore[arg-type]
    assert not sandbox.active


async def test_bad_input_gets_a_clear_error_and_changes_nothing(layout: Layout) -> None:
    sandbox = make_sandbox(layout)
    for bad in ("allow-port https", "allow-port 70000", "sideways"):
        said = await sandbox_command(ctx_for(sandbox), bad)  # type: ignore[arg-type]
        assert isinstance(said, TextOutput) and said.level == "error", bad
    assert sandbox.settings.allow_ports == [] and sandbox.settings.enabled
