"""What an issue-sized query says: the evidence an agent pastes when it starts on a bug.

A bug report is mostly prose, but its strongest clues are literal: file paths and module names,
traceback frames (file, line, function), identifiers in code spans, exception types, quoted error
messages and option names, test names. This module only reads the text; ``search/evidence.py``
matches what it finds against a corpus. Nothing here knows one project: the patterns are those of
tracebacks, paths and code formatting in general.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A query this long, or spread over several lines, is an issue or a paste rather than a search phrase.
LONG_QUERY_CHARS = 200
MAX_CHARS = 20_000  # evidence is read from this much of a query (an agent's paste can be a whole log)

_EXT = (
    r"py|pyi|pyx|js|jsx|mjs|cjs|ts|tsx|go|rs|rb|java|kt|kts|scala|swift|cs|php|c|h|cc|cpp|cxx|hpp|hh|hxx|"
    r"m|mm|ex|exs|erl|hs|lua|zig|sh|bash|dart|vue|svelte|clj|ml|jl|r|pl|pm|cfg|toml|ini|ya?ml"
)
# A path to a source file, POSIX or Windows, maybe inside a URL or a Markdown link.
# (one flat character class, so a long run of path-like text costs linear time; the extension is checked after)
_PATH_RUN = re.compile(r"(?<![\w.~$@+/\\-])(?:[A-Za-z]:)?[\w.~$@+/\\-]+")
_PATH_END = re.compile(rf"\.(?:{_EXT})$")
# Where in that file: ``file.py:841``, ``", line 841``, ``#L34``, ``(File.java:123)``.
_LINE_AFTER = re.compile(r'^(?:"?,\s*line\s+|:|#L)(\d+)')
# The function of a frame: ``, in run_pylint`` (CPython), ``in Plot._plot(self)`` (IPython).
_FUNC_AFTER = re.compile(r"^[^\n]{0,40}?\bin\s+([A-Za-z_][\w.]*)")
# Java/Kotlin/Scala/C# frames: ``at org.pkg.Class.method(Class.java:42)``.
_JVM_FRAME = re.compile(r"\bat\s+((?:[\w$]+\.)+[\w$<>]+)\((\w+\.\w+):(\d+)\)")
# JavaScript frames: ``at fn (path/to/file.js:10:5)``.
_JS_FRAME = re.compile(r"\bat\s+(?:async\s+)?([\w$.<>]+)\s+\(([^()\s]+?):(\d+):\d+\)")
_CODE_SPAN = re.compile(r"`([^`\n]{1,200})`")
_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.S)
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_DOTTED = re.compile(r"(?<![\w./\\-])([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+)(?![\w/\\-])")
# An exception or error type: ``ValueError``, ``InvalidURL`` raised, ``_UnrecognizedOptionError``.
_EXCEPTION = re.compile(r"\b(_?[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt|Fault|Panic))\b")
# The message after an exception type at a line start: ``TypeError: File must be opened in binary mode``.
_MESSAGE = re.compile(r"^\s*(?:[\w.]+\.)?_?[A-Z]\w*(?:Error|Exception|Warning):\s*(.{12,200})$", re.M)
# Option and key names with dashes: ``--ignore-paths``, ``min-similarity-lines``, ``unused-import``.
_DASHED = re.compile(r"(?<![\w/.-])(-{0,2}[a-z][a-z0-9]*(?:-[a-z0-9]+)+)(?![\w/.-])")
_QUOTED = re.compile(r"\"([^\"\n]{12,160})\"|(?<![\w])'([^'\n]{12,160})'(?![\w])")
_TEST_NAME = re.compile(r"\b(test_\w+|\w+_test|Test[A-Z]\w*|\w+Tests?)\b")
_WORD = re.compile(r"[A-Za-z][a-z]+")
# The source line CPython prints under ``File "x.py", line 9, in f``: the next line, indented, not a frame
_SOURCE_LINE = re.compile(r"[^\n]*\n([ \t]+)(\S[^\n]{5,300})")

# Names every language's runtime defines: evidence only when the corpus itself defines them.
COMMON_EXCEPTIONS = frozenset(
    """Exception Error BaseException ValueError TypeError KeyError IndexError AttributeError RuntimeError
    OSError IOError ImportError ModuleNotFoundError NameError NotImplementedError AssertionError
    UnicodeError UnicodeDecodeError UnicodeEncodeError ZeroDivisionError StopIteration RecursionError
    FileNotFoundError PermissionError SyntaxError KeyboardInterrupt SystemExit DeprecationWarning
    UserWarning FutureWarning RuntimeWarning NullPointerException IllegalArgumentException
    IllegalStateException""".split()
)


@dataclass(frozen=True)
class Frame:
    """A place the text points at: a path, maybe a line, maybe a function."""

    path: str
    line: int | None = None
    function: str | None = None
    in_traceback: bool = False
    source: str | None = None  # the code line a CPython traceback prints under the frame, stripped


@dataclass(frozen=True)
class IssueEvidence:
    title: str  # the first line: the issue's own summary
    places: tuple[Frame, ...]  # file mentions and traceback frames, in the order the text gives them
    dotted: tuple[str, ...]  # module-like names: ``pylint.checkers.similar``, ``flask.Config.from_file``
    code_names: tuple[tuple[str, float], ...]  # identifiers from code spans, frames and code blocks, with weight
    exceptions: tuple[str, ...]  # error types named anywhere
    phrases: tuple[str, ...]  # literal text the code likely holds: messages, dashed option names
    tests: tuple[str, ...]  # test names: ``test_from_file`` points at ``from_file``
    prose: tuple[str, ...]  # words of the prose (outside code), for context


def is_long_query(text: str) -> bool:
    stripped = text.strip()
    return len(stripped) >= LONG_QUERY_CHARS or stripped.count("\n") >= 2


def focus_text(text: str) -> str:
    """The part of an issue that names its subject: the title and the inline code spans."""
    text = text.replace("\r\n", "\n")
    title = text.strip().split("\n", 1)[0]
    spans = [m.group(1) for m in _CODE_SPAN.finditer(_FENCE.sub(" ", text))]
    return " ".join([title, *spans])


def _norm_path(raw: str) -> str:
    p = raw.replace("\\", "/")
    p = re.sub(r"^(?:file:/+|[A-Za-z]:/)", "", p)
    while p.startswith(("./", "~/")):
        p = p[2:]
    return p.lstrip("/")


def _places(text: str) -> list[Frame]:
    out: list[Frame] = []
    for m in _JVM_FRAME.finditer(text):
        qual, fname, lineno = m.group(1), m.group(2), int(m.group(3))
        pkg = qual.rsplit(".", 2)[0].replace(".", "/")
        out.append(Frame(f"{pkg}/{fname}", lineno, qual.rsplit(".", 1)[-1], True))
    for m in _JS_FRAME.finditer(text):
        out.append(Frame(_norm_path(m.group(2)), int(m.group(3)), m.group(1).rsplit(".", 1)[-1], True))
    for m in _PATH_RUN.finditer(text):
        raw = m.group(0).rstrip(".-/\\")
        if not _PATH_END.search(raw):
            continue
        end = m.start() + len(raw)
        if "://" in text[max(0, m.start() - 12) : m.start() + 3] and "/blob/" not in raw and "/tree/" not in raw:
            # a web address's host part, unless it is a link into a repository's source
            if not re.search(r"/(?:blob|tree|src)/", text[max(0, m.start() - 80) : end]):
                continue
        path = _norm_path(raw)
        path = re.sub(r"^.*?/(?:blob|tree|src)/[^/]+/", "", path) if "/blob/" in path or "/tree/" in path else path
        rest = text[end : end + 80]
        lm = _LINE_AFTER.match(rest)
        line = int(lm.group(1)) if lm else None
        fm = _FUNC_AFTER.match(rest)
        func = fm.group(1).rsplit(".", 1)[-1] if fm and line is not None else None
        if func in ("module", "lambda", "listcomp", "genexpr"):
            func = None
        in_tb = line is not None and bool(re.search(r"(?:File\s+\"?|^\s*)$", text[max(0, m.start() - 8) : m.start()]))
        if "/" not in path and line is None and "." not in path.rsplit(".", 1)[0] and len(path) < 6:
            continue
        source = _source_line(text, end) if in_tb else None
        out.append(Frame(path, line, func, in_tb or (line is not None and func is not None), source))
    return out


def _source_line(text: str, end: int) -> str | None:
    """The code line a CPython frame shows (the line after the frame's own), unless it is another
    frame, a caret marker or the exception: the line the reporter's version ran, which finds its chunk
    when the line numbers have drifted from the tree being searched."""
    m = _SOURCE_LINE.match(text, end)
    if m is None:
        return None
    code = m.group(2).rstrip()
    if code.startswith(("File ", "^", "~", "Traceback ")) or _MESSAGE.match(code) or set(code) <= set("^~ "):
        return None
    return code


def analyze_issue(text: str) -> IssueEvidence:
    """Read the evidence out of an issue-sized query (cheap: a few regular expressions)."""
    text = text[:MAX_CHARS].replace("\r\n", "\n")
    lines = [ln for ln in text.split("\n") if ln.strip()]
    title = lines[0].strip() if lines else ""
    places = _places(text)
    # identifiers: title's code spans first, then frames' functions, then code spans, then code blocks
    names: dict[str, float] = {}

    def add(name: str, weight: float) -> None:
        if len(name) > 2 and not name.isupper() or (name.isupper() and len(name) > 3):
            names[name] = max(names.get(name, 0.0), weight)

    for m in _CODE_SPAN.finditer(title):
        for ident in _IDENT.findall(m.group(1)):
            add(ident, 3.0)
    for f in places:
        if f.function:
            add(f.function, 2.0 if f.in_traceback else 1.0)
    fences = [m.group(1) for m in _FENCE.finditer(text)]
    outside = _FENCE.sub(" ", text)
    for m in _CODE_SPAN.finditer(outside):
        for ident in _IDENT.findall(m.group(1)):
            add(ident, 2.0)
    for block in fences:
        for ident in _IDENT.findall(block):
            add(ident, 1.0)
    dotted = list(dict.fromkeys(m.group(1) for m in _DOTTED.finditer(text) if not _PATH_END.search(m.group(1))))
    exceptions = list(dict.fromkeys(_EXCEPTION.findall(text)))
    phrases: list[str] = []
    for m in _MESSAGE.finditer(text):
        phrases.append(m.group(1).strip())
    for m in _QUOTED.finditer(outside):
        q = (m.group(1) or m.group(2)).strip()
        if " " in q:
            phrases.append(q)
    for m in _DASHED.finditer(text):
        word = m.group(1).lstrip("-")
        if word.count("-") >= 1 and len(word) >= 6:
            phrases.append(word)
    tests = list(dict.fromkeys(t for t in _TEST_NAME.findall(text) if len(t) > 6))
    prose_text = _FENCE.sub(" ", text)
    prose = tuple(dict.fromkeys(w.lower() for w in _WORD.findall(prose_text)))
    ordered = sorted(names.items(), key=lambda kv: -kv[1])
    return IssueEvidence(
        title=title,
        places=tuple(places),
        dotted=tuple(dotted),
        code_names=tuple(ordered),
        exceptions=tuple(exceptions),
        phrases=tuple(dict.fromkeys(p for p in phrases if p)),
        tests=tuple(tests),
        prose=prose,
    )
