"""`python -m agent_repl.offline`: the emulator serving the offline demo model on loopback.

The same options as `python -m agent_repl.emulator`; `--policy` defaults to `demo`, and summaries
are the agent's own nine sections.
"""

from __future__ import annotations

import sys

from agent_repl.emulator.__main__ import main
from agent_repl.offline.demo import DemoPolicy
from agent_repl.offline.summary import AgentSummarizer

if __name__ == "__main__":
    sys.exit(
        main(
            prog="python -m agent_repl.offline",
            named_policies={"demo": DemoPolicy},
            default_policy="demo",
            summarizer=AgentSummarizer(),
        )
    )
