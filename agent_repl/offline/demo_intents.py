"""Plain requests the demo model understands, turned into calls of the built-in tools.

Pure functions: text in, an `Intent` (tool name and input, Claude Code's argument names) out.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from agent_repl.emulator.blocks import content_blocks, system_blocks

_PLEASE = r"^(?:please\s+|can you\s+|could you\s+)?"
_QUOTED = r"[`'\"]?"
# An optional "in PATH" closing a search request.
_IN_PATH = r"(?:\s+in\s+" + _QUOTED + r"(?P<path>[^\s`'\"]+)" + _QUOTED + r")?\s*[.!?]?$"
_WORKING_DIRECTORY = re.compile(r"^\s*Working directory:\s*(\S.*?)\s*$", re.MULTILINE)

_BASH = re.compile(
    _PLEASE + r"(?:run|execute|exec)\s+(?:the\s+command\s+)?[`'\"]?(?P<command>.+?)[`'\"]?\s*[.!]?$", re.I
)
_SHELL_PREFIX = re.compile(r"^[$!]\s*(?P<command>\S.*)$")
_READ = re.compile(
    _PLEASE
    + r"(?:read|show(?:\s+me)?|open|cat|view|print|look\s+at)\s+(?:the\s+)?(?:file\s+|contents\s+of\s+)?"
    + _QUOTED
    + r"(?P<path>[^\s`'\"]+)"
    + _QUOTED
    + r"\s*[.!?]?$",
    re.I,
)
_GREP = re.compile(
    _PLEASE
    + r"(?:grep|search)\s+(?:for\s+)?"
    + _QUOTED
    + r"(?P<pattern>.+?)"
    + _QUOTED
    + _IN_PATH,
    re.I,
)
_GLOB = re.compile(
    _PLEASE
    + r"(?:find|list|glob|locate)\s+(?:all\s+)?(?:the\s+)?(?:files\s+)?(?:matching\s+|named\s+|called\s+)?"
    + _QUOTED
    + r"(?P<pattern>[^\s`'\"]+)"
    + _QUOTED
    + r"(?:\s+files)?"
    + _IN_PATH,
    re.I,
)
_OVERVIEW = re.compile(
    r"what(?:'s|\s+is)\s+(?:in\s+)?(?:this|the)\s+(?:repo|repository|project|directory|folder|dir)\b"
    r"|^(?:please\s+)?(?:list|show(?:\s+me)?)\s+(?:the\s+)?files\s*[.!?]?$|^ls\s*$|^(?:give me an\s+)?overview\b",
    re.I,
)
_GREETING = re.compile(r"^(?:hi|hello|hey|help|who are you|what can you do)\b", re.I)
_LANGUAGES = {
    "python": "py",
    "javascript": "js",
    "typescript": "ts",
    "markdown": "md",
    "rust": "rs",
    "go": "go",
    "json": "json",
    "yaml": "yaml",
    "toml": "toml",
    "shell": "sh",
}


@dataclass(frozen=True)
class Intent:
    tool: str
    input: dict[str, Any] = field(default_factory=dict)
    say: str = ""


def working_directory(body: dict[str, Any]) -> str | None:
    """The `Working directory: /abs` line of the system prompt (or of an early user message)."""
    texts = [str(b.get("text", "")) for b in system_blocks(body.get("system")) if b.get("type") == "text"]
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "user":
            texts += [
                str(b.get("text", ""))
                for b in content_blocks(message.get("content"))
                if b.get("type") == "text"
            ]
    for text in texts:
        found = _WORKING_DIRECTORY.search(text)
        if found:
            return found.group(1)
    return None


def absolute(path: str, cwd: str | None) -> str:
    if path.startswith(("/", "~")) or not cwd:
        return path
    return posixpath.normpath(posixpath.join(cwd, path))


def _looks_like_path(text: str) -> bool:
    return "." in text or "/" in text or re.fullmatch(r"[A-Z][A-Za-z_-]+", text) is not None


def _glob_pattern(word: str) -> str | None:
    language = _LANGUAGES.get(word.lower())
    if language:
        return f"**/*.{language}"
    if any(c in word for c in "*?[") or "." in word:
        return word if "/" in word or word.startswith("**") else f"**/{word}"
    return None


def parse_intent(text: str, cwd: str | None) -> Intent | None:
    """The tool call a plain request asks for, or None when the demo does not understand it."""
    text = text.strip()
    if match := _SHELL_PREFIX.match(text) or _BASH.match(text):
        command = match.group("command").strip()
        return Intent("Bash", {"command": command}, f"Running `{command}`.")
    if _OVERVIEW.search(text):
        return Intent("overview", {}, "Let me look at what is here.")
    if (match := _READ.match(text)) and _looks_like_path(match.group("path")):
        path = absolute(match.group("path"), cwd)
        return Intent("Read", {"file_path": path}, f"Reading `{path}`.")
    if match := _GREP.match(text):
        tool_input: dict[str, Any] = {"pattern": match.group("pattern"), "output_mode": "content"}
        where = match.group("path")
        if where and any(c in where for c in "*?["):
            tool_input["glob"] = where
        elif where:
            tool_input["path"] = absolute(where, cwd)
        return Intent("Grep", tool_input, f"Searching for `{match.group('pattern')}`.")
    if (match := _GLOB.match(text)) and (pattern := _glob_pattern(match.group("pattern"))):
        tool_input = {"pattern": pattern}
        if match.group("path"):
            tool_input["path"] = absolute(match.group("path"), cwd)
        return Intent("Glob", tool_input, f"Looking for files matching `{pattern}`.")
    if _GREETING.match(text):
        return Intent("greeting")
    return None
