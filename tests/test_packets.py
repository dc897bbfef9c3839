"""Evidence packets: budget always held, every omission named by a call that really returns it."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from codepith.chunks.chunk import Chunk
from codepith.errors import CodepithError
from codepith.output.jsonfmt import results_to_json
from codepith.output.packets import HEAD_LINES, MAX_LINE_CHARS, group_hits, render_packet
from codepith.output.read import cli_read_call, mcp_read_call, read_lines
from codepith.search.result import SearchResult

HEADER = re.compile(r"^FILE (.+?)  LINES (\d+)-(\d+)  SCORE \S+(  \(path match only\))?$")
CODE = re.compile(r"^(\d+)\| ?(.*)$")
GAP = re.compile(r"^\.\.\. \(lines (\d+)-(\d+) omitted\)$")
REST = re.compile(r"^\.\.\. \(lines (\d+)-(\d+) omitted; (.+)\)$")
TRAILER = re.compile(r"^\d+ (?:more )?hits(?: \(read e\.g\. (.+?)\))?: (.*)$")
ENTRY = re.compile(r"^(.+) (\d+)-(\d+)$")


def write(root: Path, rel: str, lines: list[str]) -> list[str]:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return lines


def hit(
    root: Path, rel: str, start: int, end: int, score: float, *, path_match: bool = False, retrieved: bool = True
) -> SearchResult:
    """A result; ``retrieved=False`` means neither BM25 nor the embeddings found it (path match only)."""
    lines = (root / rel).read_text().split("\n")[start - 1 : end]
    chunk = Chunk(rel, start, end, "\n".join(lines), "python")
    rank = 0 if retrieved else None
    return SearchResult(chunk, score, lexical_rank=rank, dense_rank=rank, path_match=path_match)


@dataclass
class Shown:
    """What a packet displayed, parsed back."""

    headers: list[tuple[str, int, int, bool]] = field(default_factory=list)
    code: list[tuple[str, int, str]] = field(default_factory=list)
    gaps: list[tuple[str, int, int]] = field(default_factory=list)
    rests: list[tuple[str, int, int, str]] = field(default_factory=list)
    trailer: list[tuple[str, int, int]] = field(default_factory=list)
    trailer_call: str | None = None
    trailer_complete: bool = True


def parse(packet: str) -> Shown:
    shown = Shown()
    path = ""
    for line in packet.split("\n"):
        if m := HEADER.match(line):
            path = m.group(1)
            shown.headers.append((path, int(m.group(2)), int(m.group(3)), bool(m.group(4))))
        elif m := CODE.match(line):
            shown.code.append((path, int(m.group(1)), m.group(2)))
        elif m := GAP.match(line):
            shown.gaps.append((path, int(m.group(1)), int(m.group(2))))
        elif m := REST.match(line):
            shown.rests.append((path, int(m.group(1)), int(m.group(2)), m.group(3)))
        elif m := TRAILER.match(line):
            shown.trailer_call = m.group(1)
            for part in m.group(2).split(", "):
                if re.fullmatch(r"\+\d+", part):
                    shown.trailer_complete = False
                elif e := ENTRY.match(part):
                    shown.trailer.append((e.group(1), int(e.group(2)), int(e.group(3))))
        elif re.fullmatch(r"\d+ (?:more )?hits", line):  # no room to name them: the count alone
            shown.trailer_complete = False
        else:
            assert line.startswith("```") or not line, f"unexpected packet line: {line!r}"
    return shown


def run_cli_call(root: Path, call: str) -> tuple[str, int, int, tuple[str, ...]]:
    argv = shlex.split(call)
    assert argv[:2] == ["codepith", "read"] and len(argv) == 5, call
    res = read_lines(root, argv[2], int(argv[3]), int(argv[4]), max_lines=10_000, max_chars=10**9)
    return argv[2], int(argv[3]), int(argv[4]), res.lines


def display(text: str) -> str:
    text = text.rstrip()
    if len(text) > MAX_LINE_CHARS:
        text = f"{text[:MAX_LINE_CHARS]} ... (+{len(text) - MAX_LINE_CHARS} chars)"
    return text


def build_repo(root: Path) -> tuple[list[SearchResult], dict[str, list[str]]]:
    """A made-up repository with many wide hits: dense/sparse matches, overlaps, semantic and path hits."""
    files: dict[str, list[str]] = {}
    dense = []
    for i in range(1, 241):
        if i % 5 == 0:
            dense.append(f"    token_{i} = parse_token(stream, offset={i})  # parse the next token")
        elif i % 17 == 0:
            dense.append("    " + "wide_value = " + "x" * (80 + 7 * (i % 60)) + "  # parse")
        else:
            dense.append(f"    value_{i} = compute(offset={i})")
    files["src/lexer.py"] = write(root, "src/lexer.py", dense)
    sparse = [f"    step_{i} = advance({i})" for i in range(1, 201)]
    for at in (12, 19, 60, 61, 140):
        sparse[at - 1] = f"    result = parseToken(buffer[{at}])"
    files["pkg/reader.py"] = write(root, "pkg/reader.py", sparse)
    semantic = ["def tokenizer_free_helper(a, b):", '    """Combine inputs."""'] + [
        f"    acc_{i} = a * {i} + b" for i in range(1, 60)
    ]
    files["lib/helpers.py"] = write(root, "lib/helpers.py", semantic)
    files["src/parse/token.py"] = write(root, "src/parse/token.py", [f"X_{i} = {i}" for i in range(1, 40)])
    wide = ["    " + "y" * 50 + " = parse(" + "z" * (i * 3) + ")" for i in range(1, 120)]
    files["src/wide.py"] = write(root, "src/wide.py", wide)
    results = [
        hit(root, "src/lexer.py", 1, 60, 0.97),
        hit(root, "pkg/reader.py", 1, 80, 0.91),
        hit(root, "src/lexer.py", 50, 120, 0.88),  # overlaps the first lexer hit
        hit(root, "src/wide.py", 1, 119, 0.8),
        hit(root, "lib/helpers.py", 1, 61, 0.75),  # no query token: semantic only
        hit(root, "src/lexer.py", 121, 150, 0.7),  # touches 50-120
        hit(root, "src/parse/token.py", 1, 39, 0.6, path_match=True, retrieved=False),  # path only
        hit(root, "pkg/reader.py", 130, 200, 0.55),  # same file, separate span
        hit(root, "src/lexer.py", 180, 240, 0.5),
    ]
    for k in range(6):
        name = f"more/mod_{k}.py"
        files[name] = write(root, name, [f"def parse_token_{k}_{i}(): return {i}" for i in range(1, 31)])
        results.append(hit(root, name, 1, 30, 0.4 - k / 100))
    return results, files


def check_packet(root: Path, packet: str, results: list[SearchResult], files: dict[str, list[str]]) -> None:
    shown = parse(packet)
    groups = {(g.path, g.start, g.end) for g in group_hits(results)}
    seen: set[tuple[str, int]] = set()
    for path, number, text in shown.code:
        assert (path, number) not in seen, f"{path}:{number} shown twice"
        seen.add((path, number))
        assert text == display(files[path][number - 1]), (path, number)
    covered: set[tuple[str, int]] = set(seen)
    for path, a, b in shown.gaps:
        for n in range(a, b + 1):
            assert (path, n) not in covered, f"{path}:{n} both shown and marked omitted"
            covered.add((path, n))
    for path, a, b, call in shown.rests:
        got_path, got_a, got_b, lines = run_cli_call(root, call)
        assert (got_path, got_a, got_b) == (path, a, b)
        assert list(lines) == files[path][a - 1 : b]
        for n in range(a, b + 1):
            assert (path, n) not in covered, f"{path}:{n} both shown and marked omitted"
            covered.add((path, n))
    for path, start, end, is_pointer in shown.headers:
        assert (path, start, end) in groups
        if not is_pointer:
            missing = [n for n in range(start, end + 1) if (path, n) not in covered]
            assert not missing, f"{path} lines {missing[:5]} neither shown nor marked"
    assert len(shown.rests) <= 1, "the read call is named once, not on every marker"
    for path, start, end, is_pointer in shown.headers:
        assert is_pointer or any(p == path and start <= n <= end for p, n, _ in shown.code), "a hit with no line"
    header_spans = {(p, s, e) for p, s, e, _ in shown.headers}
    assert len(header_spans) == len(shown.headers), "a span got two headers"
    for entry in shown.trailer:
        assert entry in groups and entry not in header_spans
        _, _, _, lines = run_cli_call(root, cli_read_call(*entry))
        assert list(lines) == files[entry[0]][entry[1] - 1 : entry[2]]
    if shown.trailer_call:
        run_cli_call(root, shown.trailer_call)
    if shown.trailer_complete and (shown.trailer or shown.headers):
        assert header_spans | set(shown.trailer) == groups


BUDGETS = sorted({*range(200, 20_001, 37), 200, 201, 250, 333, 1000, 6000, 19_999, 20_000})


def test_budget_holds_for_every_size(tmp_path: Path) -> None:
    results, files = build_repo(tmp_path)
    full = render_packet("parse token", results, max_chars=10**7, read_call=cli_read_call)
    assert len(full) > 6000  # the sweep really exercises cutting
    for budget in BUDGETS:
        packet = render_packet("parse token", results, max_chars=budget, read_call=cli_read_call)
        assert len(packet) <= budget, budget
        check_packet(tmp_path, packet, results, files)


@pytest.mark.parametrize("budget", [0, 1, 2, 5, 10, 30, 50, 80, 120, 160, 199])
def test_tiny_budgets_never_overflow(tmp_path: Path, budget: int) -> None:
    results, _ = build_repo(tmp_path)
    for read_call in (cli_read_call, mcp_read_call):
        packet = render_packet("parse token", results, max_chars=budget, read_call=read_call)
        assert len(packet) <= budget
        assert "\n" not in packet or budget >= 100
    if budget >= 50:
        assert packet  # something useful, not silence


def test_best_hit_first_and_budget_used(tmp_path: Path) -> None:
    results, files = build_repo(tmp_path)
    packet = render_packet("parse token", results, max_chars=6000, read_call=cli_read_call)
    assert packet.startswith("FILE src/lexer.py  LINES 1-150  SCORE 0.97")
    assert len(packet) > 4000  # the budget is used, not wasted
    check_packet(tmp_path, packet, results, files)


def test_whole_packet_when_it_fits(tmp_path: Path) -> None:
    results, files = build_repo(tmp_path)
    packet = render_packet("parse token", results, max_chars=10**7, read_call=cli_read_call)
    shown = parse(packet)
    assert not shown.trailer
    assert len(shown.headers) == len(group_hits(results))
    check_packet(tmp_path, packet, results, files)


def test_overlapping_and_touching_hits_merge(tmp_path: Path) -> None:
    results, _ = build_repo(tmp_path)
    groups = [(g.path, g.start, g.end) for g in group_hits(results)]
    assert ("src/lexer.py", 1, 150) in groups
    assert ("src/lexer.py", 180, 240) in groups  # separated by a gap: its own entry
    assert ("pkg/reader.py", 1, 80) in groups and ("pkg/reader.py", 130, 200) in groups
    packet = render_packet("parse token", results[:3], max_chars=10**6, read_call=cli_read_call)
    headers = parse(packet).headers
    assert [h[:3] for h in headers] == [("src/lexer.py", 1, 120), ("pkg/reader.py", 1, 80)]
    assert "SCORE 0.97" in packet.split("\n")[0]


def test_only_matching_lines_with_context(tmp_path: Path) -> None:
    results, files = build_repo(tmp_path)
    reader = [r for r in results if r.chunk.file_path == "pkg/reader.py"][:1]
    packet = render_packet("parse token", reader, max_chars=10**6, read_call=cli_read_call)
    shown = parse(packet)
    numbers = [n for _, n, _ in shown.code]
    # matches at 12, 19 (gap 15-16 is 2 lines: filled), 60-61; context 2 lines each side
    assert numbers == [*range(10, 22), *range(58, 64)]
    assert ("pkg/reader.py", 1, 9) in shown.gaps and ("pkg/reader.py", 22, 57) in shown.gaps
    assert ("pkg/reader.py", 64, 80) in [*shown.gaps, *(r[:3] for r in shown.rests)]
    assert f"12| {files['pkg/reader.py'][11].rstrip()}" in packet.split("\n")
    check_packet(tmp_path, packet, reader, files)


def test_token_level_matching(tmp_path: Path) -> None:
    lines = write(tmp_path, "m.py", ["parser = 1", "x = 2", "y = 3", "z = 4", "w = 5", "q = getParseResult()", "e = 7"])
    res = [hit(tmp_path, "m.py", 1, 7, 1.0)]
    packet = render_packet("parse", res, max_chars=10**6, read_call=cli_read_call)
    shown = parse(packet)
    # "parser" is another token; getParseResult splits into get/parse/result and matches
    assert [n for _, n, _ in shown.code] == [4, 5, 6, 7]
    assert [*shown.gaps, *(r[:3] for r in shown.rests)] == [("m.py", 1, 3)]
    assert lines[5] in packet


def test_semantic_only_hit_shows_head(tmp_path: Path) -> None:
    results, files = build_repo(tmp_path)
    semantic = [r for r in results if r.chunk.file_path == "lib/helpers.py"]
    packet = render_packet("parse token", semantic, max_chars=10**6, read_call=cli_read_call)
    shown = parse(packet)
    assert [n for _, n, _ in shown.code] == list(range(1, HEAD_LINES + 1))
    assert shown.code[0][2] == "def tokenizer_free_helper(a, b):"
    assert len(shown.rests) == 1
    path, a, b, call = shown.rests[0]
    assert (path, a, b) == ("lib/helpers.py", HEAD_LINES + 1, 61)
    assert list(run_cli_call(tmp_path, call)[3]) == files["lib/helpers.py"][HEAD_LINES:61]


def test_path_only_hit_is_one_line_pointer(tmp_path: Path) -> None:
    results, _ = build_repo(tmp_path)
    pointer = [r for r in results if r.path_match]
    packet = render_packet("parse token", pointer, max_chars=10**6, read_call=cli_read_call)
    assert packet == "FILE src/parse/token.py  LINES 1-39  SCORE 0.6  (path match only)"


def test_path_match_found_by_meaning_shows_its_head(tmp_path: Path) -> None:
    """A path match the embeddings also retrieved did not match "only through its path": show code."""
    write(tmp_path, "parse/token.py", ["# Copyright", "# Licensed under MIT", "", "class Reader:", "    pos = 0"])
    res = [hit(tmp_path, "parse/token.py", 1, 5, 0.6, path_match=True)]
    packet = render_packet("parse token", res, max_chars=10**6, read_call=cli_read_call)
    shown = parse(packet)
    assert shown.code[0][1:] == (4, "class Reader:")  # signature first: the license banner is skipped
    assert not shown.headers[0][3]


def test_path_match_with_content_match_shows_lines(tmp_path: Path) -> None:
    write(tmp_path, "parse.py", ["a = 1", "def parse(): pass"])
    res = [hit(tmp_path, "parse.py", 1, 2, 1.0, path_match=True)]
    packet = render_packet("parse", res, max_chars=10**6, read_call=cli_read_call)
    assert "2| def parse(): pass" in packet


def test_cut_marker_names_surface_call(tmp_path: Path) -> None:
    results, _ = build_repo(tmp_path)
    packet = render_packet("parse token", results, max_chars=1500, read_call=mcp_read_call)
    assert "read_snippet(path=" in packet
    assert "codepith read" not in packet
    assert len(packet) <= 1500


def test_long_lines_shortened(tmp_path: Path) -> None:
    write(tmp_path, "min.js", ["var parse=" + "a" * 5000])
    res = [hit(tmp_path, "min.js", 1, 1, 1.0)]
    packet = render_packet("parse", res, max_chars=10**6, read_call=cli_read_call)
    assert len(packet) < 600 and "(+" in packet


def test_fence_longer_than_backticks_in_code(tmp_path: Path) -> None:
    write(tmp_path, "doc.md", ["```", "parse here", "```"])
    res = [hit(tmp_path, "doc.md", 1, 3, 1.0)]
    packet = render_packet("parse", res, max_chars=10**6, read_call=cli_read_call)
    assert packet.split("\n")[1].startswith("````")


def test_empty_results() -> None:
    assert render_packet("foo bar", [], read_call=cli_read_call) == "no results for 'foo bar'"
    assert len(render_packet("foo bar", [], max_chars=7, read_call=cli_read_call)) == 7


# --- JSON output (jsonfmt) ---------------------------------------------------------------------------


def _json_results() -> list[SearchResult]:
    return [
        SearchResult(Chunk("a.py", 3, 6, "def f():\n    x = 1\n    y = 2\n    return x", "python"), 0.123456),
        SearchResult(Chunk("b.py", 1, 1, "", "python"), 0.5),
        SearchResult(Chunk("c.py", 1, 2, "\n", "python"), 0.25),
    ]


def test_json_full_content_by_default() -> None:
    out = results_to_json("f", _json_results())
    assert out["query"] == "f"
    first = out["results"][0]
    assert first == {
        "file_path": "a.py",
        "start_line": 3,
        "end_line": 6,
        "score": 0.1235,
        "content": "def f():\n    x = 1\n    y = 2\n    return x",
    }
    json.dumps(out)  # plain JSON types only


def test_json_location_only_with_zero() -> None:
    out = results_to_json("f", _json_results(), max_snippet_lines=0)
    assert all("content" not in r for r in out["results"])
    assert [r["file_path"] for r in out["results"]] == ["a.py", "b.py", "c.py"]


def test_json_first_n_lines() -> None:
    out = results_to_json("f", _json_results(), max_snippet_lines=2)
    assert out["results"][0]["content"] == "def f():\n    x = 1"


@pytest.mark.parametrize("limit", [None, 1, 5])
def test_json_never_sends_empty_content(limit: int | None) -> None:
    out = results_to_json("f", _json_results(), max_snippet_lines=limit)
    assert "content" not in out["results"][1] and "content" not in out["results"][2]
    assert all(r.get("content", "x") != "" for r in out["results"])


def test_json_rejects_negative_limit() -> None:
    with pytest.raises(CodepithError):
        results_to_json("f", _json_results(), max_snippet_lines=-1)


# --- breadth-first budget -----------------------------------------------------------------------------


def test_hit_too_big_for_the_room_does_not_stop_later_hits(tmp_path: Path) -> None:
    write(tmp_path, "a.py", ["def parse(): pass"])
    huge = "deep/" * 40 + "wide.py"
    write(tmp_path, huge, ["parse = '" + "w" * 400 + "'"])
    for k in range(3):
        write(tmp_path, f"m{k}.py", [f"def parse_{k}(): pass"])
    res = [hit(tmp_path, "a.py", 1, 1, 0.9), hit(tmp_path, huge, 1, 1, 0.8)]
    res += [hit(tmp_path, f"m{k}.py", 1, 1, 0.5 - k / 10) for k in range(3)]
    packet = render_packet("parse", res, max_chars=600, read_call=cli_read_call)
    shown = parse(packet)
    assert [h[0] for h in shown.headers] == ["a.py", "m0.py", "m1.py", "m2.py"]
    assert shown.trailer == [(huge, 1, 1)]


def test_breadth_first_then_best_hits_grow(tmp_path: Path) -> None:
    results, files = build_repo(tmp_path)
    packet = render_packet("parse token", results, max_chars=2500, read_call=cli_read_call)
    shown = parse(packet)
    lines_per_file: dict[str, int] = {}
    for path, _, _ in shown.code:
        lines_per_file[path] = lines_per_file.get(path, 0) + 1
    assert len(shown.headers) == len(group_hits(results))  # every hit gets a line before any grows much
    assert lines_per_file["src/lexer.py"] >= 10  # the best hit is readable, not a single line
    check_packet(tmp_path, packet, results, files)


def test_first_hits_of_new_files_before_second_hits_of_shown_files(tmp_path: Path) -> None:
    """A file's second hit gives way to a new file's first hit, yet a shown block keeps its rank position."""
    write(tmp_path, "a.py", [f"x_{i} = parse({i})" for i in range(1, 80)])
    write(tmp_path, "b.py", ["def parse(): pass"])
    res = [hit(tmp_path, "a.py", 1, 10, 0.9), hit(tmp_path, "a.py", 40, 50, 0.8), hit(tmp_path, "b.py", 1, 1, 0.7)]
    saw_both = False
    for budget in range(120, 700, 7):
        packet = render_packet("parse", res, max_chars=budget, read_call=cli_read_call)
        spans = [h[:3] for h in parse(packet).headers]
        if ("a.py", 40, 50) in spans:
            assert spans.index(("a.py", 40, 50)) < spans.index(("b.py", 1, 1))
            saw_both = True
        elif ("a.py", 1, 10) in spans and len(packet) > 300:
            assert ("b.py", 1, 1) in spans, budget
    assert saw_both


ISSUE = (
    "Session hooks are dropped when a request passes its own hooks. Calling `Session.request` with "
    "`hooks={'response': callback}` loses the session's `register_hook` callbacks, so the `dispatch_hook` "
    "call only sees one list. Traceback mentions merge_hooks and prepare_request in sessions.py; "
    "expected both callbacks to run for every response object returned by the adapter."
)


def issue_repo(root: Path) -> tuple[list[SearchResult], dict[int, str]]:
    """One file whose best hit is docs, while the line an issue names sits elsewhere in the file."""
    lines = [f"    filler_{i} = {i}" for i in range(1, 121)]
    lines[9] = "def request(self, method, url, hooks=None):"
    lines[10] = '    """Send a request with hooks, callbacks and the session register_hook ones."""'
    lines[79] = "def merge_hooks(request_hooks, session_hooks, dispatch_hook=None):"
    lines[80] = "    merged = dict(session_hooks)  # register_hook callbacks first"
    write(root, "requests/sessions.py", lines)
    write(root, "requests/other.py", [f"OTHER_{i} = {i}" for i in range(1, 30)])
    results = [hit(root, "requests/sessions.py", 10, 30, 0.9), hit(root, "requests/other.py", 1, 29, 0.5)]
    return results, {n: text for n, text in enumerate(lines, 1)}


def test_issue_query_shows_evidence_past_the_hits(tmp_path: Path) -> None:
    results, lines = issue_repo(tmp_path)
    asked: list[str] = []

    def file_lines(path: str) -> dict[int, str]:
        asked.append(path)
        return lines if path == "requests/sessions.py" else {}

    for budget in (1500, 4000, 8000):
        packet = render_packet(ISSUE, results, max_chars=budget, read_call=mcp_read_call, file_lines=file_lines)
        assert len(packet) <= budget
        headers = [line for line in packet.split("\n") if line.startswith("FILE ")]
        extra = [h for h in headers if h.endswith("(issue evidence, not a hit)")]
        assert extra, packet
        assert all(h.startswith("FILE requests/sessions.py  LINES ") for h in extra)
        assert "80| def merge_hooks(request_hooks, session_hooks, dispatch_hook=None):" in packet
        # the evidence comes after its file's hit, and is never listed among the hits left out
        assert packet.index("LINES 10-30") < packet.index("80| def merge_hooks")
        assert "78-82" not in "".join(line for line in packet.split("\n") if "hits" in line and "FILE" not in line)
    assert asked[0] == "requests/sessions.py"


def test_issue_evidence_comes_before_the_weakest_hits(tmp_path: Path) -> None:
    results, lines = issue_repo(tmp_path)
    for i in range(8):
        write(tmp_path, f"other/mod{i}.py", [f"def session_helper_{i}(hooks):", "    return hooks"] + ["    pass"] * 30)
        results.append(hit(tmp_path, f"other/mod{i}.py", 1, 32, 0.4 - i / 100))
    files = {"requests/sessions.py": lines}
    packet = render_packet(
        ISSUE, results, max_chars=1800, read_call=mcp_read_call, file_lines=lambda p: files.get(p, {})
    )
    assert len(packet) <= 1800
    assert "80| def merge_hooks(request_hooks, session_hooks, dispatch_hook=None):" in packet
    assert "more hits" in packet.split("\n")[-1]  # the weakest hits are named in the trailer instead


def test_short_query_or_no_file_lines_shows_only_hits(tmp_path: Path) -> None:
    results, lines = issue_repo(tmp_path)
    plain = render_packet(ISSUE, results, max_chars=4000, read_call=mcp_read_call)
    short = render_packet("merge_hooks", results, max_chars=4000, read_call=mcp_read_call, file_lines=lambda p: lines)
    for packet in (plain, short):
        assert "issue evidence" not in packet
        assert "def merge_hooks" not in packet


def test_evidence_is_not_looked_for_in_a_huge_file(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from codepith.output import packets

    results, lines = issue_repo(tmp_path)
    monkeypatch.setattr(packets, "EVIDENCE_MAX_LINES", 100)
    packet = render_packet(ISSUE, results, max_chars=8000, read_call=mcp_read_call, file_lines=lambda p: lines)
    assert "issue evidence" not in packet


def test_evidence_lines_that_fail_to_load_leave_the_packet_as_it_was(tmp_path: Path) -> None:
    results, _ = issue_repo(tmp_path)

    def broken(path: str) -> dict[int, str]:
        raise OSError("gone")

    assert render_packet(ISSUE, results, max_chars=4000, read_call=mcp_read_call, file_lines=broken) == render_packet(
        ISSUE, results, max_chars=4000, read_call=mcp_read_call
    )
