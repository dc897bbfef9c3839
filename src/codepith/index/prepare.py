"""One file's text made into what a segment stores: chunks, term bags, vectors, encoded together.

All of a file's work happens in one call, so a worker process can do it whole and send back a few
buffers (``store.segment.NewFile``); the building process then only concatenates.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from codepith.chunks.chunk import Chunk
from codepith.chunks.marks import file_marks
from codepith.index.analyze import FileAnalysis
from codepith.model.loader import StaticModel
from codepith.store.segment import NewFile, encode_file

log = logging.getLogger("codepith")

EMBED_CHARS = 1000


@dataclass(frozen=True)
class Prepared:
    """A file ready for a segment, and why it fell back to line windows (None if it did not)."""

    file: NewFile
    fallback: str | None


def embed_text(chunk: Chunk) -> str:
    """What the dense model sees: the path adds words the code itself may lack (e.g. 'middleware/cors');
    the head of the chunk (signature, docstring) carries its meaning, so the tail is not embedded
    (measured: 1,000 chars lose nothing against whole chunks and halve tokenizer time; 600 lose 0.004)."""
    return f"{chunk.file_path}\n{chunk.content[:EMBED_CHARS]}"


def prepare_file(model: StaticModel, rel_path: str, got: FileAnalysis) -> Prepared:
    """Embed and encode an analysed file. A model that fails on the text leaves the file's vectors at zero
    (it is still found by its words), rather than failing the build."""
    texts = [embed_text(c) for c in got.chunks]
    vectors = np.zeros((len(texts), model.dims), np.float32)
    if texts:
        try:
            vectors = model.encode(texts)
        except Exception as exc:  # noqa: BLE001 - one file's text never fails a build
            log.warning("embedding %s failed (%s); it is found by its words only", rel_path, type(exc).__name__)
    terms = [(t.terms, t.counts, t.length) for t in got.terms]
    marks = file_marks(rel_path, got.chunks)
    return Prepared(encode_file(rel_path, got.chunks, terms, vectors, marks), got.fallback)
