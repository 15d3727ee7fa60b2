"""No module of agent_repl or tools imports itself back: every import counts, including those inside
functions and under TYPE_CHECKING, because a cycle hidden in a lazy import is still a tangle."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The repository's `tools/` folder is the package `agent_repl.tools` (agent_repl/tools links to it).
PACKAGES = {"agent_repl": "agent_repl", "tools": "agent_repl.tools"}


def module_files() -> dict[str, Path]:
    """Every module of the packages by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = [package, *path.relative_to(ROOT / folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imported_modules(name: str, source: str, known: set[str], *, is_package: bool = False) -> set[str]:
    """The project modules that module `name` (whose text is `source`) imports anywhere."""
    targets: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from package import module` names the submodule; `from module import name` the module.
            targets.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names)
    return {target for target in targets if target in known and target != name}


def import_graph() -> dict[str, set[str]]:
    files = module_files()
    known = set(files)
    return {
        name: imported_modules(name, path.read_text(), known, is_package=path.name == "__init__.py")
        for name, path in files.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))
            elif step not in index:
                index[step] = low[step] = len(index)
                stack.append(step)
                on_stack.add(step)
                work.append((step, iter(sorted(graph[step]))))
            elif step in on_stack:
                low[node] = min(low[node], index[step])
    return groups


def test_the_graph_sees_lazy_type_only_and_relative_imports():
    known = {"p", "p.a", "p.b", "p.c", "p.d", "p.e", "p.f"}
    source = (
        "from typing import TYPE_CHECKING\n"
        "import p.a\n"
        "from p import b\n"
        "from .c import thing\n"
        "if TYPE_CHECKING:\n"
        "    from p.d import Other\n"
        "def later():\n"
        "    from p.e import helper\n"
        "    return helper\n"
    )
    assert imported_modules("p.f", source, known) == {"p.a", "p.b", "p.c", "p.d", "p.e"}
    graph = import_graph()
    assert "agent_repl.core.model.messages" in graph["agent_repl.transcript.convert"]
    assert "agent_repl.tools._common" in graph["agent_repl.tools.bash"]


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles():
    found = cycles(import_graph())
    graph = import_graph()
    described = [
        "; ".join(f"{a} -> {b}" for a in group for b in sorted(graph[a]) if b in group) for group in found
    ]
    assert found == [], "import cycles:\n" + "\n".join(described)


# What the session composes takes it through protocols (core's TurnSession, context's ContextSession).
COMPOSED = ("agent_repl.core", "agent_repl.context", "agent_repl.transcript", "agent_repl.mcp", "agent_repl.tools")


def test_what_the_session_composes_never_imports_it():
    graph = import_graph()
    importing = sorted(name for name in graph if name.startswith(COMPOSED) and "agent_repl.session" in graph[name])
    assert importing == [], f"these import agent_repl.session (even for a type), which composes them: {importing}"
