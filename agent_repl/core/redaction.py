"""Keeping the API key out of what the agent stores.

A tool's output can contain the key (Bash `env`, a `.env` file read with Read). Every tool result
passes through `SecretRedactor.output` before it enters the history, so neither the transcript,
the tool-results files, the model nor the session notes ever hold it; Bash also rewrites its
output file with `redact_file` before it reads or keeps it. Only the exact secret strings are
replaced; text the user types is stored as typed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agent_repl.core.messages import TextBlock
from agent_repl.core.tool import ToolOutput

REDACTED = "[REDACTED]"
# Shorter values ("none", a test placeholder) would redact ordinary words.
MIN_SECRET_CHARS = 8
_CHUNK_BYTES = 1 << 20


@dataclass(frozen=True)
class SecretRedactor:
    secrets: tuple[str, ...] = ()

    @classmethod
    def of(cls, *values: str | None) -> SecretRedactor:
        kept = {v for v in values if v and len(v) >= MIN_SECRET_CHARS}
        return cls(tuple(sorted(kept, key=len, reverse=True)))

    def text(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

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
        if not self.secrets:
            return output
        if isinstance(output.content, str):
            content: Any = self.text(output.content)
        else:
            content = [
                b.model_copy(update={"text": self.text(b.text)}) if isinstance(b, TextBlock) else b
                for b in output.content
            ]
        return replace(
            output, content=content, structured=self.value(output.structured), summary=self.text(output.summary)
        )

    def file(self, path: Path) -> bool:
        """Rewrite `path` without the secrets, in bounded memory; False when none was in it."""
        return redact_file(path, self.secrets)


def redact_file(path: Path, secrets: tuple[str, ...]) -> bool:
    needles = [s.encode("utf-8", "surrogateescape") for s in secrets]
    if not needles or not _contains(path, needles):
        return False
    keep = max(len(n) for n in needles) - 1
    temporary = path.with_name(f".{path.name}.redacting")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with open(path, "rb") as source, os.fdopen(fd, "wb") as target:
            pending = b""
            while chunk := source.read(_CHUNK_BYTES):
                pending = _replace_all(pending + chunk, needles)
                # Hold back a tail that could be the start of a secret split across chunks.
                target.write(pending[:-keep] if keep else pending)
                pending = pending[-keep:] if keep else b""
            target.write(_replace_all(pending, needles))
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return True


def _replace_all(data: bytes, needles: list[bytes]) -> bytes:
    for needle in needles:
        data = data.replace(needle, REDACTED.encode())
    return data


def _contains(path: Path, needles: list[bytes]) -> bool:
    overlap = max(len(n) for n in needles) - 1
    with open(path, "rb") as f:
        tail = b""
        while chunk := f.read(_CHUNK_BYTES):
            window = tail + chunk
            if any(n in window for n in needles):
                return True
            tail = window[-overlap:] if overlap else b""
    return False
