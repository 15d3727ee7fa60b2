"""The `demo` policy: the offline stand-in for people without an API key.

Rule-based, honest and a bit dim. It turns plain requests into real calls of the built-in
tools (only those the request offers), then answers from what came back with a count and a
short excerpt. It says plainly that it is the offline demo model.
"""

from __future__ import annotations

from typing import Any

from agent_repl.emulator.blocks import Block, content_blocks, text_of
from agent_repl.emulator.policies.base import (
    PolicyRequest,
    Reply,
    messages,
    strip_id_tag,
    summary_reply,
    text_block,
    tool_input,
    tool_names,
    tool_use_block,
    tool_use_id,
)
from agent_repl.emulator.policies.summary import request_kind
from agent_repl.offline.demo_edits import file_step, latest_prompt, parse_file_intent
from agent_repl.offline.demo_intents import Intent, parse_intent, working_directory
from agent_repl.offline.demo_web import describe_web_results, paused_with_results, web_call
from agent_repl.offline.summary import is_meta_text, quoted_in_earlier_summary

NAME = "the offline demo model of agent-repl"
CAPABILITIES = (
    "I can do a few plain things with the tools this session offers:\n"
    "- read a file: `read README.md`\n"
    "- find files: `find *.py`\n"
    "- search text: `grep TODO in src`\n"
    "- run a command: `run ls -la`\n"
    "- change a file: `edit README.md: replace old text with new text`\n"
    "- write a file: `write notes.txt: a line of text`\n"
    "- search the web (the API's own tool, served from fixtures here): `search the web for difflib`\n"
    "- look around: `what's in this repo?`\n"
    "Connect a real model (set ANTHROPIC_API_KEY) for anything smarter."
)
SIGN_OFF = "(Offline demo model: I only count and quote, I don't understand the content.)"
_EXCERPT_LINES = 10
_LINE_CHARS = 200


def _excerpt(lines: list[str], limit: int = _EXCERPT_LINES) -> str:
    shown = [line[:_LINE_CHARS] for line in lines[:limit]]
    more = f"\n… and {len(lines) - limit} more lines" if len(lines) > limit else ""
    return "```\n" + "\n".join(shown) + "\n```" + more


def _plural(count: int, word: str) -> str:
    if count == 1:
        return f"{count} {word}"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return f"{count} {word[:-1]}ies"
    return f"{count} {word}s"


def _is_entry(line: str, empty_marker: str) -> bool:
    """A result line that is a match, not the empty marker or a `(note)` the tool appended."""
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith(empty_marker) and not stripped.startswith("(")


def describe_result(name: str, arguments: dict[str, Any], text: str, is_error: bool) -> str:
    """One truthful paragraph about a tool result: what ran, how much came back, an excerpt."""
    lines = text.splitlines()
    if is_error:
        return f"{name} reported an error:\n{_excerpt(lines or ['(no text)'], 5)}"
    if name == "Read":
        return f"`{arguments.get('file_path', '?')}` has {_plural(len(lines), 'line')}. The start:\n{_excerpt(lines)}"
    if name == "Glob":
        files = [line for line in lines if _is_entry(line, "No files found")]
        pattern = arguments.get("pattern", "?")
        if not files:
            return f"No files match `{pattern}`."
        return f"`{pattern}` matches {_plural(len(files), 'file')}:\n{_excerpt(files)}"
    if name == "Grep":
        hits = [line for line in lines if _is_entry(line, "No matches found")]
        pattern = arguments.get("pattern", "?")
        if not hits:
            return f"Nothing matches `{pattern}`."
        return f"Found {_plural(len(hits), 'matching line')} for `{pattern}`:\n{_excerpt(hits)}"
    if name == "Bash":
        command = str(arguments.get("command", "?"))
        if not text.strip():
            return f"`{command}` finished with no output."
        if command.split()[:1] == ["ls"]:
            entries = [ln.split()[-1] for ln in lines if ln.strip() and not ln.startswith("total ")]
            entries = [e for e in entries if e not in (".", "..")]
            return f"This directory has {_plural(len(entries), 'entry')}:\n{_excerpt(entries, 20)}"
        return f"`{command}` printed {_plural(len(lines), 'line')}:\n{_excerpt(lines)}"
    return f"{name} returned {_plural(len(lines), 'line')}:\n{_excerpt(lines)}"


_INTERRUPT_MARK = "[Request interrupted"


def _latest_request(body: dict[str, Any]) -> str:
    """The last non-meta text the user typed in the final message."""
    history = messages(body)
    if not history or history[-1].get("role") != "user":
        return ""
    texts = [
        strip_id_tag(str(b.get("text", "")))
        for b in content_blocks(history[-1].get("content"))
        if b.get("type") == "text" and not is_meta_text(str(b.get("text", "")))
    ]
    texts = [t for t in texts if t.strip() and not t.lstrip().startswith(_INTERRUPT_MARK)]
    return texts[-1].strip() if texts else ""


