"""Keeping credentials out of everything the agent writes or sends.

Two kinds of secret are replaced by `[REDACTED]`: the exact values the agent knows (its API key,
the credentials it moved out of the environment, credential-named variables it passes on to
commands) and the documented shapes of keys and tokens (`SECRET_SHAPES`), whoever's they are.
Text enters the history through `SecretRedactor` (tool results, typed prompts, model replies),
and the transcript writer, the tool-results files, the session notes and the prompt history
pass what they write through it again; Bash rewrites its output file with `redact_file`.
Thinking blocks are left alone: they are signed, and the model only sees redacted input.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, AnyStr

from agent_repl.core.model.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from agent_repl.core.permissions.credentials import CREDENTIAL_WORDS
from agent_repl.core.tooling.tool import ToolOutput

REDACTED = "[REDACTED]"
# Shorter values ("none", a test placeholder) would redact ordinary words.
MIN_SECRET_CHARS = 8
_CHUNK_BYTES = 1 << 20
# The longest text one shape can match: a file is redacted in chunks that overlap by this much.
_MAX_MATCH_CHARS = 20_000


@dataclass(frozen=True)
class Shape:
    """A kind of secret: a regex whose `s` group is the secret (the rest, such as `Bearer `, stays).

    Patterns start with a literal, which the regex engine finds at memory speed (a leading `\\b`,
    `^` or character set makes it try every position, 10-20 times slower); one that cannot runs
    only when the text holds one of its `triggers`. `line_prefix`, when given, must match the
    text between the start of the line and the match.
    """

    pattern: str
    line_prefix: str | None = None
    triggers: tuple[str, ...] = ()


SECRET_SHAPES: dict[str, Shape] = {
    "anthropic": Shape(r"(?P<s>sk-ant-[A-Za-z0-9_-]{16,1000})"),
    "aws-access-key-id": Shape(
        r"(?P<s>(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|APKA)[A-Z0-9]{16})(?![A-Za-z0-9])"
    ),
    "aws-secret-access-key": Shape(
        r"[Ss][Ee][Cc][Rr][Ee][Tt]_?[Aa][Cc][Cc][Ee][Ss][Ss]_?[Kk][Ee][Yy][\"']?\s*[:=]\s*[\"']?"
        r"(?P<s>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
        triggers=("ccess", "CCESS"),
    ),
    "github": Shape(r"(?P<s>(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255}))"),
    "bearer": Shape(
        r"[Bb][Ee][Aa][Rr][Ee][Rr]\s+(?P<s>[A-Za-z0-9._~+/-]{20,2000}=*)", triggers=("earer", "EARER")
    ),
    "slack": Shape(r"(?P<s>xox[abposr]-[A-Za-z0-9-]{10,255})"),
    "google-api-key": Shape(r"(?P<s>AIza[0-9A-Za-z_-]{35})"),
    "stripe": Shape(r"(?P<s>[rs]k_live_[0-9A-Za-z]{20,255})", triggers=("k_live_",)),
    "jwt": Shape(r"(?P<s>eyJ[A-Za-z0-9_-]{8,2000}\.eyJ[A-Za-z0-9_-]{8,4000}\.[A-Za-z0-9_-]{8,2000})"),
    "private-key": Shape(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?P<s>[\s\S]{1,16000}?)-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----"
    ),
    # `NAME=value` (env output, .env files, also as Read or Grep show a line) whose name says it
    # holds a credential; not `obj.TOKEN=x` in code.
    "credential-assignment": Shape(
        r"(?:" + CREDENTIAL_WORDS + r")S?(?:_[A-Za-z0-9]+)*=[\"']?(?P<s>[^\s\"']{8,1000})",
        line_prefix=r"(?:.*[\s:→])?(?:export\s+)?(?:[A-Za-z0-9]+_)*",
    ),
}


@dataclass(frozen=True)
class _Compiled:
    """A shape compiled for text or for bytes."""

    pattern: re.Pattern[Any]
    line_prefix: re.Pattern[Any] | None
    triggers: tuple[Any, ...]


def _compile(shapes: Iterable[Shape], as_bytes: bool) -> tuple[_Compiled, ...]:
    def build(source: str) -> re.Pattern[Any]:
        return re.compile(source.encode() if as_bytes else source)

    return tuple(
        _Compiled(
            build(s.pattern),
            build(s.line_prefix) if s.line_prefix else None,
            tuple(t.encode() for t in s.triggers) if as_bytes else s.triggers,
        )
        for s in shapes
    )


@dataclass(frozen=True)
class SecretRedactor:
    secrets: tuple[str, ...] = ()
    _patterns: tuple[_Compiled, ...] = field(default=(), repr=False, compare=False)
    _byte_patterns: tuple[_Compiled, ...] = field(default=(), repr=False, compare=False)

    @classmethod
    def of(cls, *values: str | None) -> SecretRedactor:
        """A redactor for these exact values (and every documented shape)."""
        kept: set[str] = set()
        for value in values:
            if value and len(value) >= MIN_SECRET_CHARS:
                # The JSON-escaped form too, so the transcript writer finds it in an encoded line.
                kept.update({value, json.dumps(value, ensure_ascii=False)[1:-1], json.dumps(value)[1:-1]})
        secrets = tuple(sorted(kept, key=len, reverse=True))
        # One literal pattern per value: a single alternation of them is not scanned at memory speed.
        shapes = [*(Shape(f"(?P<s>{re.escape(s)})") for s in secrets), *SECRET_SHAPES.values()]
        return cls(secrets, _compile(shapes, False), _compile(shapes, True))

    @classmethod
    def for_settings(cls, settings: Any) -> SecretRedactor:
        """A redactor for the API key, the auth token and every credential the settings found."""
        return cls.of(settings.api_key, settings.auth_token, *settings.credentials.values())

    def __post_init__(self) -> None:
        if not self._patterns:  # a plain SecretRedactor() still knows the shapes
            built = SecretRedactor.of(*self.secrets)
            object.__setattr__(self, "_patterns", built._patterns)
            object.__setattr__(self, "_byte_patterns", built._byte_patterns)

    def text(self, text: str) -> str:
        spans = _spans(self._patterns, text)
        return _apply(text, spans, REDACTED) if spans else text

    def value(self, value: Any) -> Any:
        """A JSON-like value with every string redacted."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        return value

    def output(self, output: ToolOutput) -> ToolOutput:
        if isinstance(output.content, str):
            content: Any = self.text(output.content)
        else:
            content = [
                b.model_copy(update={"text": self.text(b.text)}) if isinstance(b, TextBlock) else b
                for b in output.content
            ]
        return replace(
            output,
            content=content,
            structured=self.value(output.structured),
            summary=self.text(output.summary),
        )

    def message(self, message: Message) -> Message:
        """Redact a history entry in place (text, tool inputs and results; never thinking or images)."""
        if isinstance(message, SystemMessage):
            message.content = self.text(message.content)
            message.metadata = self.value(message.metadata)
            return message
        if isinstance(message, UserMessage):
            if message.tool_use_result is not None:
                message.tool_use_result = self.value(message.tool_use_result)
            if isinstance(message.content, str):
                message.content = self.text(message.content)
                return message
        assert isinstance(message, UserMessage | AssistantMessage)
        for block in message.content:
            if isinstance(block, TextBlock):
                block.text = self.text(block.text)
            elif isinstance(block, ToolUseBlock):
                block.input = self.value(block.input)
            elif isinstance(block, ToolResultBlock):
                if isinstance(block.content, str):
                    block.content = self.text(block.content)
                else:
                    for inner in block.content:
                        if isinstance(inner, TextBlock):
                            inner.text = self.text(inner.text)
        return message

    def file(self, path: Path) -> bool:
        """Rewrite `path` without secrets, in bounded memory; False when there was none in it."""
        return _redact_file(path, self._byte_patterns)


