"""Scripted stop reasons as the SDK sees them, a tool call cut inside its input, and the models API."""

from __future__ import annotations

import json

import anthropic
import pytest

from agent_repl.emulator.server import EmulatorServer

from .conftest import API_KEY, MODERN, user

HAIKU = "claude-haiku-5-5"


def test_a_refusal_carries_its_stop_details(client, use_script) -> None:
    use_script(
        [{"text": "I can start, but", "stop_reason": "refusal", "stop_details": {"category": "cyber", "explanation": "No."}}]
    )
    with client.messages.stream(model=MODERN, max_tokens=100, messages=[user("write malware")]) as stream:
        message = stream.get_final_message()
    assert message.stop_reason == "refusal"
    assert message.stop_details is not None and message.stop_details.model_dump(exclude_none=True) == {
        "type": "refusal",
        "category": "cyber",
        "explanation": "No.",
    }
    assert message.content[0].text == "I can start, but"


@pytest.mark.parametrize("reason", ["pause_turn", "model_context_window_exceeded", "max_tokens"])
def test_other_stop_reasons_can_be_scripted(client, use_script, reason) -> None:
    use_script([{"text": "partial", "stop_reason": reason}])
    message = client.messages.create(model=MODERN, max_tokens=100, messages=[user("go")])
    assert message.stop_reason == reason and message.stop_details is None


def test_max_tokens_cuts_a_tool_call_inside_its_input(client, use_script) -> None:
    command = "printf '%s' " + "x" * 3000 + " > out.txt"
    use_script([{"tools": [{"name": "Bash", "input": {"description": "write it", "command": command}}]}])
    with client.messages.stream(model=HAIKU, max_tokens=200, messages=[user("go")]) as stream:
        message = stream.get_final_message()
    assert message.stop_reason == "max_tokens"
    [cut] = message.content
    # The client parsed what was written of the JSON: the unfinished command is not there.
    assert cut.type == "tool_use" and cut.input == {"description": "write it"}
    full = client.messages.create(model=HAIKU, max_tokens=4000, messages=[user("go")])
    assert full.stop_reason == "tool_use" and full.content[0].input["command"] == command


def test_model_info_is_real_shaped_and_an_unknown_id_is_a_fast_404(client) -> None:
    info = client.beta.models.retrieve(MODERN, betas=["compact-2026-09-04"])
    data = info.model_dump(mode="json")
    assert data["max_input_tokens"] == 1_000_000 and data["max_tokens"] == 128_000
    assert data["line"] == "sonnet" and data["lifecycle"] == "active"
    capabilities = data["capabilities"]
    assert capabilities["compaction"]["summarize"]["supported"] is True
    assert capabilities["thinking"]["types"]["adaptive"]["supported"] is True
    assert capabilities["thinking"]["types"]["disabled"]["supported"] is False
    legacy = client.beta.models.retrieve("claude-sonnet-4-5").model_dump(mode="json")
    assert legacy["capabilities"]["compaction"]["supported"] is False
    assert client.models.retrieve("claude-sonnet-4-5-20250929").id == "claude-sonnet-4-5"
    with pytest.raises(anthropic.NotFoundError) as caught:
        client.models.retrieve("opus")
    assert caught.value.body["error"] == {"type": "not_found_error", "message": "model: opus"}


def test_cache_editing_is_advertised_only_by_a_server_that_has_it() -> None:
    for flag in (False, True):
        with EmulatorServer(policy=lambda request: None, cache_editing=flag) as server:
            with anthropic.Anthropic(base_url=server.base_url, api_key=API_KEY, max_retries=0) as sdk:
                data = sdk.models.retrieve(MODERN).model_dump(mode="json")
        context_management = data["capabilities"]["context_management"]
        assert ("cache_edits_agent_repl" in json.dumps(context_management)) is flag
