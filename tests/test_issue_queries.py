"""Issue-sized queries: what the parser reads out of a bug report, and each evidence signal pinned on a
small made-up repository (every ranking test also checks that switching its signal off loses the answer)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write

import codepith
from codepith.search import evidence, query
from codepith.search.issue import analyze_issue, is_long_query
from codepith.search.query import parse_query

PROSE = (
    "We have been using this library for a while in production and it mostly works well. "
    "Recently, after upgrading, something started going wrong for our team and we are not sure why. "
)

TRACEBACK = """Crash when saving a report

{prose}

```
Traceback (most recent call last):
  File "/home/me/project/run.py", line 3, in <module>
    main()
  File "/usr/lib/python3.11/site-packages/shop/billing/ledger.py", line 12, in settle
    total = compute(entries)
TypeError: unsupported operand
```
"""


def test_long_queries_are_issues_and_short_ones_are_not() -> None:
    assert is_long_query(TRACEBACK.format(prose=PROSE))
    assert not is_long_query("how are routes registered")
    assert parse_query(TRACEBACK.format(prose=PROSE)).issue
    assert not parse_query("parse_config").issue and not parse_query("session cookie expiry").issue
    # a short query keeps every term at full weight
    assert parse_query("session cookie expiry").weights is None


def test_analyze_reads_frames_paths_names_and_phrases() -> None:
    ev = analyze_issue(
        TRACEBACK.format(prose=PROSE)
        + "\nSee `Ledger.settle` in shop/billing/ledger.py and the `--dry-run` flag; "
        + "pylint says `unused-import`. Also shop.billing.ledger is imported.\n"
        + "File ~/code/shop/shop/core/plot.py:841, in Plot._plot(self, pyplot)\n"
        + "ValueError: amount must be positive for every entry\n"
        + "https://github.com/o/r/blob/main/shop/api/views.py#L34\n"
    )
    frames = {(f.path.split("site-packages/")[-1], f.line, f.function) for f in ev.places}
    assert ("shop/billing/ledger.py", 12, "settle") in frames
    assert any(f.path.endswith("shop/core/plot.py") and f.line == 841 and f.function == "_plot" for f in ev.places)
    assert any(f.path == "shop/api/views.py" and f.line == 34 for f in ev.places)
    names = dict(ev.code_names)
    assert "settle" in names and "Ledger" in names
    assert "shop.billing.ledger" in ev.dotted
    assert "dry-run" in ev.phrases and "unused-import" in ev.phrases
    assert "amount must be positive for every entry" in ev.phrases
    assert "TypeError" in ev.exceptions


def test_resolve_paths_and_modules(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    write(
        tmp_path,
        {
            "src/shop/billing/ledger.py": "def settle():\n    return 1\n",
            "src/shop/billing/__init__.py": "X = 1\nY = 2\n",
            "src/shop/api/ledger.py": "def other():\n    return 2\n",
        },
    )
    corpus = codepith.Index.from_path(tmp_path, model=model).corpus
    assert evidence.resolve_path(corpus, "/venv/site-packages/shop/billing/ledger.py") == ["src/shop/billing/ledger.py"]
    assert evidence.resolve_path(corpus, "ledger.py") == ["src/shop/api/ledger.py", "src/shop/billing/ledger.py"]
    assert evidence.resolve_path(corpus, "other/place/ledger.py") == []  # only the name agrees, twice
    assert evidence.resolve_module(corpus, "shop.billing.ledger.settle") == (["src/shop/billing/ledger.py"], ["settle"])
    assert evidence.resolve_module(corpus, "shop.billing") == (["src/shop/billing/__init__.py"], [])
    assert evidence.resolve_module(corpus, "app.run") == ([], ["app", "run"])  # one bare name: a variable


def _distractors() -> dict[str, str]:
    """Files that the issue's prose matches better than the answer does."""
    prose_words = "\n".join(
        f"def report_{i}(entries):\n    # save the report for the team after upgrading production\n"
        f"    return save_report(entries, {i})\n"
        for i in range(6)
    )
    return {"shop/reports/save.py": prose_words, "shop/reports/export.py": prose_words.replace("report_", "export_")}


def _top_file(tmp_path: Path, model, text: str) -> str:  # type: ignore[no-untyped-def]
    index = codepith.Index.from_path(tmp_path, model=model)
    return index.search(text, top_k=5)[0].chunk.file_path


