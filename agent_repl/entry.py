"""The program's entry point (`agent-repl`, `python -m agent_repl`).

The credentials leave the environment first, which may re-execute the program, so this imports
as little as it can before that: the standard library and `agent_repl.core.permissions.credentials`.
"""

from __future__ import annotations

from pathlib import Path


def main() -> int:
    from agent_repl.core.permissions.credentials import take_credentials

    credentials = take_credentials(Path.cwd())
    from agent_repl.cli import main as cli_main

    return cli_main(credentials=credentials)
