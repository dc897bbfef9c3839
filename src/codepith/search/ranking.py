"""Code-aware signals applied after fusion. Each has a reason a stranger's repository would agree with;
the benchmark decides whether it stays (see benchmarks/README.md for the ablations)."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from codepith.chunks.ecosystems import test_file_pattern
from codepith.index.tokens import split_identifier, stem
from codepith.search.query import Query

# Test files by each ecosystem's own convention (a ``test_`` prefix means a test only where the language's
# test runners look for it: ``test_functions.bash`` in a shell project is ordinary code); see ecosystems.py.
_TEST_FILE = re.compile(test_file_pattern())
_TEST_DIR = re.compile(r"(^|/)(tests?|__tests__|spec|specs|testing|testdata|fixtures?)/")
_EXAMPLE_DIR = re.compile(r"(^|/)(_?examples?|samples?|demos?|docs?_src|docs?|benchmarks?)/")
_COMPAT_DIR = re.compile(r"(^|/)(_?compat|legacy|vendor|third_party)/")
_STUB = re.compile(r"\.d\.[cm]?ts$|\.pyi$")
_REEXPORT = frozenset({"__init__.py", "package-info.java"})
TEST_PENALTY = 0.3
EXAMPLE_PENALTY = 0.3
REEXPORT_PENALTY = 0.5
STUB_PENALTY = 0.7

# Compared with a query's terms, which are stems: written as words, 'example', 'sample' and 'fixture'
# (stems 'exampl', 'sampl', 'fixtur') never matched, so a query asking for examples still had them ranked down.
ASKS_FOR_TESTS = frozenset(stem(w) for w in ("test", "testing", "spec", "fixture", "mock"))
ASKS_FOR_EXAMPLES = frozenset(stem(w) for w in ("example", "demo", "sample", "doc", "documentation", "benchmark"))


def is_test_path(path: str) -> bool:
    return bool(_TEST_FILE.search(path) or _TEST_DIR.search(path))


@lru_cache(maxsize=65536)
def _path_factor(path: str, asks_tests: bool, asks_examples: bool) -> float:
    factor = 1.0
    if not asks_tests and is_test_path(path):
        factor *= TEST_PENALTY
    if not asks_examples and (_EXAMPLE_DIR.search(path) or _COMPAT_DIR.search(path)):
        factor *= EXAMPLE_PENALTY
    name = path.rsplit("/", 1)[-1]
    if name in _REEXPORT:
        factor *= REEXPORT_PENALTY
    if _STUB.search(path):
        factor *= STUB_PENALTY
    return factor


_VERSION_DIR = re.compile(r"(?:^|/)v(\d+)/")
_ANY_VERSION_DIR = re.compile(r"/v\d+/")
_SHARED_NAMES = frozenset({"__init__.py", "index.js", "index.ts", "mod.rs", "lib.rs", "main.go", "py.typed"})


def superseded_folders(files: Iterable[str]) -> frozenset[str]:
    """Folders that hold an older copy of code the repository also holds in a newer form: ``v3/`` beside
    ``v4/``, or ``pydantic/v1/`` whose files mostly reappear in ``pydantic/`` itself. A library that keeps
    its previous major version for migration answers questions with the current one."""
    files = list(files)
    if not _ANY_VERSION_DIR.search("/" + "\n/".join(files)):  # a literal-led scan: the kernel's paths in 5 ms
        return frozenset()
    versions: dict[str, dict[int, str]] = {}  # parent folder -> version number -> version folder
    for path in files:
        for m in _VERSION_DIR.finditer(path):
            folder = path[: m.end() - 1]
            parent = folder.rpartition("/")[0]
            versions.setdefault(parent, {})[int(m.group(1))] = folder
    if not versions:
        return frozenset()
    wanted = set(versions) | {f for group in versions.values() for f in group.values()}
    own_files: dict[str, set[str]] = {}  # folder -> names of the files directly inside it
    for path in files:
        folder, _, name = path.rpartition("/")
        if folder in wanted and name not in _SHARED_NAMES:
            own_files.setdefault(folder, set()).add(name)
    out: set[str] = set()
    for parent, group in versions.items():
        beside = own_files.get(parent, set())
        for num, folder in group.items():
            own = own_files.get(folder, set())
            mirrored = len(own) >= 4 and len(own & beside) >= 0.5 * len(own)
            if mirrored or any(other > num for other in group):
                out.add(folder)
    return frozenset(out)


def path_penalty_for(query: Query) -> Callable[[str], float]:
    """A path's factor for this query: tests, examples, vendored code, re-export barrels and stubs rank
    below the code they serve, unless the query asks for them."""
    words = set(query.terms)
    asked = words
    if query.issue and query.weights:  # an issue asks for examples in its title or code spans; its prose says
        asked = {t for t, w in zip(query.terms, query.weights, strict=False) if w >= 1.0}  # "for example"
    asks_tests, asks_examples = bool(words & ASKS_FOR_TESTS), bool(asked & ASKS_FOR_EXAMPLES)
    return lambda path: _path_factor(path, asks_tests, asks_examples)


@lru_cache(maxsize=65536)
def path_words(path: str) -> frozenset[str]:
    """Words of a file's stem and its parent folder: ``middleware/cors.py`` -> {middleware, cors}."""
    parts = path.split("/")
    stem = parts[-1].split(".", 1)[0]
    words = set(split_identifier(stem))
    words.add(stem.lower().replace("_", "").replace("-", ""))
    if len(parts) > 1:
        words.update(split_identifier(parts[-2]))
    return frozenset(w for w in words if w)


