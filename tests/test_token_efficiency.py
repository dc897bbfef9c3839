"""Token-efficiency helpers: which code lines a reply shows, the budget cut, and the recall rule."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from budget import (  # noqa: E402
    Document,
    budget_recall,
    concat_documents,
    packet_headers,
    packet_parts,
    packet_shown_lines,
    query_keywords,
    rank_files,
    split_lines,
    target_shown,
)
from metrics import Target  # noqa: E402

PACKET = "\n".join(
    [
        "FILE src/app.py  LINES 10-40  SCORE 0.91",
        "```python",
        "12| def route(self, rule):",
        "13|",
        "14|     return self.add(rule)",
        "... (lines 15-30 omitted)",
        "31|     x = 1",
        '... (lines 32-40 omitted; read_snippet(path="src/app.py", start_line=32, end_line=40))',
        "```",
        "FILE src/urls.py  LINES 1-20  SCORE 0.5  (path match only)",
        "FILE lib/b.py  LINES 5-9  SCORE 0.4",
        "````js",
        "7| const s = ```x```",
        "````",
        '2 more hits (read e.g. read_snippet(path="c.py", start_line=1, end_line=9)): c.py 1-9, d.py 3-4',
    ]
)


def test_packet_numbered_rows_are_shown_lines_of_the_last_header() -> None:
    shown = packet_shown_lines(PACKET)
    assert shown == {"src/app.py": {12, 13, 14, 31}, "lib/b.py": {7}}


def test_pointer_markers_and_trailer_show_no_code() -> None:
    shown = packet_shown_lines(PACKET)
    assert "src/urls.py" not in shown and "c.py" not in shown and "d.py" not in shown
    assert not target_shown(shown, Target("src/app.py", 15, 30))  # only an omission marker covers it
    assert not target_shown(shown, Target("c.py"))  # named in the trailer only
    assert target_shown(shown, Target("src/app.py", 30, 31))


def test_numbered_rows_before_any_header_are_ignored() -> None:
    assert packet_shown_lines("3| stray\nno header here") == {}


def test_packet_headers_and_parts() -> None:
    heads = packet_headers(PACKET)
    assert [(h.path, h.start, h.end, h.pointer) for h in heads] == [
        ("src/app.py", 10, 40, False),
        ("src/urls.py", 1, 20, True),
        ("lib/b.py", 5, 9, False),
    ]
    parts = packet_parts(PACKET)
    assert parts.hits == 3
    assert parts.code_lines == 5
    assert parts.fences == len("```python\n```\n````js\n````\n")
    assert parts.markers == len(PACKET.split("\n")[5]) + 1 + len(PACKET.split("\n")[7]) + 1
    total = parts.headers + parts.fences + parts.code + parts.markers + parts.pointers + parts.trailer
    assert total == len(PACKET) + 1  # every line counted once, with its newline


def test_concat_cuts_the_last_document_at_a_line_and_counts_its_lines() -> None:
    docs = [
        Document("a.py", 1, ("aaaa", "bbbb")),  # "a.py:1-2\n" (9) + 5 + 5 = 19
        Document("b.py", 10, ("cccc", "dddd", "eeee")),  # header "b.py:10-12\n" (11)
        Document("c.py", 1, ("ffff",)),
    ]
    reply = concat_documents(docs, 19 + 11 + 5 + 4)
    assert len(reply.text) <= 39
    assert reply.text == "a.py:1-2\naaaa\nbbbb\nb.py:10-12\ncccc\n"
    assert reply.shown == {"a.py": {1, 2}, "b.py": {10}}  # c.py never reached


def test_concat_leaves_out_a_header_whose_first_line_does_not_fit() -> None:
    docs = [Document("a.py", 1, ("x",)), Document("b.py", 1, ("y" * 50,))]
    reply = concat_documents(docs, 30)
    assert reply.text == "a.py:1-1\nx\n"
    assert "b.py" not in reply.shown


def test_concat_everything_fits() -> None:
    docs = [Document("a.py", 3, ("x", "y"))]
    reply = concat_documents(docs, 1000)
    assert reply.text == "a.py:3-4\nx\ny\n"
    assert reply.shown == {"a.py": {3, 4}}


def test_split_lines_matches_editor_numbering() -> None:
    assert split_lines("a\nb\n") == ("a", "b")
    assert split_lines("a\nb") == ("a", "b")
    assert split_lines("") == ()
    assert split_lines("\n\nx") == ("", "", "x")


def test_recall_counts_span_overlap_and_path_only_targets() -> None:
    shown = {"a.py": {5, 6}, "b.py": {100}}
    targets = [Target("a.py", 1, 4), Target("a.py", 6, 9), Target("b.py"), Target("c.py")]
    assert budget_recall(shown, targets) == 0.5
    assert budget_recall(shown, [Target("b.py"), Target("b.py")]) == 1.0  # duplicates count once
    assert budget_recall(shown, []) is None


def test_query_keywords_drop_short_and_stop_words_keep_order() -> None:
    assert query_keywords("How does the Router handle URL routing in the router?") == [
        "router",
        "handle",
        "url",
        "routing",
    ]
    assert query_keywords("is it on") == []
    assert query_keywords("parse_args for CLI") == ["parse_args", "cli"]


def test_rank_files_by_distinct_keywords_then_total_matches() -> None:
    counts = {
        "many.py": {"a": 50},
        "both.py": {"a": 1, "b": 1},
        "both_more.py": {"a": 3, "b": 1},
        "none.py": {"a": 0},
        "also_both.py": {"a": 1, "b": 1},
    }
    assert rank_files(counts) == ["both_more.py", "also_both.py", "both.py", "many.py"]


def test_parser_reads_the_real_packet_renderer() -> None:
    """The renderer's own output parses to exactly the code lines it prints, under a tight budget too."""
    from codepith.chunks.chunk import Chunk
    from codepith.output.packets import render_packet
    from codepith.output.read import mcp_read_call
    from codepith.search.result import SearchResult

    body = [f"    value_{n} = parse_token({n})" if n % 7 == 0 else f"    other_{n} = {n}" for n in range(1, 61)]
    results = [
        SearchResult(Chunk("pkg/tokens.py", 1, 61, "\n".join(["def parse_all():", *body]), "python"), 0.9),
        SearchResult(Chunk("pkg/urls.py", 1, 2, "x = 1\ny = 2", "python"), 0.5, path_match=True),
    ]
    for budget in (300, 1000, 20000):
        reply = render_packet("parse token", results, max_chars=budget, read_call=mcp_read_call)
        shown = packet_shown_lines(reply)
        assert shown, reply
        printed = {int(line.split("|")[0]) for line in reply.split("\n") if line.split("|")[0].isdigit()}
        assert shown == {"pkg/tokens.py": printed}
        if budget == 20000:
            assert 7 + 1 in printed  # line 8 of the file holds value_7 = parse_token(7)
        assert not target_shown(shown, Target("pkg/urls.py"))  # a path-only pointer shows no code
