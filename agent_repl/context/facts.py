"""Per-entry facts computed once, so a turn's cost follows what changed, not the view's size.

History entries are never edited in place (stages make copies), so what an entry's blocks look
like on the wire, how many tokens they hold and which tool calls they carry can be kept by the
entry's identity. The cache holds the entry itself, so an id is never reused while cached, and
it forgets entries that have left the view.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from agent_repl.context.ids import id_tag
from agent_repl.core.api.thinking_prefix import BlockDigests
from agent_repl.core.model.messages import (
    AssistantMessage,
    CompactionBlock,
    ContentBlock,
    ImageBlock,
    Message,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    wire_block,
)
from agent_repl.core.model.tokens import cl100k_tokens, cl100k_upper_bound


@dataclass(slots=True)
class EntryFacts:
    cl100k: int
    images: int
    tool_uses: tuple[tuple[str, str], ...]  # (tool_use_id, tool name)
    result_ids: tuple[str, ...]
    # The entry's blocks as wire dicts, `[id:]`-tagged when it is a non-meta user entry. Shared
    # between turns: whoever builds on them copies, never mutates.
    wire_blocks: tuple[dict[str, Any], ...]


def block_to_wire(block: ContentBlock) -> dict[str, Any]:
    """One content block as the API takes it; the same block always gives the same dict."""
    return wire_block(block)


def _blank(block: ContentBlock) -> bool:
    """Text with nothing but whitespace: the API refuses a message whose only text it is
    (Claude Code transcripts hold such "\n\n" records), and it says nothing anyway."""
    return isinstance(block, TextBlock) and not block.text.strip()


def tagged_user_blocks(message: UserMessage, tag: bool = True) -> list[dict[str, Any]]:
    """The user entry's blocks, with its `[id:]` tag inside each tool result or after its text.

    A result holding `tool_reference` blocks (ToolSearch's) is left as it is, so it stays nothing
    but references; the tag then follows it as a text block of its own.
    """
    blocks = [block_to_wire(b) for b in message.blocks() if not _blank(b)]
    if not tag or message.is_meta:
        return blocks
    label = id_tag(message.uuid)
    tagged = False
    for index, block in enumerate(blocks):
        if block["type"] == "tool_result":
            content = block.get("content", "")
            if isinstance(content, str):
                blocks[index] = {**block, "content": f"{content}\n{label}" if content else label}
            elif any(inner.get("type") == "tool_reference" for inner in content):
                continue
            else:
                blocks[index] = {**block, "content": [*content, {"type": "text", "text": label}]}
            tagged = True
    if not tagged:
        for index in range(len(blocks) - 1, -1, -1):
            if blocks[index]["type"] == "text":
                blocks[index] = {**blocks[index], "text": f"{blocks[index]['text']} {label}"}
                tagged = True
                break
    if not tagged and blocks:
        blocks.append({"type": "text", "text": label})
    return blocks


def wire_blocks(message: Message, tag: bool = True) -> list[dict[str, Any]]:
    if isinstance(message, AssistantMessage):
        return [block_to_wire(b) for b in message.content if not _blank(b)]
    if isinstance(message, UserMessage):
        return tagged_user_blocks(message, tag)
    return []


def _block_tokens(block: ContentBlock, count: Callable[[str], int]) -> tuple[int, int]:
    if isinstance(block, TextBlock):
        return count(block.text), 0
    if isinstance(block, ThinkingBlock):
        return count(block.thinking), 0
    if isinstance(block, ToolUseBlock):
        return count(block.name) + count(json.dumps(block.input, ensure_ascii=False)), 0
    if isinstance(block, ToolResultBlock):
        if isinstance(block.content, str):
            return count(block.content), 0
        tokens = images = 0
        for inner in block.content:
            if isinstance(inner, TextBlock):
                tokens += count(inner.text)
            elif isinstance(inner, ImageBlock):
                images += 1
        return tokens, images
    if isinstance(block, ImageBlock):
        return 0, 1
    if isinstance(block, CompactionBlock):
        return count(block.content or ""), 0
    return 0, 0


def compute_facts(message: Message, count: Callable[[str], int]) -> EntryFacts:
    if isinstance(message, SystemMessage):
        return EntryFacts(0, 0, (), (), ())
    blocks = message.content if isinstance(message, AssistantMessage) else message.blocks()
    tokens = images = 0
    for block in blocks:
        t, i = _block_tokens(block, count)
        tokens += t
        images += i
    uses = tuple((b.id, b.name) for b in blocks if isinstance(b, ToolUseBlock))
    results = tuple(b.tool_use_id for b in blocks if isinstance(b, ToolResultBlock))
    return EntryFacts(tokens, images, uses, results, tuple(wire_blocks(message)))


# At most this many digests are kept (the newest win): a resume needs the view's, not the history's.
MAX_KNOWN_COUNTS = 20_000
# Exact counts of the texts the pipeline writes itself in place of others (microcompact's marker,
# agent_repl.context.state.CLEARED_TOOL_RESULT), known without the encoder; a test checks them.
FIXED_TEXT_COUNTS = {"[Old tool result content cleared]": 7}
# The longest of cl100k's tokens, in bytes: no text has fewer tokens than its length over this.
LONGEST_TOKEN_BYTES = 128


def text_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def plausible_count(size: int, count: int) -> bool:
    """Whether `count` could be the cl100k count of a text of `size` UTF-8 bytes."""
    return 0 < count <= size <= count * LONGEST_TOKEN_BYTES


class UncountedText(Exception):
    """A count was asked, under `FactCache.known_only`, of a text nobody has counted."""


class FactCache:
    """`count`: how a text's cl100k tokens are counted (exactly, unless a projection is trying
    upper bounds first: agent_repl.context.projector).

    Exact counts are also kept by the text's digest: those counted here (`remember`; then
    `take_counted` gives the new ones to write) and those a resume read back (`learn`), so a text
    an earlier process counted is known without loading the encoder."""

    def __init__(self, count: Callable[[str], int] = cl100k_tokens, *, remember: bool = True) -> None:
        self._count = count
        self._remember = remember
        self._entries: dict[int, tuple[Message, EntryFacts]] = {}
        self._texts: dict[str, int] = dict(FIXED_TEXT_COUNTS)
        # digest -> (UTF-8 bytes, exact count), oldest first.
        self._known: dict[str, tuple[int, int]] = {}
        self._counted: list[tuple[str, int, int]] = []
        # tool_use_id -> tool name of every call seen; ids are unique, so this never goes stale.
        self.tool_names: dict[str, str] = {}
        # Each wire block's own digest for the thinking prefix chain (core/api/thinking_prefix.py).
        self.block_digests: BlockDigests = {}

    def text_tokens(self, text: str) -> int:
        cached = self._texts.get(text)
        if cached is None:
            cached = self._known_count(text)
            if cached is None:
                cached = self._count(text)
                self._note(text, cached)
            self._texts[text] = cached
        return cached

    @contextmanager
    def known_only(self) -> Iterator[None]:
        """Within it, a text not counted before (here, or by the session a resume read the counts
        of) raises UncountedText instead of being counted: what can be known without the encoder."""
        count = self._count

        def refuse(text: str) -> int:
            raise UncountedText

        self._count = refuse
        try:
            yield
        finally:
            self._count = count

    def known(self, text: str) -> int | None:
        """The exact count when this cache knows it (counted, or read back by digest), else None."""
        cached = self._texts.get(text)
        return self._known_count(text) if cached is None else cached

    def upper_bound(self, text: str) -> int:
        """The exact count when this cache knows it, else one never below it (no encoder needed)."""
        cached = self.known(text)
        return cl100k_upper_bound(text) if cached is None else cached

    def lower_bound(self, text: str) -> int:
        """The exact count when this cache knows it, else one never above it (no encoder needed)."""
        cached = self.known(text)
        if cached is not None:
            return cached
        return -(-len(text.encode("utf-8", "surrogatepass")) // LONGEST_TOKEN_BYTES)

    def _known_count(self, text: str) -> int | None:
        if not self._known or not text:
            return None
        data = text.encode("utf-8", "surrogatepass")
        hit = self._known.get(text_digest(data))
        return hit[1] if hit is not None and hit[0] == len(data) else None

    def _note(self, text: str, count: int) -> None:
        if not self._remember or not text:
            return
        data = text.encode("utf-8", "surrogatepass")
        digest = text_digest(data)
        if digest not in self._known:
            self._counted.append((digest, len(data), count))
            self._keep(digest, len(data), count)

    def _keep(self, digest: str, size: int, count: int) -> None:
        self._known[digest] = (size, count)
        if len(self._known) > MAX_KNOWN_COUNTS:
            self._trim()

    def _trim(self) -> None:
        """Forget the oldest digests over `MAX_KNOWN_COUNTS`."""
        known = self._known
        for digest in list(itertools.islice(known, len(known) - MAX_KNOWN_COUNTS)):
            del known[digest]

    def learn(self, counts: Iterable[object]) -> None:
        """Exact counts read back from the transcript, [digest, UTF-8 bytes, count] each; one not
        of that shape or implausible for its length is passed over (the text is then counted)."""
        known = self._known
        for entry in counts:
            if not isinstance(entry, list | tuple) or len(entry) != 3:
                continue
            digest, size, count = entry
            if (
                type(size) is int
                and type(count) is int
                and isinstance(digest, str)
                and plausible_count(size, count)
            ):
                known[digest] = (size, count)
        if len(known) > MAX_KNOWN_COUNTS:
            self._trim()

    def take_counted(self) -> list[tuple[str, int, int]]:
        """The texts counted here since the last call, for the transcript (once)."""
        counted, self._counted = self._counted, []
        return counted

    def get(self, message: Message) -> EntryFacts:
        hit = self._entries.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        facts = compute_facts(message, self.text_tokens)
        self._entries[id(message)] = (message, facts)
        self.tool_names.update(facts.tool_uses)
        return facts

    def forget_all_but(self, view: list[Message]) -> None:
        """Drop entries no longer in the view (copies from earlier turns, compacted history)."""
        if len(self._entries) > 2 * len(view) + 1_000:
            keep = {id(m) for m in view}
            self._entries = {k: v for k, v in self._entries.items() if k in keep}
            self.block_digests.clear()
