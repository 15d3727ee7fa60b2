"""What one turn of memory_growth.py costs in core history alone: pydantic entries plus FactCache facts.

    .venv/bin/python benchmarks/entry_memory.py

Builds 1,000 prompt/reply pairs shaped like the benchmark's (no app, no model) and prints the live
bytes per turn by source line (tracemalloc), so growth outside the history can be told apart.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import gc
import tracemalloc

from agent_repl.context.facts import FactCache
from agent_repl.core.model.messages import AssistantMessage, TextBlock, Usage, UserMessage
from agent_repl.core.model.tokens import cl100k_tokens

cl100k_tokens("warm up the encoder")
tracemalloc.start(4)
gc.collect()
a = tracemalloc.take_snapshot()
keep = []
cache = FactCache()
for t in range(1000):
    u = UserMessage(
        content=f"Turn {t}: in two sentences, what is the difference between a list and a tuple?",
        session_id="s" * 36,
    )
    r = AssistantMessage(
        message_id=f"msg_{t:020d}",
        model="claude-demo",
        content=[
            TextBlock(
                text="A list is mutable and a tuple is not. Lists suit changing data; tuples suit fixed records. "
                * 2
            )
        ],
        usage=Usage(input_tokens=10, output_tokens=20),
        request_id=f"req_{t:020d}",
        prefix_digest="0" * 64,
    )
    keep += [u, r]
    cache.get(u)
    cache.get(r)
gc.collect()
b = tracemalloc.take_snapshot()
tot = sum(s.size_diff for s in b.compare_to(a, "filename"))
print(f"per turn: {tot / 1000:.0f} B")
for s in b.compare_to(a, "lineno")[:12]:
    print(f"{s.size_diff / 1000:8.0f} B/turn {s.traceback[0]}")
