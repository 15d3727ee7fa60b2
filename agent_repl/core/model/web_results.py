"""What a server tool's result block says, in a line and as a list, for every front end.

`web_search_tool_result` holds `web_search_result` items (url, title, page_age) or an error object;
`web_fetch_tool_result` holds a `web_fetch_result` (url, a document) or an error object.
"""

from __future__ import annotations

from typing import Any

SERVER_TOOL_NAMES = {"web_search": "WebSearch", "web_fetch": "WebFetch"}


def _error_code(content: Any) -> str | None:
    if isinstance(content, dict) and str(content.get("type", "")).endswith("_error"):
        return str(content.get("error_code") or "error")
    return None


def web_result_summary(block: dict[str, Any]) -> tuple[str, bool]:
    """(one line, whether it failed)."""
    content = block.get("content")
    code = _error_code(content)
    if code is not None:
        return f"failed: {code}", True
    if block.get("type") == "web_search_tool_result":
        count = len(content) if isinstance(content, list) else 0
        return f"{count} result{'s' if count != 1 else ''}", False
    document = (content or {}).get("content") if isinstance(content, dict) else None
    data = str(((document or {}).get("source") or {}).get("data", ""))
    title = (document or {}).get("title") or (content or {}).get("url") or "the page"
    return f"fetched {title} ({len(data):,} characters)", False


def search_hits(block: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(title, url, page age) of each search result."""
    content = block.get("content")
    if not isinstance(content, list):
        return []
    return [
        (str(item.get("title") or ""), str(item.get("url") or ""), str(item.get("page_age") or ""))
        for item in content
        if isinstance(item, dict)
    ]
