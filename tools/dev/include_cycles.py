#!/usr/bin/env python3
"""Fails (exit 1) on an include cycle between the project's folders.

The folders are the directories of sim/, models/*, reports/, tools/ (and their subfolders);
an arrow A -> B means a file in A includes a file in B. Arrows must run one way: the check
prints every strongly connected group of folders with the includes that close it.
  tools/dev/include_cycles.py [ROOT]
"""
import os
import re
import sys
from collections import defaultdict

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
TOPS = ("sim", "models", "reports", "tools")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(path):
    return os.path.dirname(path)


def main():
    edges = defaultdict(lambda: defaultdict(list))  # folder -> folder -> [(file, include)]
    for top in TOPS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            if "kafka-oracle" in dirpath:
                continue
            for name in files:
                if not name.endswith((".cpp", ".hpp")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, ROOT)
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for inc in INCLUDE.findall(text):
                    if not inc.startswith(TOPS):
                        continue
                    a, b = folder_of(rel), folder_of(inc)
                    if a != b:
                        edges[a][b].append((rel, inc))
    # Tarjan's strongly connected components over the folder graph.
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]
    nodes = sorted(set(edges) | {b for a in edges for b in edges[a]})

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    if not comps:
        print(f"include cycles: none between {len(nodes)} folders")
        return 0
    for comp in comps:
        print("include cycle between folders: " + ", ".join(comp))
        for a in comp:
            for b in comp:
                for rel, inc in edges[a].get(b, [])[:3]:
                    print(f"  {a} -> {b}: {rel} includes {inc}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
