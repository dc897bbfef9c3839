#!/usr/bin/env python3
"""Train the static model's token vectors on code, with all-MiniLM-L6-v2 as the teacher, fully offline.

``build_model.py`` distils one vector per vocabulary token from the transformer's output for that token
alone. Code is read as sequences, though: this script teaches the static model to reproduce the
teacher's embedding of whole code chunks (the same text the index embeds: path + chunk head), the
idea behind tokenlearn, written here as three small stages:

    collect  chunk source trees (codepith's own walker and chunker) and sample texts per language
    teach    the teacher's normalised mean-pooled embedding of every text (sentence-transformers)
    train    start from the distilled table, fit the SIF-weighted mean of token vectors to the
             teacher's embedding (cosine loss, Adam), keep the epoch with the best held-out loss

The result is a raw token table (``raw.npy`` + ``tokenizer.json``) that ``build_model.py --raw DIR``
turns into a shipped model with the usual PCA, SIF and int8 steps. The training texts must not come
from the benchmark corpora: pass registry/system sources (the Python stdlib, npm's own packages, the
JDK's src.zip, Go's standard library, a kernel subset).

    python scripts/tune_model.py collect --root /usr/lib/go-1.19/src --root ... --out /work/tune/texts.jsonl
    python scripts/tune_model.py teach --texts /work/tune/texts.jsonl --out /work/tune/teacher.npy
    python scripts/tune_model.py train --texts /work/tune/texts.jsonl --teacher /work/tune/teacher.npy \
        --out /work/tune/raw
    HF_HUB_OFFLINE=1 python scripts/build_model.py --raw /work/tune/raw --out /work/models/tuned-256
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import build_model  # noqa: E402  (the sibling script: source model, distillation, SIF weights)


def collect(args: argparse.Namespace) -> None:
    """Sample chunk texts per language so no one language's volume decides the vectors."""
    from codepith.files.read import read_text
    from codepith.files.walk import walk
    from codepith.index.analyze import index_text
    from codepith.index.build import embed_text

    rng = random.Random(args.seed)
    by_lang: dict[str, list[str]] = defaultdict(list)
    for root in args.root:
        files = list(walk(root, "code", None).files)
        rng.shuffle(files)
        for sf in files[: args.files_per_root]:
            text, _ = read_text(sf.path)
            if not text:
                continue
            try:
                chunks = index_text(sf.rel_path, text, sf.language).chunks
            except RecursionError:  # a pathological file: not worth a training text
                continue
            for c in chunks:
                if len(c.content.strip()) >= 40:
                    by_lang[c.language].append(embed_text(c))
    out: list[dict[str, str]] = []
    for lang, texts in sorted(by_lang.items()):
        rng.shuffle(texts)
        kept = texts[: args.per_language]
        out.extend({"lang": lang, "text": t} for t in kept)
        print(f"{lang}: {len(kept)} of {len(texts)}")
    rng.shuffle(out)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as fh:
        for row in out:
            fh.write(json.dumps(row) + "\n")
    print(f"wrote {len(out)} texts to {args.out}")


def _texts(path: Path) -> list[str]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line)["text"] for line in fh]


def teach(args: argparse.Namespace) -> None:
    """The teacher's embeddings (its own 256-token window, mean pooling, unit length)."""
    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(args.threads)
    teacher = SentenceTransformer(str(build_model.source_model_dir()), device="cpu")
    texts = _texts(args.texts)
    emb = teacher.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=True)
    np.save(args.out, np.asarray(emb, dtype=np.float32))
    print(f"wrote {emb.shape} to {args.out}")


def _token_batches(tokenizer_json: str, texts: list[str], max_chars: int) -> list[list[int]]:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(tokenizer_json)
    tok.no_truncation()
    tok.no_padding()
    encoded = tok.encode_batch([t[:max_chars] for t in texts], add_special_tokens=False)
    # codepith's loader (like model2vec) drops unknown tokens before pooling: train on what it pools
    unk = tok.token_to_id(json.loads(tokenizer_json).get("model", {}).get("unk_token") or "[UNK]")
    return [[i for i in e.ids if i != unk] for e in encoded]


