"""agent-repl: a terminal coding agent built around a layered context-management pipeline."""

__version__ = "0.1.0"