def _pending_results(body: dict[str, Any]) -> list[tuple[Block, Block | None]]:
    """Tool results in the final user message, each with the tool_use that asked for it."""
    history = messages(body)
    if not history or history[-1].get("role") != "user":
        return []
    results = [b for b in content_blocks(history[-1].get("content")) if b.get("type") == "tool_result"]
    uses: dict[str, Block] = {}
    if len(history) > 1 and history[-2].get("role") == "assistant":
        uses = {
            str(b.get("id")): b
            for b in content_blocks(history[-2].get("content"))
            if b.get("type") == "tool_use"
        }
    return [(result, uses.get(str(result.get("tool_use_id")))) for result in results]


def _request_before_compaction(body: dict[str, Any]) -> str:
    """The newest request a compaction summary in the final message quotes (a turn compacted midway)."""
    history = messages(body)
    if not history or history[-1].get("role") != "user":
        return ""
    for block in reversed(content_blocks(history[-1].get("content"))):
        if block.get("type") == "text":
            quotes = quoted_in_earlier_summary(strip_id_tag(str(block.get("text", ""))))
            if quotes:
                return quotes[-1].strip()
    return ""


def _after_compaction(request: str, cwd: str | None) -> str:
    # Calling the tool again could repeat a change already made, so the demo says where it stands.
    intent = parse_intent(request, cwd) or parse_file_intent(request, cwd)
    if intent is None:
        return f"The conversation was compacted; your last request was `{request}`, which I don't understand.\n\n{CAPABILITIES}"
    return (
        f"The conversation was compacted while I worked on `{request}`; its results are in the summary."
        f" Ask again to have it done once more. ({NAME})"
    )


class DemoPolicy:
    def reply(self, request: PolicyRequest) -> Reply:
        body = request.body
        kind = request_kind(body)
        if kind is not None:
            return summary_reply(request, kind)
        web_results = paused_with_results(body)
        if web_results:
            return Reply([text_block(describe_web_results(web_results))])
        prompt = latest_prompt(body)
        if prompt and prompt[0] == len(messages(body)) - 1:
            call = web_call(body, prompt[1], request.conversation_key or request.request_index)
            if call is not None:
                return call
        change = parse_file_intent(prompt[1], working_directory(body)) if prompt else None
        if prompt and change:
            key = request.conversation_key or request.request_index
            return file_step(body, prompt[0], change, tool_names(body), key)
        results = _pending_results(body)
        text = _latest_request(body)
        # A prompt typed after an interrupted or denied call shares the message with that call's
        # result: the new prompt is what to answer, not the old result.
        if results and not text:
            return self._answer_from(results)
        if not text:
            resumed = _request_before_compaction(body)
            if resumed:
                return Reply([text_block(_after_compaction(resumed, working_directory(body)))])
        intent = parse_intent(text, working_directory(body)) if text else None
        if intent is None:
            return Reply([text_block(f"I'm {NAME}, and I don't understand that request.\n\n{CAPABILITIES}")])
        if intent.tool == "greeting":
            return Reply(
                [text_block(f"Hello, I'm {NAME}: a small rule-based stand-in, not Claude.\n\n{CAPABILITIES}")]
            )
        return self._call(intent, request)

    def completed(self, request: PolicyRequest, reply: Reply) -> None:
        pass

    def _call(self, intent: Intent, request: PolicyRequest) -> Reply:
        offered = tool_names(request.body)
        if intent.tool == "overview":
            if "Bash" in offered:
                intent = Intent("Bash", {"command": "ls -la"}, intent.say)
            elif "Glob" in offered:
                intent = Intent("Glob", {"pattern": "*"}, intent.say)
            else:
                return Reply(
                    [
                        text_block(
                            f"I'd need the Bash or Glob tool to look around, and this session offers neither. ({NAME})"
                        )
                    ]
                )
        if intent.tool not in offered:
            return Reply(
                [
                    text_block(
                        f"I'd use the {intent.tool} tool for that, but this session doesn't offer it. ({NAME})"
                    )
                ]
            )
        block_id = tool_use_id(
            "demo", request.conversation_key or request.request_index, intent.tool, intent.input
        )
        return Reply(
            [text_block(intent.say), tool_use_block(block_id, intent.tool, intent.input)], "tool_use"
        )

    def _answer_from(self, results: list[tuple[Block, Block | None]]) -> Reply:
        paragraphs = []
        for result, use in results:
            name = str(use.get("name", "a tool")) if use else "a tool"
            arguments = tool_input(use) if use else {}
            paragraphs.append(
                describe_result(name, arguments, strip_id_tag(text_of(result)), bool(result.get("is_error")))
            )
        return Reply([text_block("\n\n".join([*paragraphs, SIGN_OFF]))])
