"""Prompt-cache simulation through the engine (§4.2-4.7 of the API reference)."""

from __future__ import annotations

from typing import Any

from agent_repl.core.model.tokens import NEW_TOKENIZER_RATIO
from agent_repl.emulator.engine import Engine, Prepared
from agent_repl.emulator.models import default_model_table
from agent_repl.emulator.policies import CallablePolicy, Reply
from agent_repl.emulator.tokens import TokenCounter

MODEL = "claude-sonnet-5-5"  # 512-token minimum
EPHEMERAL = {"type": "ephemeral"}
ONE_HOUR = {"type": "ephemeral", "ttl": "1h"}


class FakeClock:
    def __init__(self, now: float = 10_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def make_engine(clock: FakeClock) -> Engine:
    return Engine(
        default_model_table(), CallablePolicy(lambda r: Reply([{"type": "text", "text": "ok"}])), clock=clock
    )


def para(i: int, words: int = 60) -> str:
    return f"Paragraph {i}: " + " ".join(f"word{i}x{j}" for j in range(words))


def tokens(text: str) -> int:
    return TokenCounter(default_model_table()[MODEL].token_factor).count_text(text)


def body(
    messages: list[dict[str, Any]], system: list[dict[str, Any]] | None = None, **extra: Any
) -> dict[str, Any]:
    request: dict[str, Any] = {"model": MODEL, "max_tokens": 64, "messages": messages, **extra}
    if system is not None:
        request["system"] = system
    return request


def finish(engine: Engine, prepared: Prepared) -> Prepared:
    completion = engine.respond(prepared)
    engine.commit(prepared)
    engine.completed(prepared, completion)
    return prepared


def send(engine: Engine, request: dict[str, Any], key: str = "key-a") -> Prepared:
    return finish(engine, engine.prepare(request, api_key=key, betas=set(), request_index=0))


def cache_numbers(prepared: Prepared) -> tuple[int, int, int, int, int]:
    u = prepared.usage
    c = u["cache_creation"]
    return (
        u["input_tokens"],
        u["cache_read_input_tokens"],
        u["cache_creation_input_tokens"],
        c["ephemeral_5m_input_tokens"],
        c["ephemeral_1h_input_tokens"],
    )


def conversation(texts: list[str], marker_on_last: dict[str, Any] | None = EPHEMERAL) -> list[dict[str, Any]]:
    messages = []
    for i, text in enumerate(texts):
        block: dict[str, Any] = {"type": "text", "text": text}
        if marker_on_last is not None and i == len(texts) - 1:
            block["cache_control"] = marker_on_last
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": [block]})
    return messages


SYSTEM: list[dict[str, Any]] = [{"type": "text", "text": para(999, 400), "cache_control": EPHEMERAL}]


def test_identical_request_reads_whole_prefix_and_writes_nothing() -> None:
    engine = make_engine(FakeClock())
    request = body(conversation([para(1), para(2), para(3)]), SYSTEM)
    first = send(engine, request)
    total = first.total_input_tokens
    assert cache_numbers(first) == (0, 0, total, total, 0)
    second = send(engine, request)
    assert cache_numbers(second) == (0, total, 0, 0, 0)


def test_changing_an_early_message_misses_from_that_point() -> None:
    engine = make_engine(FakeClock())
    send(engine, body(conversation([para(1), para(2), para(3)]), SYSTEM))
    changed = send(engine, body(conversation([para(1) + " (edited)", para(2), para(3)]), SYSTEM))
    system_tokens = tokens(SYSTEM[0]["text"])
    assert changed.usage["cache_read_input_tokens"] == system_tokens
    assert changed.usage["cache_creation_input_tokens"] == changed.total_input_tokens - system_tokens
    assert changed.usage["input_tokens"] == 0


def test_six_minutes_expire_a_5m_entry_but_not_a_1h_entry() -> None:
    clock = FakeClock()
    engine = make_engine(clock)
    system: list[dict[str, Any]] = [{"type": "text", "text": para(999, 400), "cache_control": ONE_HOUR}]
    request = body(conversation([para(1), para(2)]), system)
    first = send(engine, request)
    system_tokens = tokens(system[0]["text"])
    assert cache_numbers(first) == (
        0,
        0,
        first.total_input_tokens,
        first.total_input_tokens - system_tokens,
        system_tokens,
    )
    clock.advance(6 * 60)
    later = send(engine, request)
    assert later.usage["cache_read_input_tokens"] == system_tokens
    assert (
        later.usage["cache_creation"]["ephemeral_5m_input_tokens"] == later.total_input_tokens - system_tokens
    )
    clock.advance(61 * 60)
    cold = send(engine, request)
    assert cold.usage["cache_read_input_tokens"] == 0


def test_every_hit_refreshes_the_ttl() -> None:
    clock = FakeClock()
    engine = make_engine(clock)
    request = body(conversation([para(1), para(2), para(3)]), SYSTEM)
    total = send(engine, request).total_input_tokens
    clock.advance(4 * 60)
    assert send(engine, request).usage["cache_read_input_tokens"] == total
    clock.advance(4 * 60)  # 8 minutes after the write, 4 after the refreshing hit
    assert send(engine, request).usage["cache_read_input_tokens"] == total


def test_lookback_is_twenty_blocks_per_breakpoint() -> None:
    # §4.4's worked example: an entry at block 15 is missed by a breakpoint at block 35 (which
    # checks 35..16) and found by one at block 34 (which checks 34..15).
    engine = make_engine(FakeClock())
    blocks = [{"type": "text", "text": para(i, 40)} for i in range(36)]

    def request(last: int) -> dict[str, Any]:
        content: list[dict[str, Any]] = [dict(b) for b in blocks[: last + 1]]
        content[last]["cache_control"] = EPHEMERAL
        return body([{"role": "user", "content": content}])

    written = send(engine, request(15))
    assert written.usage["cache_creation_input_tokens"] == written.total_input_tokens >= 512
    far = engine.prepare(request(35), api_key="key-a", betas=set(), request_index=1)
    assert far.usage["cache_read_input_tokens"] == 0
    near = engine.prepare(request(34), api_key="key-a", betas=set(), request_index=2)
    assert near.usage["cache_read_input_tokens"] == written.total_input_tokens


def test_prompt_under_the_model_minimum_is_not_cached() -> None:
    engine = make_engine(FakeClock())
    request = body(conversation(["short question"]))
    for _ in range(2):
        prepared = send(engine, request)
        assert prepared.total_input_tokens < 512
        assert cache_numbers(prepared) == (prepared.total_input_tokens, 0, 0, 0, 0)
    assert engine.cache.entry_count() == 0


def test_mixed_ttl_split_follows_a_b_c() -> None:
    engine = make_engine(FakeClock())
    system: list[dict[str, Any]] = [{"type": "text", "text": para(999, 400), "cache_control": ONE_HOUR}]
    texts = [para(1), para(2), para(3)]
    messages = conversation(texts, marker_on_last=None)
    messages[1]["content"][0]["cache_control"] = EPHEMERAL  # C: the last breakpoint
    first = send(engine, body(messages, system))
    s, m0, m1, m2 = (tokens(t) for t in [system[0]["text"], *texts])
    # No hit: 1h = B - 0 (the system), 5m = C - B, input = what follows C.
    assert cache_numbers(first) == (m2, 0, s + m0 + m1, m0 + m1, s)
    # Next turn: A = the old C; no 1h breakpoint after A, so everything new is 5m.
    more = conversation([*texts, para(4), para(5)], marker_on_last=EPHEMERAL)
    more[1]["content"][0]["cache_control"] = EPHEMERAL
    second = send(engine, body(more, system))
    m3, m4 = tokens(para(4)), tokens(para(5))
    assert cache_numbers(second) == (0, s + m0 + m1, m2 + m3 + m4, m2 + m3 + m4, 0)
    assert sum(cache_numbers(second)[:3]) == second.total_input_tokens


def test_entries_are_invisible_until_commit() -> None:
    engine = make_engine(FakeClock())
    request = body(conversation([para(1), para(2), para(3)]), SYSTEM)
    pending = engine.prepare(request, api_key="key-a", betas=set(), request_index=0)
    concurrent = engine.prepare(request, api_key="key-a", betas=set(), request_index=1)
    assert concurrent.usage["cache_read_input_tokens"] == 0
    assert concurrent.usage["cache_creation_input_tokens"] == concurrent.total_input_tokens
    finish(engine, pending)
    after = engine.prepare(request, api_key="key-a", betas=set(), request_index=2)
    assert after.usage["cache_read_input_tokens"] == after.total_input_tokens


def test_caches_are_isolated_per_api_key() -> None:
    engine = make_engine(FakeClock())
    request = body(conversation([para(1), para(2), para(3)]), SYSTEM)
    send(engine, request, key="key-a")
    assert send(engine, request, key="key-b").usage["cache_read_input_tokens"] == 0
    assert send(engine, request, key="key-a").usage["cache_read_input_tokens"] > 0


def test_automatic_breakpoint_lands_on_the_last_cacheable_block() -> None:
    engine = make_engine(FakeClock())
    messages = conversation([para(1), para(2), para(3)], marker_on_last=None)
    request = body(messages, [{"type": "text", "text": para(999, 400)}], cache_control=EPHEMERAL)
    first = send(engine, request)
    assert first.usage["cache_creation_input_tokens"] == first.total_input_tokens
    assert send(engine, request).usage["cache_read_input_tokens"] == first.total_input_tokens


def test_tool_choice_change_keeps_tools_and_system_but_misses_messages() -> None:
    engine = make_engine(FakeClock())
    tools = [{"name": "Bash", "description": para(7, 300), "input_schema": {"type": "object"}}]
    system: list[dict[str, Any]] = [{"type": "text", "text": para(999, 400), "cache_control": EPHEMERAL}]
    request = body(conversation([para(1), para(2), para(3)]), system, tools=tools)
    send(engine, request)
    changed = send(engine, {**request, "tool_choice": {"type": "none"}})
    prefix = TokenCounter(NEW_TOKENIZER_RATIO).count_tool(tools[0]) + tokens(system[0]["text"])
    assert changed.usage["cache_read_input_tokens"] == prefix
