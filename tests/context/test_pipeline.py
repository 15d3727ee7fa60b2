"""The flowchart: its order, and the two checks at its end that return the loop's actions."""

from __future__ import annotations

from agent_repl.context.autocompact import Autocompact
from agent_repl.context.blocking import BlockingLimit
from agent_repl.context.pipeline import context_pipeline, flowchart
from agent_repl.context.state import PipelineConfig, PipelineState
from agent_repl.context.thresholds import autocompact_threshold, blocking_limit
from agent_repl.core.loop.projection import Block, Compact
from agent_repl.core.model.messages import AssistantMessage, TextBlock, UserMessage


def state(**config: object) -> PipelineState:
    settings = PipelineConfig(**config)  # type: ignore[arg-type]
    settings.set_window(200_000)
    return PipelineState(config=settings)


def test_the_steps_run_in_the_seeds_order(tmp_path):
    names = [step.name for step in flowchart(tmp_path)]
    assert names == ["boundary", "budget", "snip", "microcompact", "collapse", "autocompact", "blocking limit"]


def test_autocompact_asks_for_a_compaction_from_its_threshold_only_while_it_is_on():
    on = state(autocompact_on=True)
    threshold = autocompact_threshold(on.config.effective_window)
    assert Autocompact().check(threshold - 1, on) is None
    assert Autocompact().check(threshold, on) == Compact("auto")
    assert Autocompact().check(threshold, state(autocompact_on=False)) is None


def test_the_blocking_check_refuses_only_with_autocompact_off_and_nothing_freed_unseen():
    off = state(autocompact_on=False)
    limit = blocking_limit(off.config.effective_window)
    assert BlockingLimit().check(limit - 1, off) is None
    blocked = BlockingLimit().check(limit + 500, off)
    assert isinstance(blocked, Block) and f"{limit + 500:,} tokens" in blocked.message and f"{limit:,}" in blocked.message
    assert BlockingLimit().check(limit, state(autocompact_on=True)) is None
    assert BlockingLimit().check(limit, state(autocompact_on=False, strategy="collapse")) is None
    off.snip.tokens_freed_since_usage = 1
    assert BlockingLimit().check(limit, off) is None


def test_the_projection_carries_the_first_action_a_check_asks_for(tmp_path):
    config = PipelineConfig(autocompact_on=True)
    config.set_window(50_000)
    pipeline = context_pipeline(config, tmp_path / "results")
    history = [UserMessage(content="hello"), AssistantMessage(message_id="m1", content=[TextBlock(text="hi")])]
    assert pipeline.project(history, dry_run=True).action is None
    big = [*history, UserMessage(content="word " * 60_000)]
    assert pipeline.project(big, dry_run=True).action == Compact("auto")
    config.autocompact_on = False  # as when the breaker opens: the blocking limit takes over
    assert isinstance(pipeline.project(big, dry_run=True).action, Block)
