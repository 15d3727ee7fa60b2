"""The demo model's web requests: "search the web for X" and "fetch URL", through the API's server
tools. It calls `web_search` or `web_fetch` (only when the request declares them); the emulator
runs the call and hands the turn back with the result, and the demo reports what came back."""

from __future__ import annotations

import re
from typing import Any

from agent_repl.emulator.blocks import Block, content_blocks
from agent_repl.emulator.policies.base import Reply, base62, messages, text_block
from agent_repl.emulator.server_tools import declared, decode_encrypted

_SEARCH = re.compile(
    r"^(?:please\s+)?(?:search\s+the\s+web\s+for|web\s*search(?:\s+for)?|look\s+up)\s+[`'\"]?(?P<query>.+?)[`'\"]?"
    r"(?:\s+on\s+the\s+web)?\s*[.!?]?$",
    re.I,
)
_FETCH = re.compile(r"^(?:please\s+)?(?:fetch|download|get\s+the\s+page)\s+<?(?P<url>https?://\S+?)>?\s*[.!?]?$", re.I)


def web_intent(text: str) -> tuple[str, dict[str, Any]] | None:
    text = text.strip()
    if match := _FETCH.match(text):
        return "web_fetch", {"url": match["url"]}
    if match := _SEARCH.match(text):
        return "web_search", {"query": match["query"]}
    return None


def server_tool_id(*parts: object) -> str:
    import hashlib

    seed = "\x1f".join(str(p) for p in parts).encode()
    return "srvtoolu_01" + base62(hashlib.sha256(seed).digest(), 22)


def web_call(body: dict[str, Any], text: str, key: object) -> Reply | None:
    """The server tool call a plain request asks for, or None when it asks for none."""
    intent = web_intent(text)
    if intent is None:
        return None
    name, tool_input = intent
    if name not in declared(body):
        return Reply([text_block(f"I'd use the API's {name} tool for that, but this session does not offer it.")])
    say = f"Searching the web for “{tool_input['query']}”." if name == "web_search" else f"Fetching {tool_input['url']}."
    block = {"type": "server_tool_use", "id": server_tool_id("demo-web", key, name, tool_input), "name": name, "input": tool_input}
    return Reply([text_block(say), block])


def paused_with_results(body: dict[str, Any]) -> list[Block] | None:
    """The result blocks at the end of a turn the server handed back (the last message is ours)."""
    history = messages(body)
    if not history or history[-1].get("role") != "assistant":
        return None
    blocks = content_blocks(history[-1].get("content"))
    results = [b for b in blocks if b.get("type") in ("web_search_tool_result", "web_fetch_tool_result")]
    return results or None


def describe_web_results(results: list[Block]) -> str:
    paragraphs = []
    for result in results:
        content = result.get("content")
        if isinstance(content, dict) and str(content.get("type", "")).endswith("_error"):
            paragraphs.append(f"The {result['type'].removesuffix('_tool_result')} call failed: `{content.get('error_code')}`.")
        elif result.get("type") == "web_search_tool_result":
            items = [c for c in content or [] if isinstance(c, dict)]
            if not items:
                paragraphs.append("The search found nothing.")
                continue
            lines = [f"- [{c.get('title')}]({c.get('url')}): {decode_encrypted(str(c.get('encrypted_content', '')))[:120]}…" for c in items]
            paragraphs.append(f"The search found {len(items)} page{'s' if len(items) != 1 else ''}:\n" + "\n".join(lines))
        elif isinstance(content, dict):
            document = content.get("content") or {}
            data = str((document.get("source") or {}).get("data", ""))
            paragraphs.append(f"{content.get('url')} (“{document.get('title')}”) starts:\n\n> {data[:300]}")
    return "\n\n".join([*paragraphs, "(Offline demo model: these pages come from the emulator's fixtures.)"])