def _word_match(a: str, b: str) -> bool:
    """Same word or one a prefix of the other (>= 3 chars): 'dependency' ~ 'dependencies', 'route' ~ 'routing'."""
    if a == b:
        return True
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    if len(short) >= 4 and long_.startswith(short):
        return True
    # shared stem: 'routing' ~ 'routes', 'registry' ~ 'register'
    return len(short) >= 5 and long_[: len(short) - 2] == short[:-2]


def path_match_ratio(path: str, keywords: Iterable[str]) -> float:
    return _path_match_ratio(path, tuple(keywords))


@lru_cache(maxsize=65536)
def _path_match_ratio(path: str, keywords: tuple[str, ...]) -> float:
    kws = [k for k in keywords if len(k) > 2]
    if not kws:
        return 0.0
    words = path_words(path)
    hits = sum(1 for k in kws if any(_word_match(k, w) for w in words))
    return hits / len(kws)


@dataclass(frozen=True)
class PathWords:
    """Which files' path words each distinct path word is, sorted, so a query word's matches are found
    among the words that share its first three letters (every match does: see ``_word_match``)."""

    words: list[str]
    files: list[list[int]]
    n_files: int
    shares: dict[str, float] = field(default_factory=dict)  # a query word's share, remembered

    def share(self, keyword: str) -> float:
        """The share of the corpus's files whose path words match ``keyword``, as the path boost matches."""
        got = self.shares.get(keyword)
        if got is None:
            head = keyword[:3]
            lo, hi = bisect_left(self.words, head), bisect_left(self.words, head + "\uffff")
            hit: set[int] = set()
            for j in range(lo, hi):
                if _word_match(keyword, self.words[j]):
                    hit.update(self.files[j])
            got = self.shares[keyword] = len(hit) / max(1, self.n_files)
        return got


PATH_SAMPLE = 2_000  # files read for the shares: every k-th past this many (the kernel's 60,000 took 0.47 s)


def path_word_table(files: Sequence[str], most: int = PATH_SAMPLE) -> PathWords:
    """The table over every file, or over an even sample of ``most`` of them in a larger tree: a share
    near one half is then known to about a percent, and the table costs ~15 ms instead of 0.5 s."""
    step = -(-len(files) // most) if most > 0 else 1
    sample = files[::step] if step > 1 else files
    by_word: dict[str, list[int]] = {}
    for i, path in enumerate(sample):
        for w in path_words(path):
            by_word.setdefault(w, []).append(i)
    words = sorted(by_word)
    return PathWords(words, [by_word[w] for w in words], len(sample))


def file_stem(path: str) -> str:
    """A file's name before its first dot, lower-cased: ``src/Elements.java`` -> ``elements``."""
    return path.rsplit("/", 1)[-1].split(".", 1)[0].lower()


def stem_matches_symbol(path: str, symbol: str) -> bool:
    """Whether a file is named after a word or symbol (``token_stream.rs`` for ``TokenStream``,
    ``websockets.py`` for ``websocket``): its stem with or without separators, a plural on either side."""
    stem = file_stem(path)
    norm = stem.replace("_", "").replace("-", "")
    s = symbol.lower()
    return s in (stem, norm) or s.rstrip("s") in (stem.rstrip("s"), norm.rstrip("s"))


# Words that open a declaration in the languages the chunker knows; a split definition's declaring line
# holds one of them before the name. A name after one of them on a code line (not a comment) declares it.
_DECLARING_WORDS = (
    "class|struct|module|def|defp|defmodule|defmacro|defmacrop|defdelegate|defprotocol|defimpl|defguard|"
    "fn|func|function|sub|proc|type|typedef|interface|trait|enum|union|impl|object|record|protocol|extension|"
    "namespace|data|newtype|instance|let|const|var|val|local|macro_rules!|define|package|mixin|concern"
)
_COMMENT_START = ("//", "/*", "*", "--", ";", "%", "#")


_DECLARING_WORD = re.compile(rf"\b(?:{_DECLARING_WORDS})\b")


def declares(content: str, name: str) -> bool:
    """Whether the chunk holds the line that declares ``name`` (``class Engine < Railtie``,
    ``func (v *V) Engine()``), not only a piece of its body or of the long comment above it: a class
    split into ten pieces names itself in each, and the piece a reader wants for the name is its head.
    Only the lines holding the name are looked at (a regular expression over every line cost 0.3-0.5 ms
    of a 1 ms search)."""
    at = content.find(name)
    while at >= 0:
        after = at + len(name)
        if (at == 0 or not _ident_char(content[at - 1])) and (after == len(content) or not _ident_char(content[after])):
            head = content[content.rfind("\n", 0, at) + 1 : at]
            lead = head.lstrip()
            code = not lead.startswith(_COMMENT_START) or lead.startswith(("#define", "# define"))
            if code and _DECLARING_WORD.search(head):
                return True
        at = content.find(name, after)
    return False


def _ident_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_$"
