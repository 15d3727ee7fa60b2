"""Glob patterns (`**/*.py`, `src/**/*.{ts,tsx}`) as regular expressions over `/`-separated paths."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

_MAGIC = re.compile(r"[*?\[{]")
MAX_BRACE_EXPANSIONS = 256


def _split_braces(body: str) -> list[str]:
    """Split the inside of `{...}` at its top-level commas."""
    parts, depth, current = [], 0, ""
    for char in body:
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += char == "{"
        depth -= char == "}"
        current += char
    parts.append(current)
    return parts


def expand_braces(pattern: str) -> list[str]:
    """`a.{py,pyi}` -> [`a.py`, `a.pyi`], nested braces included; an unmatched brace stays literal."""
    start = pattern.find("{")
    if start < 0:
        return [pattern]
    depth = 0
    for end in range(start, len(pattern)):
        depth += pattern[end] == "{"
        depth -= pattern[end] == "}"
        if depth == 0:
            break
    else:
        return [pattern]
    head, body, tail = pattern[:start], pattern[start + 1 : end], pattern[end + 1 :]
    results: list[str] = []
    for option in _split_braces(body):
        for expanded in expand_braces(head + option + tail):
            results.append(expanded)
            if len(results) >= MAX_BRACE_EXPANSIONS:
                return results
    return results


def _segment_regex(segment: str) -> str:
    out, i = "", 0
    while i < len(segment):
        char = segment[i]
        if char == "*":
            out += "[^/]*"
        elif char == "?":
            out += "[^/]"
        elif char == "[" and (close := segment.find("]", i + 2)) > 0:
            body = segment[i + 1 : close]
            negate = body[:1] in ("!", "^")
            body = body[1:] if negate else body
            out += "[" + ("^/" if negate else "") + body.replace("\\", "\\\\") + "]"
            i = close
        else:
            out += re.escape(char)
        i += 1
    return out


def _pattern_regex(pattern: str) -> str:
    segments = [s for s in pattern.split("/") if s not in ("", ".")]
    out = ""
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            out += ".*" if last else "(?:[^/]*/)*"
        else:
            out += _segment_regex(segment) + ("" if last else "/")
    return out


@dataclass(frozen=True)
class CompiledGlob:
    """A pattern split into a literal base directory and a matcher for paths below it."""

    base: str  # literal leading segments ("" for none; absolute when the pattern was)
    regex: re.Pattern[str]
    # How many directory levels below `base` a match can be (math.inf with `**`).
    max_depth: float


def compile_glob(pattern: str) -> CompiledGlob:
    segments = pattern.split("/")
    prefix: list[str] = []
    for segment in segments[:-1]:
        if _MAGIC.search(segment):
            break
        prefix.append(segment)
    rest = "/".join(segments[len(prefix) :])
    base = "/".join(prefix) or ("/" if pattern.startswith("/") else "")
    alternatives = expand_braces(rest)
    regex = re.compile("|".join(f"(?:{_pattern_regex(a)})" for a in alternatives), re.DOTALL)
    depths = [math.inf if "**" in a.split("/") else len([s for s in a.split("/") if s]) for a in alternatives]
    return CompiledGlob(base, regex, max(depths, default=1))
