#!/usr/bin/env python3
"""The include-cycle gate can fail: tools/dev/include_cycles.py run over tiny synthetic trees.

A two-folder cycle and a three-folder cycle must exit 1 and name exactly the folders of the
cycle and the includes that close it; the same trees with the back edge removed must exit 0.
Includes within one folder, system headers and generated headers ("build_info.hpp") are no arrows.
  tests/dev/include_cycles_test.py PATH/TO/include_cycles.py
"""
import os
import shutil
import subprocess
import sys
import tempfile

SCRIPT = sys.argv[1]
failures = []


def tree(files):
    root = tempfile.mkdtemp(prefix="include-cycles-")
    for rel, includes in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write("#pragma once\n#include <vector>\n#include \"build_info.hpp\"\n")
            for inc in includes:
                f.write(f'#include "{inc}"\n')
    return root


def run(root):
    try:
        p = subprocess.run([sys.executable, SCRIPT, root], capture_output=True, text=True, check=False)
    finally:
        shutil.rmtree(root)
    return p.returncode, p.stdout.splitlines()


def expect(name, got, want):
    if got != want:
        failures.append(f"{name}: got {got!r}, want {want!r}")


# Two folders including each other (a header and a source file), plus an include inside a folder.
two = {
    "models/a/x.hpp": ["models/b/y.hpp", "models/a/z.hpp"],
    "models/a/z.hpp": [],
    "models/b/y.cpp": ["models/a/x.hpp"],
    "models/b/y.hpp": [],
}
code, out = run(tree(two))
expect("two folders: exit", code, 1)
expect("two folders: report", out, [
    "include cycle between folders: models/a, models/b",
    "  models/a -> models/b: models/a/x.hpp includes models/b/y.hpp",
    "  models/b -> models/a: models/b/y.cpp includes models/a/x.hpp",
])
two["models/b/y.cpp"] = ["models/b/y.hpp"]
code, out = run(tree(two))
expect("two folders, back edge removed: exit", code, 0)
expect("two folders, back edge removed: report", out, ["include cycles: none between 2 folders"])

# sim -> reports -> tools -> sim closes a cycle of three tops; tools/sub only includes into it.
three = {
    "sim/k.hpp": ["reports/r.hpp"],
    "reports/r.hpp": ["tools/t.hpp"],
    "tools/t.hpp": ["sim/k.hpp"],
    "tools/sub/s.cpp": ["tools/t.hpp", "sim/k.hpp"],
}
code, out = run(tree(three))
expect("three folders: exit", code, 1)
expect("three folders: report", out, [
    "include cycle between folders: reports, sim, tools",
    "  reports -> tools: reports/r.hpp includes tools/t.hpp",
    "  sim -> reports: sim/k.hpp includes reports/r.hpp",
    "  tools -> sim: tools/t.hpp includes sim/k.hpp",
])
three["tools/t.hpp"] = []
code, out = run(tree(three))
expect("three folders, back edge removed: exit", code, 0)
expect("three folders, back edge removed: report", out, ["include cycles: none between 4 folders"])

for f in failures:
    print("FAIL " + f)
print(f"{8 - len(failures)}/8 checks passed")
sys.exit(1 if failures else 0)
