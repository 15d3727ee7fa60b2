"""The Claude Agent SDK's transport: `--input-format stream-json --output-format stream-json`.

A program on the SDK (Python `claude-agent-sdk`, TypeScript `@anthropic-ai/claude-agent-sdk`)
starts the agent with these flags and talks JSON lines over stdin and stdout: user messages in,
the same stream-json lines as print mode out, and `control_request` / `control_response` lines
both ways (docs/architecture.md, "Front ends"). This package is one more consumer of the
headless loop's events: approvals are the injected callback that asks the SDK (`can_use_tool`),
hooks the SDK registered are answered by it (`hook_callback`), and its in-process MCP servers
are reached through it (`mcp_message`).
"""

from agent_repl.sdk.engine import run_sdk_session

__all__ = ["run_sdk_session"]