def redact_file(path: Path, secrets: tuple[str, ...]) -> bool:
    """`SecretRedactor.of(*secrets).file(path)`: the exact values and every shape."""
    return SecretRedactor.of(*secrets).file(path)


def _matches(shapes: Iterable[_Compiled], data: AnyStr) -> list[tuple[int, int, int]]:
    """(match start, secret start, secret end) of every secret in `data`, in order."""
    newline = "\n" if isinstance(data, str) else b"\n"
    found: list[tuple[int, int, int]] = []
    for shape in shapes:
        if shape.triggers and not any(t in data for t in shape.triggers):
            continue
        for m in shape.pattern.finditer(data):
            start = m.start()
            if shape.line_prefix is not None:
                line_start = data.rfind(newline, 0, start) + 1
                if not shape.line_prefix.fullmatch(data, line_start, start):
                    continue
            secret_start, secret_end = m.span("s")
            found.append((start, secret_start, secret_end))
    return sorted(found, key=lambda match: match[1])


def _spans(shapes: Iterable[_Compiled], data: AnyStr) -> list[tuple[int, int]]:
    """The merged (start, end) ranges of every secret in `data`."""
    merged: list[tuple[int, int]] = []
    for _, start, end in _matches(shapes, data):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _apply(data: AnyStr, spans: list[tuple[int, int]], mark: AnyStr) -> AnyStr:
    pieces, last = [], 0
    for start, end in spans:
        pieces += [data[last:start], mark]
        last = end
    pieces.append(data[last:])
    return data[:0].join(pieces)


def _redact_file(path: Path, patterns: tuple[_Compiled, ...]) -> bool:
    if not _file_has_secret(path, patterns):
        return False
    temporary = path.with_name(f".{path.name}.redacting")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    mark = REDACTED.encode()
    try:
        with open(path, "rb") as source, os.fdopen(fd, "wb") as target:
            pending = b""
            while chunk := source.read(_CHUNK_BYTES):
                data = pending + chunk
                # Hold back the tail where a secret could continue into the next chunk: from a
                # line's start (a shape may look back to it), and never inside a match.
                cut = max(0, len(data) - _MAX_MATCH_CHARS)
                cut = data.rfind(b"\n", 0, cut) + 1 or cut
                straddling = [(start, end) for start, _, end in _matches(patterns, data)]
                while inside := [start for start, end in straddling if start < cut < end]:
                    cut = min(inside)
                spans = _spans(patterns, data[:cut])
                target.write(_apply(data[:cut], spans, mark))
                pending = data[cut:]
            target.write(_apply(pending, _spans(patterns, pending), mark))
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return True


def _file_has_secret(path: Path, patterns: tuple[_Compiled, ...]) -> bool:
    with open(path, "rb") as f:
        tail = b""
        while chunk := f.read(_CHUNK_BYTES):
            window = tail + chunk
            if _spans(patterns, window):
                return True
            tail = window[-_MAX_MATCH_CHARS:]
    return False
