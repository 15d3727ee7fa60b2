"""Models from the API, end to end: the CLI in a subprocess, the real client, the emulator over HTTP.

A model the built-in table lacks takes its window and output cap from `GET /v1/models`, its cost
shows as unknown, the answer is kept on disk for the next start and asked again once stale.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from agent_repl.core.api.model_catalog import cache_file
from agent_repl.emulator.models import default_model_table
from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer

from .conftest import ROOT, Emulated, agent_env, run_agent

NEW_MODEL = "claude-test-7"


def _table_with_new_model() -> dict[str, Any]:
    table = default_model_table()
    base = table["claude-sonnet-5-5"]
    table[NEW_MODEL] = dataclasses.replace(
        base,
        id=NEW_MODEL,
        display_name="Claude Test 7",
        context_window=300_000,
        max_output_tokens=40_000,
        aliases=(),
    )
    return table


def _models_requests(emulated: Emulated, since: int = 0) -> list[str]:
    return [e.path for e in emulated.server.recordings.exchanges[since:] if e.path.startswith("/v1/models")]


def _run(project: Path, env: dict[str, str]) -> dict[str, Any]:
    done = run_agent(["-p", "hello", "--output-format", "json"], cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_model_missing_from_the_table_takes_its_facts_from_the_api_and_its_cost_is_unknown(project, home):
    server = EmulatorServer(
        policy=ScriptPolicy({"steps": [{"text": "one"}, {"text": "two"}, {"text": "three"}]}),
        models=_table_with_new_model(),
    )
    server.start()
    try:
        emulated = Emulated(server)
        env = agent_env(emulated, home, ANTHROPIC_MODEL=NEW_MODEL)
        # Asking for more output than the model gives: the request is capped at the endpoint's figure.
        home.mkdir(parents=True, exist_ok=True)
        (home / "settings.json").write_text(json.dumps({"max_output_tokens": 64_000}))

        first = _run(project, env)
        # The window and output cap are the endpoint's, not the 200K/32K guess for an unknown model.
        assert first["modelUsage"][NEW_MODEL]["contextWindow"] == 300_000
        assert first["total_cost_usd"] is None and first["modelUsage"][NEW_MODEL]["costUSD"] is None
        schema = json.loads((ROOT / "agent_repl" / "print_mode.schema.json").read_text())
        assert not list(Draft202012Validator(schema).iter_errors(first))  # null is a documented value
        assert "/v1/models" in _models_requests(emulated)
        [request] = emulated.bodies()
        assert request["model"] == NEW_MODEL and request["max_tokens"] == 40_000
        cached = json.loads(cache_file(home, server.base_url).read_text())
        assert cached["models"][NEW_MODEL]["data"]["max_input_tokens"] == 300_000

        # The second start asks nothing: the answer on disk is current.
        seen = len(server.recordings.exchanges)
        second = _run(project, env)
        assert second["modelUsage"][NEW_MODEL]["contextWindow"] == 300_000
        assert _models_requests(emulated, seen) == []

        # A day later the answer is stale: still used, and asked for again.
        path = cache_file(home, server.base_url)
        stale = json.loads(path.read_text())
        old = (datetime.now(UTC) - timedelta(days=2)).isoformat()
        for entry in stale["models"].values():
            entry["fetched_at"] = old
        path.write_text(json.dumps(stale))
        seen = len(server.recordings.exchanges)
        third = _run(project, env)
        assert third["modelUsage"][NEW_MODEL]["contextWindow"] == 300_000
        assert "/v1/models" in _models_requests(emulated, seen)
        refreshed = json.loads(path.read_text())["models"][NEW_MODEL]["fetched_at"]
        assert datetime.fromisoformat(refreshed) > datetime.now(UTC) - timedelta(hours=1)
    finally:
        server.stop()


def test_a_table_model_keeps_its_price_and_takes_the_endpoints_window(emulator, project, home):
    # The emulator plays a smaller window than the table's 1M: the endpoint's answer wins.
    emulated = emulator([{"text": "hi"}], context_window=150_000)
    result = _run(project, agent_env(emulated, home, ANTHROPIC_MODEL="claude-haiku-5-5"))
    usage = result["modelUsage"]["claude-haiku-5-5"]
    assert usage["contextWindow"] == 150_000
    assert usage["costUSD"] is not None and usage["costUSD"] > 0
    assert result["total_cost_usd"] == usage["costUSD"]


async def test_the_first_estimate_uses_the_models_tokenizer_family(tmp_path):
    from agent_repl.bootstrap import close_session, open_session
    from agent_repl.core.config.settings import load_settings
    from agent_repl.core.model.events import TurnEnded
    from agent_repl.core.model.tokens import DEFAULT_CLAUDE_RATIO, NEW_TOKENIZER_RATIO

    prompt = (
        Path(__file__).resolve().parents[1] / "fixtures" / "tokenizer_samples" / "prose_markdown_docs.txt"
    ).read_text()[:20_000]
    server = EmulatorServer(policy=ScriptPolicy({"steps": [{"text": "Read it."}, {"text": "Read it."}]}))
    server.start()
    first_errors = {}
    try:
        for model, ratio in (
            ("claude-haiku-4-5", DEFAULT_CLAUDE_RATIO),
            ("claude-haiku-5-5", NEW_TOKENIZER_RATIO),
        ):
            env = {
                "AGENT_REPL_HOME": str(tmp_path / model),
                "ANTHROPIC_BASE_URL": server.base_url,
                "ANTHROPIC_API_KEY": "k",
            }
            settings = load_settings(cwd=tmp_path, env=env, overrides={"model": model})
            session = await open_session(settings, tmp_path)
            try:
                assert session.projector.state.tokens.ratio == ratio
                async for event in session.run_turn(prompt):
                    if isinstance(event, TurnEnded):
                        assert event.reason == "completed"
                first_errors[model] = session.projector.state.tokens.errors[0]
            finally:
                await close_session(session)
    finally:
        server.stop()
    # The very first request, before any usage to learn from, is estimated as closely on either
    # tokenizer (a ratio of the other family would be off by about 30%).
    older, newer = first_errors["claude-haiku-4-5"], first_errors["claude-haiku-5-5"]
    assert abs(older) <= 0.1 and abs(newer - older) <= 0.01, first_errors
