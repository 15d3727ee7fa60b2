"""The API's own web tools, `web_search` and `web_fetch`, served from local fixtures (no network).

A request declares them as `{"type": "web_search_20250305", "name": "web_search", ...}` and
`{"type": "web_fetch_20250910", "name": "web_fetch", ...}`. When the policy's reply calls one
(a `server_tool_use` block), the server runs it and puts the result block right after the call,
then asks the policy to go on with everything so far as the start of its turn; the model's
answer and the blocks of every search or fetch come back as one response, as the documentation
describes. After `MAX_ITERATIONS` rounds the response stops with `pause_turn`; the client sends
it back unchanged to continue. Result shapes follow the SDK types: `web_search_result` items with
`encrypted_content` (here the page text, base64-encoded), `web_fetch_result` with a plain-text
document, and the documented error codes (`max_uses_exceeded`, `url_not_allowed`,
`url_not_in_prior_context`, `url_not_accessible`, `invalid_tool_input`).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from importlib import resources
from typing import Any
from urllib.parse import urlparse

from agent_repl.emulator.blocks import Block
from agent_repl.emulator.policies.base import PolicyRequest, Reply
from agent_repl.emulator.request_error import EmulatorRequestError

MAX_ITERATIONS = 10
SEARCH_RESULTS = 5
TOOL_TYPES = {"web_search": "web_search_", "web_fetch": "web_fetch_"}
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Page:
    url: str
    title: str
    text: str
    page_age: str | None = None


@dataclass
class WebFixtures:
    pages: list[Page] = field(default_factory=list)

    @classmethod
    def bundled(cls) -> WebFixtures:
        raw = json.loads(resources.files("agent_repl.emulator").joinpath("web_fixtures.json").read_text("utf-8"))
        return cls([Page(**page) for page in raw["pages"]])

    def search(self, query: str) -> list[Page]:
        words = set(_WORD.findall(query.lower()))
        scored = []
        for page in self.pages:
            haystack = _WORD.findall(f"{page.title} {page.text}".lower())
            score = sum(haystack.count(w) for w in words) + 5 * sum(w in page.title.lower() for w in words)
            if score:
                scored.append((-score, page.url, page))
        return [page for *_, page in sorted(scored)[:SEARCH_RESULTS]]

    def fetch(self, url: str) -> Page | None:
        wanted = url.rstrip("/")
        return next((p for p in self.pages if p.url.rstrip("/") == wanted), None)


def declared(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The web server tools the request declares, by name."""
    tools: dict[str, dict[str, Any]] = {}
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        name, kind = tool.get("name"), str(tool.get("type", ""))
        if name in TOOL_TYPES and kind.startswith(TOOL_TYPES[name]):
            tools[name] = tool
    return tools


def reject_disabled_web_tools(body: dict[str, Any]) -> None:
    """An organization whose administrator has not enabled the web tools: a request declaring one fails."""
    for name in declared(body):
        raise EmulatorRequestError(
            f"tools: {name} is not enabled for this organization (an administrator can enable it in the Console)"
        )


def _domain_allowed(url: str, tool: dict[str, Any]) -> bool:
    host = (urlparse(url).hostname or "").lower()

    def matches(domain: str) -> bool:
        domain = domain.lower().split("/")[0]
        return host == domain or host.endswith("." + domain)

    if tool.get("allowed_domains"):
        return any(matches(d) for d in tool["allowed_domains"])
    return not any(matches(d) for d in tool.get("blocked_domains") or [])


def _encrypted(page: Page) -> str:
    return base64.b64encode(page.text.encode("utf-8")).decode("ascii")


def decode_encrypted(value: str) -> str:
    """The page text of a `web_search_result` (the emulator's policies read their own results)."""
    try:
        return base64.b64decode(value.encode("ascii")).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return ""


