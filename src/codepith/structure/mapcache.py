"""A repository map's reference tables, made once per indexed content and reused.

The tables (``repomap.reference_graph``) take one pass over every chunk: about a minute on the kernel.
They depend on the indexed text alone, so they are kept for the corpus they were made from (a long-lived
caller such as the MCP server asks again in a fraction of a second) and saved beside a single root's
index for the next process, keyed by the content of its views, not by a generation number: a commit
that only renewed stamps (a file touched) keeps them. The focus and the walk are redone per call.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from codepith.index.corpus import Corpus
from codepith.search.ranking import is_test_path

from .repomap import ReferenceGraph, load_graph, reference_graph, save_graph, score_definitions

_EXAMPLES = re.compile(r"(^|/)(_?examples?|samples?|demos?|docs?_src|docs?|benchmarks?)/")


def secondary(path: str) -> bool:
    """Tests and examples: their definitions rank low in a repository map (used by nothing that ships)."""
    return is_test_path(path) or _EXAMPLES.search(path) is not None


class MapTables:
    """The reference tables and unfocused scores of the last corpus asked about (held weakly: a corpus
    replaced by a refresh is not kept alive by its tables)."""

    def __init__(self) -> None:
        self._held: tuple[weakref.ref[Corpus], ReferenceGraph, np.ndarray] | None = None

    def scores(
        self,
        corpus: Corpus,
        folder: Path | None,
        focus_files: Mapping[str, float] | None = None,
        focus_terms: Sequence[str] = (),
    ) -> tuple[ReferenceGraph, np.ndarray]:
        """The tables and each definition's score, leaning toward the focus when one is given. ``folder``:
        where a single root's index lives (the tables are saved there), or None (several roots)."""
        graph, plain = self._tables(corpus, folder)
        if not focus_files and not focus_terms:
            return graph, plain
        return graph, score_definitions(graph, focus_files=focus_files, focus_terms=focus_terms, demote=secondary)

    def _tables(self, corpus: Corpus, folder: Path | None) -> tuple[ReferenceGraph, np.ndarray]:
        if self._held is not None and self._held[0]() is corpus:
            return self._held[1], self._held[2]
        key = repr([(p.prefix, p.view.content_key()) for p in corpus.parts])
        got = load_graph(folder, key, corpus.files) if folder is not None else None
        if got is None:
            graph = reference_graph(corpus.chunks)
            plain = score_definitions(graph, demote=secondary)
            if folder is not None:
                save_graph(graph, folder, key, plain)
        else:
            graph, plain = got
        self._held = (weakref.ref(corpus), graph, plain)
        return graph, plain
