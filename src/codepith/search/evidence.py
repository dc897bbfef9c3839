"""Match an issue's evidence (``search/issue.py``) against a corpus and turn it into chunk bonuses.

Each clue becomes a bonus in units of the fused list's top score, as the other re-ranking signals
are: a traceback frame inside the repository points at the chunk holding its line, a mentioned path
or module at its file, a quoted message or option name at the chunks that hold that literal text,
an identifier from the issue's code at the chunks that define it. Clues that point everywhere (a
name fifty chunks define, a phrase in every file) are worth little and are dropped.
"""

from __future__ import annotations

import math
import re

import numpy as np

from codepith.index.corpus import Corpus
from codepith.index.tokens import tokenize
from codepith.search.issue import COMMON_EXCEPTIONS, Frame, IssueEvidence
from codepith.search.ranking import is_test_path

FRAME = 1.0  # a traceback frame inside the repository: the chunk holding its line (or function)
MENTION = 0.6  # a file path or module the text names
NAME = 1.0  # an identifier from the issue's code that the corpus defines (scaled by where it appeared)
PHRASE = 0.8  # a message or option name the code holds literally
MAX_DEFS = 8  # a name defined more often than this says little about where to look
MAX_PHRASE_HITS = 6
MAX_FRAGMENTS = 16  # literal pieces looked up per query (each costs a postings lookup and substring tests)

_PACKAGE_FILES = frozenset({"__init__", "index", "mod", "lib", "main"})


class _FileNames:
    """Per-corpus lookups, built once: file name -> files, and module name -> (module path, file)."""

    def __init__(self, corpus: Corpus) -> None:
        self.by_name: dict[str, list[str]] = {}
        self.modules: dict[str, list[tuple[str, str]]] = {}
        for f in corpus.files:
            name = f.rsplit("/", 1)[-1]
            self.by_name.setdefault(name, []).append(f)
            mod = f.rsplit(".", 1)[0] if "." in name else f
            last = mod.rsplit("/", 1)[-1]
            if last in _PACKAGE_FILES and "/" in mod:
                mod = mod.rsplit("/", 1)[0]  # a package's own file stands for the package
                last = mod.rsplit("/", 1)[-1]
            self.modules.setdefault(last, []).append((mod, f))


def _names(corpus: Corpus) -> _FileNames:
    return corpus.derived("file_names", _FileNames, of_paths=True)


def resolve_path(corpus: Corpus, path: str) -> list[str]:
    """Corpus files a mentioned path means: the one sharing the longest run of trailing folders.
    ``/site-packages/requests/models.py`` -> ``requests/models.py``; ``flask/cli.py`` -> ``src/flask/cli.py``.
    A bare file name counts only when one file has it."""
    parts = [p for p in path.split("/") if p and p not in (".", "..")]
    if not parts:
        return []
    cands = _names(corpus).by_name.get(parts[-1], [])
    if not cands:
        return []
    best: list[str] = []
    best_n = 0
    for f in cands:
        fparts = f.split("/")
        n = 0
        while n < min(len(parts), len(fparts)) and parts[-1 - n] == fparts[-1 - n]:
            n += 1
        if n > best_n:
            best, best_n = [f], n
        elif n == best_n:
            best.append(f)
    if best_n == 1 and len(parts) > 1 and len(best) > 1:
        return []  # only the file name agrees, and several files have it
    if best_n == 1 and len(best) > 2:
        return []
    return best


def resolve_module(corpus: Corpus, dotted: str) -> tuple[list[str], list[str]]:
    """A dotted name as a module path plus the names after it: ``pylint.checkers.similar`` ->
    ``pylint/checkers/similar.py``; ``flask.Config.from_file`` -> (``src/flask/__init__.py``,
    [Config, from_file]). Tries the longest prefix first."""
    parts = dotted.split(".")
    modules = _names(corpus).modules
    for k in range(len(parts), 1, -1):  # one bare name (``app.run``) is more often a variable than a module
        stem_path = "/".join(parts[:k])
        hits = [f for mod, f in modules.get(parts[k - 1], []) if mod == stem_path or mod.endswith("/" + stem_path)]
        if hits:
            return hits, parts[k:]
    return [], parts


def _fragments(phrase: str) -> list[str]:
    """Literal pieces of a message worth finding in code: runs between quoted values and
    placeholders, at least three words or twelve characters long."""
    pieces = re.split(r"'[^']*'|\"[^\"]*\"|`[^`]*`|\{[^}]*\}|%\w|\d+(?:\.\d+)*|[()\[\]]", phrase)
    out = []
    for p in pieces:
        p = p.strip(" :,.;-")
        if len(p) >= 12 and (p.count(" ") >= 2 or "-" in p) or ("-" in p and " " not in p and len(p) >= 6):
            out.append(p)
    return out


