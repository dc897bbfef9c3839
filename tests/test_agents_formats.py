"""The surgical editors install relies on: JSON/JSONC spans, TOML tables, the managed markdown block."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codepith.agents import jsonc, markdown, tomlfile

ENTRY = {"command": "/opt/venv/bin/codepith", "args": ["mcp"]}
PATH = ("mcpServers", "codepith")

scalars = st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), st.text(max_size=8))
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=12,
)
documents = st.dictionaries(st.text(max_size=6).filter(lambda k: k != "mcpServers"), values, max_size=5)


@settings(max_examples=150, deadline=None)
@given(doc=documents, indent=st.sampled_from([None, 2, 4, "\t"]))
def test_parse_agrees_with_json_and_edits_round_trip(doc: dict[str, Any], indent: Any) -> None:
    text = json.dumps(doc, indent=indent) + ("\n" if indent is not None else "")
    assert jsonc.parse(text).value == json.loads(text)
    new, created = jsonc.set_member(text, PATH, ENTRY)
    parsed = json.loads(new)
    assert parsed["mcpServers"]["codepith"] == ENTRY
    del parsed["mcpServers"]
    assert parsed == doc
    assert created == ("mcpServers",)
    back = jsonc.remove_member(new, PATH)
    assert jsonc.is_empty_object(back, created)
    assert jsonc.remove_member(back, created) == text


@pytest.mark.parametrize(
    "text",
    [
        '{\n  // note\n  "a": 1, // why\n  "mcpServers": {\n    "x": {"y": "//not a comment"}, /* c */\n  },\n}\n',
        '{"mcpServers":{"x":1}}',
        '{\r\n  "mcpServers": {\r\n    "x": 1\r\n  }\r\n}\r\n',
        '\ufeff{\n  "mcpServers": {}\n}\n',
        '{\n  "mcpServers": {\n    "x": 1 // last\n  }\n}\n',
    ],
)
def test_jsonc_insert_and_remove_are_exact_inverses(text: str) -> None:
    new, created = jsonc.set_member(text, PATH, ENTRY)
    assert created is None
    assert jsonc.get(new, PATH) == ENTRY
    assert jsonc.get(new, ("mcpServers", "x")) == jsonc.get(text, ("mcpServers", "x"))
    back = jsonc.remove_member(new, PATH)
    assert back == text or (text.endswith("{}\n}\n") and back == text)
    if "\r\n" in text:
        assert "\n" not in new.replace("\r\n", "")


@pytest.mark.parametrize(
    "bad, where",
    [
        ('{"a": 1,, }', "line 1"),
        ('{\n  "a": [1, 2\n}', "line 3"),
        ('{"a": 1} trailing', "line 1"),
        ("/* open", "unterminated comment"),
        ('{"a": "no end}', "unterminated string"),
        ("[1, 2]", "not an object"),
        ('{"n": ' + "1" * 5000 + "}", "number of 5000 characters is too long to read at line 1 column 7"),
    ],
)
def test_jsonc_errors_say_where(bad: str, where: str) -> None:
    with pytest.raises(jsonc.JsoncError, match=where):
        jsonc.set_member(bad, PATH, ENTRY)


def test_toml_keeps_comments_and_round_trips() -> None:
    text = '# mine\nmodel = "m" # inline\n\n[mcp_servers.a]\ncommand = "a" # keep\n\n# tail\n[profiles.p]\nx = 1\n'
    value = {**ENTRY, "startup_timeout_sec": 30}
    new, _ = tomlfile.set_table(text, ("mcp_servers", "codepith"), value)
    assert new.startswith(text)  # appended as its own block: every line before it is untouched
    assert tomlfile.get(new, ("mcp_servers", "codepith")) == value
    assert tomlfile.remove_table(new, ("mcp_servers", "codepith")) == text
    updated, _ = tomlfile.set_table(new, ("mcp_servers", "codepith"), {**value, "startup_timeout_sec": 60})
    assert updated.startswith(text) and "startup_timeout_sec = 60" in updated


def test_toml_errors_are_reported() -> None:
    with pytest.raises(tomlfile.TomlError):
        tomlfile.set_table("[a\n", ("mcp_servers", "codepith"), ENTRY)
    with pytest.raises(tomlfile.TomlError):
        tomlfile.set_table('mcp_servers = "x"\n', ("mcp_servers", "codepith"), ENTRY)


def test_markdown_block_is_replaced_in_place_and_removed_exactly() -> None:
    block = markdown.wrap("new text")
    text = f"# Rules\n\n{markdown.wrap('old text')}\n\n## More of mine\n"
    new = markdown.set_block(text, block)
    assert new == f"# Rules\n\n{block}\n\n## More of mine\n"
    for original in ("", "x", "x\n", "x\n\n", "# A\r\n\r\nb\r\n"):
        added = markdown.set_block(original, block)
        assert markdown.current(added) is not None
        expected = original if original.endswith("\n") or not original else original + "\n"  # gains a final newline
        assert markdown.remove_block(added) == expected
    with pytest.raises(markdown.BlockError):
        markdown.set_block(f"{markdown.BEGIN}\nno end\n", block)


@pytest.mark.parametrize("text", ["", "\n", "// only a comment\n", "/* a */\n// b\n"])
def test_jsonc_document_made_from_nothing_goes_away_again(text: str) -> None:
    new, created = jsonc.set_member(text, PATH, ENTRY)
    assert created == () and jsonc.get(new, PATH) == ENTRY
    if text.strip():
        assert new.startswith(text)  # the comments stay where they were
    back = jsonc.remove_root(jsonc.remove_member(jsonc.remove_member(new, PATH), PATH[:1]))
    assert back == (text if text.strip() else "")


@pytest.mark.parametrize(
    "later",
    [
        "\n# second server: keep this comment\n[mcp_servers.second]\ncommand = 'y'\n",
        "# right below it, no blank line\n[mcp_servers.second]\ncommand = 'y'\n",
        "\n# a last word of the person's, at the end\n",
    ],
)
def test_toml_cut_keeps_the_comments_after_the_table(later: str) -> None:
    """Cut mode (the file changed since install): a comment below codepith's table is the person's, one
    just above the next header belongs to that table; neither goes with codepith's table."""
    text = 'model = "o3"\n'
    new, _ = tomlfile.set_table(text, PATH, ENTRY)
    back = tomlfile.remove_table(new + later, PATH)
    assert later.strip() in back and tomlfile.get(back, PATH) is None
    assert back == text + later or back == text + "\n" + later  # at most the blank line install put before it


def test_toml_cut_in_a_crlf_file_leaves_no_blank_line() -> None:
    text = 'model = "o3"\r\n'
    new, _ = tomlfile.set_table(text, PATH, ENTRY)
    assert tomlfile.remove_table(new, PATH) == text
    assert tomlfile.remove_table(new.replace("o3", "o4"), PATH) == text.replace("o3", "o4")


def test_jsonc_cut_keeps_the_comments_beside_the_only_member() -> None:
    """The other servers were removed since install: the object's comment is still the person's."""
    text = '{\n  "mcpServers": {\n    // work servers: ask ops first\n    "codepith": {"command": "x"}\n  }\n}\n'
    assert jsonc.remove_member(text, PATH) == '{\n  "mcpServers": {\n    // work servers: ask ops first\n  }\n}\n'
    text = '{"mcpServers": {/* mine */ "codepith": 1}}'
    assert jsonc.remove_member(text, PATH) == '{"mcpServers": {/* mine */ }}'
