"""No import cycle between cave_tui's packages: at every level, the subpackages (and the
top-level modules) import each other in one direction only."""

from __future__ import annotations

import grimp
import pytest


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("cave_tui", cache_dir=None)


def _cycles(graph: grimp.ImportGraph, parent: str, *, packages_only: bool) -> list[list[str]]:
    """Groups of *parent*'s children that import each other, directly or through others
    (Tarjan's strongly connected components of the children's import graph)."""
    children = sorted(
        c for c in graph.find_children(parent) if not packages_only or graph.find_children(c)
    )
    edges = {
        a: [
            b
            for b in children
            if a != b and graph.direct_import_exists(importer=a, imported=b, as_packages=True)
        ]
        for a in children
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in edges[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for child in children:
        if child not in index:
            visit(child)
    return groups


def test_the_top_level_packages_and_modules_have_no_cycle(graph: grimp.ImportGraph) -> None:
    assert _cycles(graph, "cave_tui", packages_only=False) == []


def test_no_subpackages_of_one_package_import_each_other_both_ways(
    graph: grimp.ImportGraph,
) -> None:
    packages = [m for m in graph.modules if graph.find_children(m)]
    assert len(packages) > 10
    found = {p: c for p in packages if (c := _cycles(graph, p, packages_only=True))}
    assert found == {}