def test_traceback_frame_points_at_its_file(tmp_path: Path, model, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    files = _distractors()
    files["shop/billing/ledger.py"] = (
        "\n" * 8 + "def settle(entries):\n    total = compute(entries)\n    return total\n"
    )
    write(tmp_path, files)
    text = TRACEBACK.format(prose=PROSE + "Saving the report for the team fails after upgrading.")
    assert _top_file(tmp_path, model, text) == "shop/billing/ledger.py"
    monkeypatch.setattr(evidence, "FRAME", 0.0)
    monkeypatch.setattr(evidence, "MENTION", 0.0)
    monkeypatch.setattr(evidence, "NAME", 0.0)
    assert _top_file(tmp_path, model, text) != "shop/billing/ledger.py"


def test_quoted_message_points_at_the_code_that_holds_it(
    tmp_path: Path, model, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    files = _distractors()
    files["shop/billing/checks.py"] = (
        "def check(value):\n    if value < 0:\n        raise ValueError('amount must be positive for every entry')\n"
    )
    write(tmp_path, files)
    text = (
        f"Saving the report fails\n\n{PROSE} Saving the report for the team gives:\n\n"
        "```\nValueError: amount must be positive for every entry\n```\n"
    )
    assert _top_file(tmp_path, model, text) == "shop/billing/checks.py"
    monkeypatch.setattr(evidence, "PHRASE", 0.0)
    assert _top_file(tmp_path, model, text) != "shop/billing/checks.py"


def test_option_name_points_at_its_definition(tmp_path: Path, model, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    files = _distractors()
    files["shop/cli/options.py"] = (
        "OPTIONS = [\n    ('min-report-lines', {'default': 4, 'type': 'int'}),\n    ('color', {})\n]\n"
    )
    write(tmp_path, files)
    text = (
        f"Setting `min-report-lines` to 0 should stop saving the report\n\n{PROSE} "
        "The report for the team is saved anyway."
    )
    assert _top_file(tmp_path, model, text) == "shop/cli/options.py"
    monkeypatch.setattr(evidence, "PHRASE", 0.0)
    assert _top_file(tmp_path, model, text) != "shop/cli/options.py"


def test_module_name_points_at_its_file(tmp_path: Path, model, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    files = _distractors()
    files["shop/billing/ledger.py"] = "def balance(entries):\n    return sum(e.amount for e in entries)\n"
    write(tmp_path, files)
    text = (
        f"Saving the report for the team is wrong\n\n{PROSE} "
        "The numbers shop.billing.ledger gives for the report look off."
    )
    assert _top_file(tmp_path, model, text) == "shop/billing/ledger.py"
    monkeypatch.setattr(evidence, "MENTION", 0.0)
    assert _top_file(tmp_path, model, text) != "shop/billing/ledger.py"


def test_code_span_name_points_at_its_definition(tmp_path: Path, model, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    files = _distractors()
    files["shop/billing/ledger.py"] = "def reconcile_entries(entries):\n    return [e for e in entries if e]\n"
    write(tmp_path, files)
    text = (
        f"Saving the report for the team loses entries\n\n{PROSE} "
        "I think `reconcile_entries` drops some when we save the report."
    )
    assert _top_file(tmp_path, model, text) == "shop/billing/ledger.py"
    monkeypatch.setattr(evidence, "NAME", 0.0)
    assert _top_file(tmp_path, model, text) != "shop/billing/ledger.py"


def test_issue_body_words_weigh_less_than_the_title(tmp_path: Path, model, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    write(
        tmp_path,
        {
            "shop/cookies.py": "def cookie_expiry(cookie):\n    # cookie expiry date\n    return cookie.expires\n",
            "shop/upgrade.py": "def migrate(production, team, library):\n    # production library for the team\n"
            "    return production\n",
        },
    )
    text = "Cookie expiry is ignored\n\n" + PROSE + "In production, the team library is affected."
    index = codepith.Index.from_path(tmp_path, model=model)
    assert index.search(text, top_k=5, mode="lexical")[0].chunk.file_path == "shop/cookies.py"
    monkeypatch.setattr(query, "PROSE_WEIGHT", 1.0)
    assert index.search(text, top_k=5, mode="lexical")[0].chunk.file_path == "shop/upgrade.py"


def test_path_like_runs_do_not_backtrack() -> None:
    """A pasted log of path-like text is read in linear time (a nested-quantifier path regex took
    minutes on this; no timing assertion here, the suite's run time shows it)."""
    text = "x.y/z-w_" * 2400 + "\nsee shop/billing/ledger.py:12\n" + "a/" * 4000
    ev = analyze_issue(text)
    assert any(f.path == "shop/billing/ledger.py" and f.line == 12 for f in ev.places)


DRIFTED = """Crash when settling

```
Traceback (most recent call last):
  File "/venv/site-packages/shop/billing/ledger.py", line 90, in _f
    if (entry.amount < 0) == True:
TypeError: Invalid comparison
```
"""


def test_a_frames_printed_code_line_finds_its_chunk_when_lines_drifted(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    """A reporter's release numbers its lines differently from the tree searched; the code line CPython
    prints under the frame still says which of two same-named helpers ran."""
    helper = "def {outer}(entries):\n    def _f(entry):\n{body}    return [_f(e) for e in entries]\n\n\n"
    checked = "        if (entry.amount < 0) == True:\n            return 0\n        return entry.amount\n"
    files = {
        "shop/billing/ledger.py": helper.format(outer="settle", body=checked)
        + "\n" * 80
        + helper.format(outer="refund", body="        return -entry.amount\n"),
    }
    write(tmp_path, files)
    ev = analyze_issue(DRIFTED)
    (frame,) = [f for f in ev.places if f.function == "_f"]
    assert frame.source == "if (entry.amount < 0) == True:"
    corpus = codepith.Index.from_path(tmp_path, model=model).corpus
    idx = evidence._frame_chunk(corpus, "shop/billing/ledger.py", frame)
    assert idx is not None and "settle" in corpus.chunks[idx].symbols
    # without the printed line, the nearest `_f` to the reported line 90 is the wrong one
    unprinted = type(frame)(frame.path, frame.line, frame.function, True)
    blind = evidence._frame_chunk(corpus, "shop/billing/ledger.py", unprinted)
    assert blind is not None and "refund" in corpus.chunks[blind].symbols


def test_frames_without_a_code_line_have_no_source() -> None:
    frames = '\n  File "x/y/z.py", line 4, in f\n  File "x/y/w.py", line 5, in g\n'
    ev = analyze_issue(TRACEBACK.format(prose=PROSE) + frames)
    by_func = {f.function: f.source for f in ev.places}
    assert by_func["settle"] == "total = compute(entries)"
    assert by_func["f"] is None  # the next line is another frame
