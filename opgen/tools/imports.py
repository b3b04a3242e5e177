"""The import graph of a Python package, read with ``ast`` (imports inside functions included).

``opgen`` is built in one direction (core → lang → model → frontend / lower → emit → tools → cli; the
runtime of generated references, the CPU twin and the harness of generated suites beside it); this module
is what ``tests/test_layers.py`` holds that line with: any strongly connected component is a cycle.
"""
from __future__ import annotations

import ast
from pathlib import Path

# Calls that import modules by name: opgen.core.family_parts loads the part ``<first argument>`` of every family
# folder (``<package>.families.<family>.<part>``), so each call counts as an import of all of them.
FAMILY_LOADERS = ("load_family_parts", "part_attr")


def modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted module name → (file, is a package ``__init__``) for every ``.py`` under the package ``root``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


def _absolute(module: str, is_pkg: bool, level: int, name: str | None) -> str:
    base = module.split(".") if is_pkg else module.split(".")[:-1]
    if level > 1:
        base = base[:len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def graph(root: Path) -> dict[str, set[str]]:
    """Module → the package's modules it imports anywhere in its body (functions and classes included).

    ``from pkg import name`` counts as an import of ``pkg.name`` when that is a module, else of ``pkg``; a call of
    a family-part loader (:data:`FAMILY_LOADERS`) as an import of every family module of its part."""
    mods = modules(root)
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for mod, (path, is_pkg) in mods.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Call):
                edges[mod] |= _family_parts(node, mods, root.name) - {mod}
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(mod, is_pkg, node.level, node.module) if node.level else (node.module or "")
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            else:
                continue
            for t in targets:
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != mod:
                    edges[mod].add(t)
    return edges


def _family_parts(call: ast.Call, mods, package: str) -> set[str]:
    """The family part modules a loader call imports (nothing for any other call)."""
    fn = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
    if fn not in FAMILY_LOADERS or not call.args or not isinstance(call.args[0], ast.Constant):
        return set()
    prefix = f"{package}.families."
    return {m for m in mods if m.startswith(prefix) and m.count(".") == 3 and m.endswith(f".{call.args[0].value}")}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return sorted(out)
