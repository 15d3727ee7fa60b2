"""Replaying real agent trajectories through agent-repl and its peers' strategies (see README.md)."""
