"""MCP servers as tools: configuration, one connection per server, the tool adapter, the manager.

Nothing here imports the `mcp` SDK at import time; it loads when a server is first started.
"""
