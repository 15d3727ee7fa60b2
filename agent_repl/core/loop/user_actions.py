"""What the user does through the tools directly, as in Claude Code: `@path` attaches a file (or a
directory listing) to the prompt, and `!command` runs a shell command through the Bash tool.

Both go through the same executor as the model's calls (its limits, persisted outputs, redaction
and deny rules); only the question is skipped, since the user typed the call. What they produce
enters the history, so the model sees it on the next request.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_repl.core.loop.entries import with_entries
from agent_repl.core.loop.tool_execution import ToolCallOutcome, execute_tool_calls
from agent_repl.core.model.events import AgentEvent, SystemMessageEvent, TurnEnded, TurnStarted
from agent_repl.core.model.messages import Message, SystemMessage, TextBlock, ToolUseBlock, Usage, UserMessage
from agent_repl.core.permissions.rules import Decision, PermissionRequest

if TYPE_CHECKING:
    from agent_repl.core.loop.turn_session import TurnSession

# `@path` at the start or after whitespace; `@"a path with spaces"` too.
_MENTION = re.compile(r'(?:^|(?<=\s))@("[^"\n]+"|[^\s"]+)')
MAX_MENTIONS = 10
MAX_LISTING = 200
# A path to an image in the prompt, as a terminal pastes a dropped file: quoted, or with its
# spaces escaped by backslashes, or plain.
_IMAGE_PATH = re.compile(
    r"""(?:^|(?<=\s))(?:'([^'\n]+)'|"([^"\n]+)"|((?:[^\s'"\\]|\\.)+))""",
)
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
MAX_PASTED_IMAGES = 5


async def _user_approved(request: PermissionRequest) -> Decision:
    return Decision.ALLOW_ONCE


async def run_user_tool(session: TurnSession, name: str, tool_input: dict[str, Any]) -> ToolCallOutcome | None:
    """Run one tool call the user asked for, the way the model's calls run."""
    runtime = session.tool_runtime(_user_approved)
    call = ToolUseBlock(id=f"toolu_user_{uuid.uuid4().hex[:20]}", name=name, input=tool_input)
    async for item in execute_tool_calls(runtime, [call], session.cancelled):
        if isinstance(item, ToolCallOutcome):
            return item
    return None


def mentioned_paths(text: str, cwd: Path) -> list[Path]:
    """The existing files and directories a prompt mentions with `@`, in order, each once."""
    found: list[Path] = []
    for match in _MENTION.finditer(text):
        word = match.group(1).strip('"').rstrip(",.;:!?)")
        path = Path(word).expanduser()
        path = path if path.is_absolute() else cwd / path
        if word and path.exists() and path not in found:
            found.append(path)
        if len(found) >= MAX_MENTIONS:
            break
    return found


def pasted_image_paths(text: str, cwd: Path) -> list[Path]:
    """The image files a prompt names by a full path (as a terminal pastes a file dropped on it),
    in order, each once. A bare name (`logo.png`) is only text: `@logo.png` attaches it."""
    found: list[Path] = []
    for match in _IMAGE_PATH.finditer(text):
        plain = re.sub(r"\\(.)", r"\1", match.group(3) or "").rstrip(",.;:!?)")
        word = match.group(1) or match.group(2) or plain
        if not word.startswith(("/", "~/")) or not word.lower().endswith(IMAGE_SUFFIXES):
            continue
        path = Path(word).expanduser()
        if path.is_file() and path not in found:
            found.append(path)
        if len(found) >= MAX_PASTED_IMAGES:
            break
    return found


def _listing(path: Path) -> str:
    entries = sorted(path.iterdir(), key=lambda p: (not p.is_dir(), p.name))
    names = [p.name + ("/" if p.is_dir() else "") for p in entries[:MAX_LISTING]]
    more = f"\n… and {len(entries) - MAX_LISTING} more" if len(entries) > MAX_LISTING else ""
    return "\n".join(names) + more


def _shown(path: Path, cwd: Path) -> str:
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


async def mention_messages(session: TurnSession, prompt: str) -> list[Message]:
    """For each `@path`: a meta message with the file (read by the Read tool) or the directory's
    listing, and a notice for the screen."""
    messages: list[Message] = []
    mentioned = mentioned_paths(prompt, session.cwd)
    images = [p for p in pasted_image_paths(prompt, session.cwd) if p not in mentioned]
    for path in [*mentioned, *images]:
        shown = _shown(path, session.cwd)
        if path.is_dir():
            try:
                body, note = _listing(path), f"listed @{shown}/"
            except OSError as exc:
                body, note = f"(cannot list it: {exc.strerror or exc})", f"could not list @{shown}"
        else:
            outcome = await run_user_tool(session, "Read", {"file_path": str(path)})
            if outcome is None:
                continue
            content = outcome.output.content
            if not isinstance(content, str) and not outcome.output.is_error:
                messages.extend(_image_messages(path, shown, content, outcome.output.summary))
                continue
            body = content if isinstance(content, str) else "(not text)"
            note = f"attached @{shown}: {outcome.output.summary or 'read'}"
        kind = "directory" if path.is_dir() else "file"
        messages.append(
            UserMessage(
                content=f"<system-reminder>\nThe user mentioned the {kind} @{shown} ({path}). Its contents:\n\n"
                f"{body}\n</system-reminder>",
                is_meta=True,
            )
        )
        messages.append(SystemMessage(subtype="informational", content=note))
    return messages


def _image_messages(path: Path, shown: str, blocks: list[Any], summary: str | None) -> list[Message]:
    """An image the prompt names: the picture itself goes to the model, under a line naming it."""
    intro = TextBlock(text=f"<system-reminder>\nThe user attached the image {shown} ({path}).\n</system-reminder>")
    return [
        UserMessage(content=[intro, *blocks], is_meta=True),
        SystemMessage(subtype="informational", content=f"attached image {shown}: {summary or 'read'}"),
    ]


def run_shell_command(session: TurnSession, command: str) -> AsyncIterator[AgentEvent]:
    """`!command`: run it through Bash, show it, and keep it and its output in the conversation
    (as Claude Code's `<bash-input>` / `<bash-stdout>` records, the output in an `EntryAppended`)."""
    return with_entries(session, _shell_command(session, command))


async def _shell_command(session: TurnSession, command: str) -> AsyncIterator[AgentEvent]:
    session.cancelled.clear()
    await session.ensure_started()
    asked = await session.append(UserMessage(content=f"<bash-input>{command}</bash-input>"))
    yield TurnStarted(prompt=f"!{command}", message=asked)
    outcome = await run_user_tool(session, "Bash", {"command": command})
    if outcome is None:
        notice = await session.append(SystemMessage(subtype="informational", content="the command did not run"))
        yield SystemMessageEvent(message=notice)
    else:
        content = outcome.output.content
        output = content if isinstance(content, str) else ""
        tag = "bash-stderr" if outcome.output.is_error else "bash-stdout"
        await session.append(UserMessage(content=f"<{tag}>{output}</{tag}>"))
    tokens = session.projector.next_request_tokens(session.messages)
    yield TurnEnded(reason="completed", num_requests=0, usage=Usage(), next_request_tokens=tokens)
