"""The control requests the SDK sends, each answered with a small JSON object (or an error)."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from agent_repl import __version__
from agent_repl.sdk.hooks import register_hooks
from agent_repl.sdk.permissions import SdkPermissions
from agent_repl.sdk.wire import Wire
from agent_repl.session import Session


class SdkState(Protocol):
    """What the handlers read and change of the running SDK session (agent_repl.sdk.engine)."""

    wire: Wire
    ready: asyncio.Event
    session: Session | None
    permissions: SdkPermissions | None

    def status_line(self) -> dict[str, Any]: ...


class UnsupportedRequest(Exception):
    pass


class ControlHandlers:
    def __init__(self, sdk: SdkState) -> None:
        self.sdk = sdk

    async def handle(self, body: dict[str, Any]) -> dict[str, Any]:
        subtype = str(body.get("subtype"))
        handler = getattr(self, f"_on_{subtype}", None)
        if handler is None:
            raise UnsupportedRequest(f"agent-repl does not support the control request {subtype!r}")
        await self.sdk.ready.wait()
        result: dict[str, Any] = await handler(body)
        return result

    async def _on_initialize(self, body: dict[str, Any]) -> dict[str, Any]:
        from agent_repl.commands import default_registry

        session, permissions = self.sdk.session, self.sdk.permissions
        assert session is not None and permissions is not None
        hooks = body.get("hooks")
        registered = register_hooks(session, self.sdk.wire, hooks if isinstance(hooks, dict) else {})
        return {
            "commands": [
                {"name": name.lstrip("/"), "description": "", "argumentHint": ""}
                for name in default_registry().complete("")
            ],
            "agents": [],
            "output_style": "default",
            "available_output_styles": ["default"],
            "models": [{"value": session.model, "displayName": session.model, "description": ""}],
            "account": {},
            "pid": __import__("os").getpid(),
            "agent_repl_version": __version__,
            "current_permission_mode": permissions.mode_name,
            "hooks_applied": registered,
        }

    async def _on_interrupt(self, body: dict[str, Any]) -> dict[str, Any]:
        assert self.sdk.session is not None
        self.sdk.session.interrupt()
        return {}

    async def _on_set_permission_mode(self, body: dict[str, Any]) -> dict[str, Any]:
        assert self.sdk.permissions is not None
        try:
            self.sdk.permissions.set_mode(str(body.get("mode")))
        except ValueError as exc:
            raise UnsupportedRequest(str(exc)) from exc
        self.sdk.wire.send(self.sdk.status_line())
        return {}

    async def _on_set_model(self, body: dict[str, Any]) -> dict[str, Any]:
        session = self.sdk.session
        assert session is not None
        model = body.get("model")
        session.model = str(model) if model else session.settings.model
        return {}

    async def _on_mcp_status(self, body: dict[str, Any]) -> dict[str, Any]:
        session = self.sdk.session
        assert session is not None
        servers = session.mcp.status() if session.mcp is not None else []
        return {"mcpServers": [{"name": s.name, "status": s.status} for s in servers]}