def _holding_rarest_words(corpus: Corpus, text: str) -> list[int]:
    """Chunks that hold the text's two rarest words (a cheap filter before the substring test)."""
    lists = sorted((corpus.bm25.postings(tok)[0] for tok in set(tokenize(text))), key=len)
    if not lists:
        return []
    if len(lists) == 1:
        return lists[0].tolist()
    return np.intersect1d(lists[0], lists[1], assume_unique=True).tolist()


class Bonuses:
    """Chunk index -> bonus in units of the top score, with the file each clue named."""

    def __init__(self) -> None:
        self.chunks: dict[int, float] = {}
        self.files: dict[str, float] = {}

    def add(self, idx: int, amount: float) -> None:
        self.chunks[idx] = self.chunks.get(idx, 0.0) + amount

    def add_file(self, path: str, amount: float) -> None:
        self.files[path] = max(self.files.get(path, 0.0), amount)


def _frame_chunk(corpus: Corpus, path: str, fr: Frame) -> int | None:
    """The chunk a traceback frame ran in: the one holding the frame's printed code line (nearest the
    line number when several do), else the function's definition nearest the line, else the chunk at
    the line. The code line comes first because a reporter's version rarely has the tree's numbering."""
    line = fr.line or 0
    members = corpus.chunk_indices(path)
    if fr.source:
        holding = [i for i in members if fr.source in corpus.chunks[i].content]
        if holding:
            return min(holding, key=lambda i: (_distance(corpus, i, line), i))
    if fr.function:
        defs = [i for i in members if fr.function in corpus.chunks[i].symbols]
        if defs:
            return min(defs, key=lambda i: abs(corpus.chunks[i].start_line - line))
    return corpus.chunk_at(path, fr.line) if fr.line is not None else None


def _distance(corpus: Corpus, idx: int, line: int) -> int:
    c = corpus.chunks[idx]
    return 0 if c.start_line <= line <= c.end_line else min(abs(c.start_line - line), abs(c.end_line - line))


def gather(corpus: Corpus, ev: IssueEvidence) -> Bonuses:
    out = Bonuses()
    # traceback frames and mentioned files
    frames_in_repo = []
    for fr in ev.places:
        files = resolve_path(corpus, fr.path)
        if len(files) != 1:
            continue
        if fr.in_traceback and fr.line is not None:
            frames_in_repo.append((files[0], fr))
        else:
            out.add_file(files[0], MENTION)
            if fr.line is not None:
                idx = corpus.chunk_at(files[0], fr.line)
                if idx is not None:
                    out.add(idx, MENTION)
    for path, fr in frames_in_repo:
        idx = _frame_chunk(corpus, path, fr)
        # every frame alike: the innermost one is often a helper or a vendored library, the fix in its caller
        weight = FRAME
        out.add_file(path, MENTION)
        if idx is not None:
            out.add(idx, weight)
    # modules and qualified names
    names: dict[str, float] = dict(ev.code_names)
    for dotted in ev.dotted:
        files, rest = resolve_module(corpus, dotted)
        if 0 < len(files) <= 2:
            for f in files:
                out.add_file(f, MENTION * (0.5 if rest else 1.0))
        for r in rest[-2:]:
            if len(r) > 2:
                names[r] = max(names.get(r, 0.0), 2.0)
    for t in ev.tests:
        subject = re.sub(r"^test_|_test$|^Test|Tests?$", "", t)
        if subject and subject != t and len(subject) > 3:
            names[subject] = max(names.get(subject, 0.0), 1.0)
    for exc in ev.exceptions:
        if exc not in COMMON_EXCEPTIONS:
            names[exc] = max(names.get(exc, 0.0), 1.0)
    # definitions of named identifiers: exact case, few definitions, non-test code
    for name, w in names.items():
        named = corpus.definitions.get(name.lower())
        if not named or len(named) > 4 * MAX_DEFS:
            continue
        exact = [i for i in named if name in corpus.chunks[i].names]
        if not exact or len(exact) > MAX_DEFS:
            continue
        amount = NAME * (w / 3.0) / math.sqrt(len(exact))
        for i in exact:
            out.add(i, amount)
    # literal messages and option names
    seen: set[str] = set()
    for phrase in ev.phrases:
        for frag in _fragments(phrase):
            if frag in seen or len(seen) >= MAX_FRAGMENTS:
                continue
            seen.add(frag)
            variants = {frag, frag.replace("-", "_")} if " " not in frag else {frag}
            found = [
                i
                for i in _holding_rarest_words(corpus, frag)
                if any(v in corpus.chunks[i].content for v in variants) and not is_test_path(corpus.chunks[i].file_path)
            ]
            if 0 < len(found) <= MAX_PHRASE_HITS:
                for i in found:
                    out.add(i, PHRASE / math.sqrt(len(found)))
    return out
