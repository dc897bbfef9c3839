"""Which bundled grammars hang or crash on hostile input: every grammar, a set of unbalanced nests and
token soups, each parse in a subprocess of its own with a timeout.

    python benchmarks/grammar_fuzz.py [--timeout 8] [--slow 0.2] [--langs a,b]

Prints the cases slower than ``--slow`` seconds, those that time out, and those that crash (a negative
exit is the signal), then the count. Found so far: Swift's nested comments (bounded before the parse) and a
typst segfault (typst is not parsed). The parse runs in a child, so a hang or a crash costs one case.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

OPENERS: dict[str, list[tuple[str, str]]] = {
    "brackets": [("(", ")"), ("[", "]"), ("{", "}")],
    "comments": [("/*", "*/"), ("[", "]")],
    "mixed": [("(", ")"), ("{", "}"), ('"', '"'), ("'", "'"), ("/*", "*/"), ("<", ">"), ("${", "}"), ("#{", "}")],
    "strings": [('"', '"'), ("`", "`"), ("'", "'"), ("${", "}")],
    "angles": [("<", ">"), ("(", ")")],
    "keywords": [("if x {", "}"), ("fn f(", ")"), ("class A {", "}"), ("do", "end"), ("begin", "end"),
                 ("(* ", " *)"), ("{-", "-}"), ("--[[", "]]")],
}  # fmt: skip
SOUP = list("(){}[]<>\"'`/*#$@!%^&|;:,.?=+-~\\") + [
    "/*", "*/", "//", "${", "#{", "<<", "<<EOF", "if", "end", "do", "fn", "def", "class", "\n", " ", "x", "1",
    "(*", "*)", "{-", "-}", "<!--", "-->", "<?php", "?>", 'r#"', '"""',
]  # fmt: skip
CASES = [(kind, n) for kind in OPENERS for n in (200, 400, 1000)] + [("soup", n) for n in (300, 1000, 1001, 1002, 1003)]


def text_for(kind: str, n: int) -> str:
    """Half-closed nests of ``n`` openers, or ``4n`` random tokens: seeded by ``n``, so reproducible."""
    rng = random.Random(n)
    if kind == "soup":
        return "".join(rng.choice(SOUP) for _ in range(n * 4))
    pairs = OPENERS[kind]
    opened = [pairs[rng.randrange(len(pairs))] for _ in range(n)]
    return "\n ".join(o for o, _ in opened) + "x" + "\n ".join([c for _, c in reversed(opened)][: n // 2])


def _child(language: str, kind: str, n: int) -> None:
    import semble_grammars
    from tree_sitter import Parser

    parser = Parser(semble_grammars.get_language(language))
    data = text_for(kind, n).encode()
    t0 = time.perf_counter()
    parser.parse(data)
    print(f"{time.perf_counter() - t0:.3f}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=float, default=8.0)
    ap.add_argument("--slow", type=float, default=0.2)
    ap.add_argument("--langs", default="")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args.child[0], args.child[1], int(args.child[2]))
        return 0
    import semble_grammars

    langs = [x for x in args.langs.split(",") if x] or sorted(semble_grammars.available_languages())
    todo = [(lang, kind, n) for lang in langs for kind, n in CASES]

    def run(case: tuple[str, str, int]) -> tuple[tuple[str, str, int], str]:
        try:
            out = subprocess.run(
                [sys.executable, __file__, "--child", case[0], case[1], str(case[2])],
                capture_output=True, text=True, timeout=args.timeout,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            return case, f"timed out (> {args.timeout:g} s)"
        if out.returncode != 0:
            return case, f"crashed (exit {out.returncode})"
        return case, out.stdout.strip()

    flagged = 0
    with ThreadPoolExecutor(2) as pool:
        for (lang, kind, n), got in pool.map(run, todo):
            try:
                slow = float(got) > args.slow
            except ValueError:
                slow = True
            if slow:
                flagged += 1
                print(f"{lang:14} {kind:9} n={n:<5} {got}", flush=True)
    print(f"{flagged} of {len(todo)} cases over {args.slow:g} s, timed out or crashed ({len(langs)} grammars)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