def train(args: argparse.Namespace) -> None:
    """Fit token vectors so the SIF-weighted mean of a text's tokens points where the teacher's does."""
    import numpy as np
    import torch
    from model2vec.distill.inference import compute_weights

    build_model.make_deterministic(args.seed, args.threads)
    torch.use_deterministic_algorithms(False)  # EmbeddingBag's backward has no deterministic kernel
    raw, tokenizer_json = build_model.raw_token_vectors(build_model.source_model_dir(), [], args.cache_dir)
    teacher = torch.from_numpy(np.load(args.teacher))
    ids = _token_batches(tokenizer_json, _texts(args.texts), args.max_chars)
    sif = torch.from_numpy(np.asarray(compute_weights(len(raw), sif_coefficient=args.sif), dtype=np.float32))

    n = len(ids)
    order = list(range(n))
    random.Random(args.seed).shuffle(order)
    held = set(order[: max(1, n // 20)])
    train_rows = [i for i in order if i not in held]
    held_rows = sorted(held)

    table = torch.nn.Parameter(torch.from_numpy(np.asarray(raw, dtype=np.float32)).clone())
    opt = torch.optim.Adam([table], lr=args.lr)

    def pooled(rows: list[int]) -> torch.Tensor:
        flat = torch.tensor([t for r in rows for t in ids[r]] or [0], dtype=torch.long)
        offsets = torch.tensor([0, *np.cumsum([len(ids[r]) for r in rows])[:-1].tolist()], dtype=torch.long)
        weights = sif[flat]
        bags = torch.nn.functional.embedding_bag(flat, table, offsets, mode="sum", per_sample_weights=weights)
        return torch.nn.functional.normalize(bags, dim=1)

    def loss_of(rows: list[int]) -> torch.Tensor:
        return (1 - (pooled(rows) * teacher[rows]).sum(dim=1)).mean()

    with torch.no_grad():
        best = float(loss_of(held_rows))
    print(f"held-out loss before training: {best:.4f}")
    best_table = table.detach().clone()
    for epoch in range(args.epochs):
        random.Random(args.seed + epoch).shuffle(train_rows)
        for b in range(0, len(train_rows), args.batch):
            rows = train_rows[b : b + args.batch]
            opt.zero_grad()
            loss = loss_of(rows)
            loss.backward()  # type: ignore[no-untyped-call,unused-ignore]  # typed only where torch is installed
            opt.step()
        with torch.no_grad():
            held_loss = float(loss_of(held_rows))
        print(f"epoch {epoch + 1}: held-out loss {held_loss:.4f}")
        if held_loss < best:
            best, best_table = held_loss, table.detach().clone()
    args.out.mkdir(parents=True, exist_ok=True)
    # Trained on code alone, a table drifts from where the teacher put words on their own, which is how
    # queries arrive: keeping part of the distilled table holds them near it (a blend of 0.3 trained
    # rose on both tuning sets where the trained table alone rose on one and fell on the other).
    out = args.blend * best_table.numpy() + (1.0 - args.blend) * np.asarray(raw, dtype=np.float32)
    np.save(args.out / "raw.npy", out.astype(np.float32))
    (args.out / "tokenizer.json").write_text(tokenizer_json, encoding="utf-8")
    info: dict[str, Any] = {
        "texts": str(args.texts),
        "texts_sha256": build_model.sha256_file(args.texts),
        "teacher": str(args.teacher),
        "teacher_sha256": build_model.sha256_file(args.teacher),
        "epochs": args.epochs,
        "lr": args.lr,
        "batch": args.batch,
        "sif": args.sif,
        "held_out_loss": best,
        "seed": args.seed,
        "blend": args.blend,
    }
    (args.out / "TUNE_INFO.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out} (best held-out loss {best:.4f})")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="stage", required=True)
    c = sub.add_parser("collect", help="sample chunk texts from source trees")
    c.add_argument("--root", type=Path, action="append", required=True, help="a source tree (repeat)")
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--per-language", type=int, default=6000)
    c.add_argument("--files-per-root", type=int, default=4000)
    c.add_argument("--seed", type=int, default=0)
    t = sub.add_parser("teach", help="the teacher's embeddings of the texts")
    t.add_argument("--texts", type=Path, required=True)
    t.add_argument("--out", type=Path, required=True)
    t.add_argument("--threads", type=int, default=2)
    r = sub.add_parser("train", help="fit the token table to the teacher")
    r.add_argument("--texts", type=Path, required=True)
    r.add_argument("--teacher", type=Path, required=True)
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--epochs", type=int, default=4)
    r.add_argument("--lr", type=float, default=1e-3)
    r.add_argument("--batch", type=int, default=256)
    r.add_argument("--sif", type=float, default=1e-4)
    r.add_argument("--max-chars", type=int, default=1000)
    r.add_argument("--cache-dir", type=Path, default=None, help="reuse build_model's distilled table")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--threads", type=int, default=2)
    r.add_argument("--blend", type=float, default=1.0, help="share of the trained table (rest: the distilled one)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    {"collect": collect, "teach": teach, "train": train}[args.stage](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
