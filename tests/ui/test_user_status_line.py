"""The statusLine command in the app, driven in-process: drawn at start, redrawn after a reply."""

from __future__ import annotations

from agent_repl.core.config.settings import StatusLineSettings
from agent_repl.ui.app import AgentApp
from agent_repl.ui.widgets.user_status_line import UserStatusLine

from .conftest import emulator_launcher
from .helpers import wait_for


async def test_the_status_line_command_is_drawn_at_start_and_after_each_reply(emulator, project, home, tmp_path):
    server = emulator([{"text": "Done."}])
    script = tmp_path / "status.py"
    script.write_text(
        "import json, sys\n"
        "d = json.load(sys.stdin)\n"
        "print(f\"STATUS cost={d['cost']['total_cost_usd']} tokens={d['context_window']['used_tokens']}\")\n"
    )
    status = StatusLineSettings(command=f"python3 {script}")
    app = AgentApp(emulator_launcher(server, project, home, status_line=status), animate=False, warm_client=False)
    async with app.run_test(size=(120, 30)) as pilot:
        line = app.query_one(UserStatusLine)
        await wait_for(pilot, lambda: "STATUS cost=0.0" in str(line.render()), what="the first status line")
        assert line.display
        app.prompt.load_text("hello")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "tokens=0" not in str(line.render()) and "STATUS" in str(line.render()), what="a redraw after the reply")