def _search_result(use: Block, tool: dict[str, Any], fixtures: WebFixtures) -> Block:
    query = (use.get("input") or {}).get("query")
    if not isinstance(query, str) or not query.strip():
        content: Any = {"type": "web_search_tool_result_error", "error_code": "invalid_tool_input"}
    else:
        content = [
            {
                "type": "web_search_result",
                "url": page.url,
                "title": page.title,
                "encrypted_content": _encrypted(page),
                "page_age": page.page_age,
            }
            for page in fixtures.search(query)
            if _domain_allowed(page.url, tool)
        ]
    return {"type": "web_search_tool_result", "tool_use_id": use["id"], "content": content}


def _fetch_result(use: Block, tool: dict[str, Any], fixtures: WebFixtures, context: str, now: str) -> Block:
    url = (use.get("input") or {}).get("url")

    def error(code: str) -> Block:
        return {
            "type": "web_fetch_tool_result",
            "tool_use_id": use["id"],
            "content": {"type": "web_fetch_tool_result_error", "error_code": code},
        }

    if not isinstance(url, str) or not urlparse(url).scheme.startswith("http"):
        return error("invalid_tool_input")
    if not _domain_allowed(url, tool):
        return error("url_not_allowed")
    if url.rstrip("/") not in context:
        return error("url_not_in_prior_context")
    page = fixtures.fetch(url)
    if page is None:
        return error("url_not_accessible")
    document: Block = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": page.text},
        "title": page.title,
    }
    return {
        "type": "web_fetch_tool_result",
        "tool_use_id": use["id"],
        "content": {"type": "web_fetch_result", "url": page.url, "retrieved_at": now, "content": document},
    }


@dataclass
class ServerToolRun:
    reply: Reply
    web_search_requests: int = 0
    web_fetch_requests: int = 0


def run_server_tools(
    request: PolicyRequest,
    reply: Reply,
    ask: Callable[[PolicyRequest], Reply],
    fixtures: WebFixtures,
    *,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> ServerToolRun:
    """Execute the reply's server tool calls, asking the policy to go on after each round."""
    tools = declared(request.body)
    if not tools or not any(b.get("type") == "server_tool_use" for b in reply.content):
        return ServerToolRun(reply)
    run = ServerToolRun(reply)
    content: list[Block] = []
    used = {"web_search": 0, "web_fetch": 0}
    history = list(request.body.get("messages") or [])
    # What the model may fetch: URLs the user or earlier results put in the conversation.
    context = json.dumps(history, ensure_ascii=False)
    stamp = now().isoformat(timespec="seconds").replace("+00:00", "Z")
    for iteration in range(1, MAX_ITERATIONS + 1):
        for block in reply.content:
            content.append(block)
            name = block.get("name")
            if block.get("type") != "server_tool_use" or name not in tools:
                continue
            used[name] += 1
            limit = tools[name].get("max_uses")
            if isinstance(limit, int) and used[name] > limit:
                kind = "web_search_tool_result" if name == "web_search" else "web_fetch_tool_result"
                error_type = f"{kind}_error" if name == "web_search" else "web_fetch_tool_result_error"
                content.append({"type": kind, "tool_use_id": block["id"], "content": {"type": error_type, "error_code": "max_uses_exceeded"}})
                continue
            if name == "web_search":
                run.web_search_requests += 1
                result = _search_result(block, tools[name], fixtures)
            else:
                run.web_fetch_requests += 1
                result = _fetch_result(block, tools[name], fixtures, context, stamp)
            content.append(result)
            context += json.dumps(result, ensure_ascii=False)
            for item in result["content"] if isinstance(result["content"], list) else []:
                context += decode_encrypted(item.get("encrypted_content", ""))
        if not any(b.get("type") == "server_tool_use" for b in reply.content):
            run.reply = Reply(content, reply.stop_reason)
            return run
        if iteration == MAX_ITERATIONS:
            break
        if history and history[-1].get("role") == "assistant":
            prior = history[-1]["content"] if isinstance(history[-1]["content"], list) else []
            messages = [*history[:-1], {"role": "assistant", "content": [*prior, *content]}]
        else:
            messages = [*history, {"role": "assistant", "content": list(content)}]
        reply = ask(replace(request, body={**request.body, "messages": messages}))
    run.reply = Reply(content, "pause_turn")
    return run
