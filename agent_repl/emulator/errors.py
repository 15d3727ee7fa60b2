"""API error values and the exact error texts of the reference (§5.1, §5.2, §1.4).

Handlers raise `ApiError`; the server turns it into the wire body and headers. The message
builders live here so validation, faults and tests all speak the same sentences.
"""

from __future__ import annotations

import random
import string
from typing import Any

ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}

_BASE62 = string.digits + string.ascii_letters


def new_id(prefix: str, rng: random.Random | None = None) -> str:
    """An id in the API's style: a prefix, `01`, then 22 base62 characters."""
    pick = (rng or random).choice
    return prefix + "01" + "".join(pick(_BASE62) for _ in range(22))


class ApiError(Exception):
    """An HTTP error response. `cloudflare=True` is the bare 413 body sent before the API."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        error_type: str | None = None,
        headers: dict[str, str] | None = None,
        cloudflare: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.error_type = error_type or ERROR_TYPES.get(status, "api_error")
        self.headers = dict(headers or {})
        self.cloudflare = cloudflare

    def body(self, request_id: str) -> dict[str, Any]:
        error = {"type": self.error_type, "message": self.message}
        if self.cloudflare:
            return {"error": error}
        return {"type": "error", "error": error, "request_id": request_id}

    def response_headers(self, request_id: str) -> dict[str, str]:
        headers = dict(self.headers)
        if not self.cloudflare:
            headers["request-id"] = request_id
        if self.status == 400:
            headers.setdefault("x-should-retry", "false")
        return headers


def invalid_request(message: str) -> ApiError:
    return ApiError(400, message)


def authentication_missing() -> ApiError:
    return ApiError(401, "x-api-key header is required")


def request_too_large() -> ApiError:
    return ApiError(413, "Request exceeds the maximum size", cloudflare=True)


def overloaded(headers: dict[str, str] | None = None) -> ApiError:
    return ApiError(529, "Overloaded", headers=headers)


def internal_server_error(headers: dict[str, str] | None = None) -> ApiError:
    return ApiError(500, "Internal server error", headers=headers)


def rate_limited(model: str, headers: dict[str, str] | None = None) -> ApiError:
    return ApiError(
        429,
        "This request would exceed your organization's rate limit of 30,000 input tokens per minute "
        f"(org: 00000000-0000-0000-0000-000000000000, model: {model}). "
        "For details, refer to: https://docs.claude.com/en/api/rate-limits.",
        headers=headers,
    )


# The §5.2 sentences, each built from the numbers and paths of the request at hand.


def prompt_too_long(tokens: int, window: int) -> str:
    return f"prompt is too long: {tokens} tokens > {window} maximum"


def max_tokens_too_large(max_tokens: int, limit: int, model_id: str) -> str:
    return (
        f"max_tokens: {max_tokens} > {limit}, which is the maximum allowed number of output tokens "
        f"for {model_id}"
    )


def missing_tool_results(message_index: int, ids: list[str]) -> str:
    return (
        f"messages.{message_index}: `tool_use` ids were found without `tool_result` blocks "
        f"immediately after: {', '.join(ids)}. Each `tool_use` block must have a corresponding "
        "`tool_result` block in the next message."
    )


def unexpected_tool_result(message_index: int, block_index: int, ids: list[str]) -> str:
    return (
        f"messages.{message_index}.content.{block_index}: unexpected `tool_use_id` found in "
        f"`tool_result` blocks: {', '.join(ids)}. Each `tool_result` block must have a corresponding "
        "`tool_use` block in the previous message."
    )


def duplicate_tool_use_id(message_index: int, block_index: int) -> str:
    return f"messages.{message_index}.content.{block_index}: `tool_use` ids must be unique"


def empty_message_content(message_index: int) -> str:
    return (
        f"messages.{message_index}: all messages must have non-empty content except for the "
        "optional final assistant message"
    )


EMPTY_TEXT_BLOCK = "text content blocks must be non-empty"
WHITESPACE_TEXT_BLOCK = "text content blocks must contain non-whitespace text"
PREFILL_NOT_SUPPORTED = (
    "This model does not support assistant message prefill. The conversation must end with a user message."
)
TOOL_NAMES_NOT_UNIQUE = "tools: Tool names must be unique."
# Our wording (the docs state the rules, not the sentences).
BETWEEN_TOOLS_EFFORT = (
    'thinking.type: "between_tools" is available at effort "low", "medium" and "high" only; '
    'use "thinking.type.adaptive" for effort "{effort}".'
)
SAMPLING_NOT_SUPPORTED = "{name}: sampling parameters are not supported for this model; use output_config.effort."
FORCED_TOOL_CHOICE_NOT_SUPPORTED = 'tool_choice: type "tool" and "any" are not supported for this model.'


def thinking_type_not_supported(kind: str) -> str:
    """§5.2 gives the `enabled` sentence in full; `disabled` and `between_tools` reuse its wording."""
    if kind == "adaptive":
        return "adaptive thinking is not supported on this model"
    return (
        f'"thinking.type.{kind}" is not supported for this model. Use "thinking.type.adaptive" and '
        '"output_config.effort" to control thinking behavior.'
    )


def too_many_cache_breakpoints(found: int) -> str:
    return f"A maximum of 4 blocks with cache_control may be provided. Found {found}."


def ttl_order(path: str) -> str:
    return (
        f"{path}: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. "
        "Note that blocks are processed in the following order: `tools`, `system`, `messages`."
    )
