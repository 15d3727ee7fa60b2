"""What the built-in tools declare, for tests that build a pipeline without a session (a session's
pipeline takes it from its own tools, agent_repl.bootstrap.build_pipeline)."""

from __future__ import annotations

from dataclasses import replace

from agent_repl.context.state import PipelineConfig
from agent_repl.tools import builtin_tools

CLEARABLE_TOOLS = frozenset(tool.name for tool in builtin_tools() if tool.microcompact_clearable)


def with_declared_tools(config: PipelineConfig) -> PipelineConfig:
    """`config` with the built-in tools' clearable set, unless it names its own."""
    return config if config.clearable_tools else replace(config, clearable_tools=CLEARABLE_TOOLS)
