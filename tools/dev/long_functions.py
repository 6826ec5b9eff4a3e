#!/usr/bin/env python3
"""Lists function bodies longer than a limit (default 150 lines) in sim/, models/, reports/ and
tools/; exit 1 if there is one. A function is a top-level or class-member definition whose body
is the first brace after its parameter list; braces are counted outside strings and comments.
  tools/dev/long_functions.py [--limit N] [--allow FILE] [ROOT]
With --allow (the CI gate, ctest "lint: no function over 150 lines"), a function listed in FILE
(`path function length`, one a line, '#' comments) may stay over the limit, but not grow past its
listed length; a listed function that is gone or now within its length must leave the list (or
have its length lowered): the list only shrinks. Exit 1 on any breach, with what to do.
"""
import os
import re
import sys

args = sys.argv[1:]
limit = 150
allow_file = None
while args[:1] in (["--limit"], ["--allow"]):
    if args[0] == "--limit":
        limit = int(args[1])
    else:
        allow_file = args[1]
    args = args[2:]
ROOT = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "..")
NOT_FUNCTIONS = ("if", "for", "while", "switch", "catch", "namespace", "struct", "class", "enum", "else", "do")


def strip(line, in_block):
    """The code of `line` without comments and string literals. `in_block` carries what is still
    open from the line before: False, True (a /* comment) or the closing ")delim\"" of a raw string
    (whose text may hold "/*" or braces)."""
    out, i = [], 0
    while i < len(line):
        if isinstance(in_block, str):
            j = line.find(in_block, i)
            if j < 0:
                return "".join(out), in_block
            i, in_block = j + len(in_block), False
        elif in_block:
            j = line.find("*/", i)
            if j < 0:
                return "".join(out), True
            i, in_block = j + 2, False
        elif line.startswith("//", i):
            break
        elif line.startswith("/*", i):
            in_block, i = True, i + 2
        elif line.startswith('R"', i) and (i == 0 or not (line[i - 1].isalnum() or line[i - 1] == "_")):
            k = line.find("(", i + 2)
            in_block, i = ")" + line[i + 2:k] + '"', k + 1
        elif line[i] in "\"'":
            q, i = line[i], i + 1
            while i < len(line) and line[i] != q:
                i += 2 if line[i] == "\\" else 1
            i += 1
        else:
            out.append(line[i])
            i += 1
    return "".join(out), in_block


def scan(path):
    """Every function body: a '{' opened outside a function whose statement (the text since the
    last ';', '{' or '}') has a parameter list and is not a control statement or a type."""
    found = []
    depth, fn_depth, start, name, in_block, stmt = 0, None, None, None, False, ""
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, raw in enumerate(f, 1):
            code, in_block = strip(raw.rstrip("\n"), in_block)
            if code.lstrip().startswith("#"):
                continue
            for ch in code:
                if ch == "{":
                    if fn_depth is None:
                        head = stmt.strip()
                        words = head.split()
                        if "(" in head and ")" in head and words and words[0] not in NOT_FUNCTIONS and "=" not in head.split("(")[0]:
                            before = head.split("(")[0].split()
                            fn_depth, start, name = depth, n, before[-1] if before else "?"
                    depth += 1
                    stmt = ""
                elif ch == "}":
                    depth -= 1
                    stmt = ""
                    if fn_depth is not None and depth == fn_depth:
                        if n - start + 1 > limit:
                            found.append((n - start + 1, name, start))
                        fn_depth = None
                elif ch == ";":
                    stmt = ""
                else:
                    stmt += ch
            stmt += " "
    return found


def main():
    rows = []
    for top in ("sim", "models", "reports", "tools"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            if "kafka-oracle" in dirpath:
                continue
            for name in sorted(files):
                if name.endswith(".cpp") or name.endswith(".hpp"):
                    path = os.path.join(dirpath, name)
                    for length, fn, line in scan(path):
                        rows.append((length, f"{os.path.relpath(path, ROOT)}:{line}", fn))
    if allow_file is not None:
        return gate(rows, read_allow(allow_file))
    for length, where, fn in sorted(rows, reverse=True):
        print(f"{length:5} lines  {where}  {fn}")
    print(f"functions over {limit} lines: {len(rows)}")
    return 1 if rows else 0


def read_allow(path):
    """{(path, function): length} from the allowlist; a malformed line is an error."""
    allowed = {}
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) != 3 or not parts[2].isdigit():
                sys.exit(f"{path}:{n}: expected `path function length`, got: {raw.rstrip()}")
            allowed[(parts[0], parts[1])] = int(parts[2])
    return allowed


def gate(rows, allowed):
    problems, seen = [], set()
    for length, where, fn in sorted(rows, reverse=True):
        key = (where.rsplit(":", 1)[0], fn)
        seen.add(key)
        if key not in allowed:
            problems.append(f"{where}: {fn} is {length} lines (limit {limit}): split it along its sections")
        elif length > allowed[key]:
            problems.append(f"{where}: {fn} grew to {length} lines (allowed {allowed[key]}): "
                            "shorten it; the allowlist only shrinks")
        elif length < allowed[key]:
            problems.append(f"{where}: {fn} is now {length} lines: lower its length in the allowlist to {length}")
    for key, length in sorted(allowed.items()):
        if key not in seen:
            problems.append(f"{key[0]}: {key[1]} ({length} in the allowlist) is no longer over {limit} "
                            "lines (or gone): remove its line from the allowlist")
    for p in problems:
        print(p)
    print(f"functions over {limit} lines: {len(rows)}, allowlisted: {len(allowed)}, problems: {len(problems)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
