#!/usr/bin/env python3
"""Train the HTML block model (src/clean/block_model_trees.rs) on the extraction dev set.

    cargo run --release --example extraction_bench -- BENCH /tmp/out --rows /tmp/rows.jsonl
    python3 scripts/train_block_model.py BENCH /tmp/rows.jsonl [--write src/clean/block_model_trees.rs]

Each block is labelled by the share of its word 4-shingles found in the
page's reference text. Pages are split into folds by domain, so the
cross-validated score printed first is measured on sites the model never saw;
only then is the model fitted on every page and (with --write) exported as
Rust arrays. Needs numpy and scikit-learn.
"""
import argparse
import importlib.util
import json
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np
from sklearn.ensemble import GradientBoostingClassifier

WORD = re.compile(r"\w+")


def shingles(text):
    toks = WORD.findall(text)
    if len(toks) < 4:
        return [tuple(toks)] if toks else []
    return [tuple(toks[i:i + 4]) for i in range(len(toks) - 3)]


def load(bench, rows_path):
    index = {}
    for line in open(bench / "index.jsonl", encoding="utf8"):
        if line.strip():
            d = json.loads(line)
            index[d["id"]] = d
    pages = []
    for line in open(rows_path, encoding="utf8"):
        page = json.loads(line)
        pid = page["id"]
        expected = (bench / "expected" / f"{pid}.txt").read_text(encoding="utf8")
        exp_sh = Counter(shingles(expected))
        exp_toks = " " + " ".join(WORD.findall(expected)) + " "
        total = max(sum(exp_sh.values()), 50)
        X, y, w, texts = [], [], [], []
        for b in page["blocks"]:
            sh = shingles(b["t"])
            if not sh:
                continue
            if len(sh) == 1 and len(sh[0]) < 4:
                good = 1.0 if " " + " ".join(sh[0]) + " " in exp_toks else 0.0
            else:
                good = sum(1 for s in sh if s in exp_sh) / len(sh)
            X.append(b["f"])
            y.append(1 if good >= 0.5 else 0)
            # Each page weighs the same in the metric; a block also breaks
            # the three shingles that span its edges.
            w.append(min((len(sh) + 3) / total, 2.0))
            texts.append(b["t"])
        pages.append({"id": pid, "domain": index[pid]["domain"], "type": index[pid]["page_type"],
                      "X": np.array(X, dtype=np.float32).reshape(-1, 33), "y": np.array(y),
                      "w": np.array(w), "texts": texts, "expected": expected})
    return pages


def folds_by_domain(pages, k):
    domains = sorted({p["domain"] for p in pages})
    rng = np.random.RandomState(7)
    rng.shuffle(domains)
    fold_of = {d: i % k for i, d in enumerate(domains)}
    return [fold_of[p["domain"]] for p in pages]


def stack(pages):
    """Blocks the structural pass kept, the only ones the model judges."""
    X = np.vstack([p["X"] for p in pages])
    y = np.concatenate([p["y"] for p in pages])
    w = np.concatenate([p["w"] for p in pages])
    kept = X[:, 3] > 0.5
    return X[kept], y[kept], w[kept]


def make_model(args):
    return GradientBoostingClassifier(n_estimators=args.trees, max_depth=args.depth,
                                      learning_rate=args.lr, subsample=0.8,
                                      min_samples_leaf=20, random_state=0)


def score_pages(scorer, pages, keeps):
    counts = []
    for p, keep in zip(pages, keeps):
        text = "\n\n".join(t for t, k in zip(p["texts"], keep) if k)
        c, _ = scorer.doc_counts(p["expected"], text)
        counts.append(c)
    return scorer.aggregate(counts), counts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench", type=Path)
    ap.add_argument("rows", type=Path)
    ap.add_argument("--write", type=Path)
    ap.add_argument("--trees", type=int, default=150)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--threshold", type=float, default=0.5)
    args = ap.parse_args()
    spec = importlib.util.spec_from_file_location("score", args.bench / "score.py")
    scorer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scorer)

    pages = load(args.bench, args.rows)
    fold = folds_by_domain(pages, args.folds)
    probs = [None] * len(pages)
    for f in range(args.folds):
        train = [p for p, g in zip(pages, fold) if g != f and len(p["y"])]
        X, y, w = stack(train)
        model = make_model(args).fit(X, y, sample_weight=w)
        for i, p in enumerate(pages):
            if fold[i] == f:
                probs[i] = model.predict_proba(p["X"])[:, 1] if len(p["y"]) else np.array([])
    base = [p["X"][:, 3] > 0.5 if len(p["y"]) else np.array([], bool) for p in pages]
    # The model only vetoes blocks the structural pass kept.
    probs = [np.where(b, pr, 0.0) for b, pr in zip(base, probs)]
    (bp, br, bf), _ = score_pages(scorer, pages, base)
    print(f"structural only (blocks joined): P={bp:.3f} R={br:.3f} F1={bf:.3f}")
    for t in (0.1, 0.2, 0.3, 0.4, 0.5):
        (mp, mr, mf), counts = score_pages(scorer, pages, [pr > t for pr in probs])
        by_type = {}
        for p, c in zip(pages, counts):
            by_type.setdefault(p["type"], []).append(c)
        types = " ".join(f"{k}={scorer.aggregate(v)[2]:.3f}" for k, v in sorted(by_type.items()))
        print(f"model, {args.folds}-fold by domain, threshold {t}: P={mp:.3f} R={mr:.3f} F1={mf:.3f}  {types}")

    if args.write:
        X, y, w = stack([p for p in pages if len(p["y"])])
        model = make_model(args).fit(X, y, sample_weight=w)
        write_rust(model, args, args.write)
        print(f"wrote {args.write}")


def write_rust(model, args, path):
    feature, threshold, left, right, value, roots = [], [], [], [], [], []
    for est in model.estimators_[:, 0]:
        t = est.tree_
        base = len(feature)
        roots.append(base)
        for n in range(t.node_count):
            leaf = t.children_left[n] == -1
            feature.append(0 if leaf else int(t.feature[n]))
            threshold.append(0.0 if leaf else float(t.threshold[n]))
            left.append(-1 if leaf else base + int(t.children_left[n]))
            right.append(-1 if leaf else base + int(t.children_right[n]))
            value.append(float(t.value[n][0][0]) * args.lr)
    prior = float(model.init_.class_prior_[1])
    init = float(np.log(prior / (1 - prior)))
    nodes = ",\n".join(f"    ({f}, {th!r}f32, {l}, {r}, {v!r}f32)"
                       for f, th, l, r, v in zip(feature, threshold, left, right, value))
    src = f"""// Generated by scripts/train_block_model.py (trees={args.trees}, depth={args.depth},
// lr={args.lr}); do not edit by hand.

/// Log-odds before any tree.
pub(super) const INIT: f32 = {init!r};
/// Probability above which a block is kept.
pub(super) const THRESHOLD: f32 = {args.threshold!r};
/// First node of each tree.
pub(super) const ROOTS: &[u32] = &{roots};
/// Nodes: (feature, threshold, left, right, leaf value); a leaf has left = -1.
/// Go left when the feature is <= the threshold.
pub(super) const NODES: &[(u8, f32, i32, i32, f32)] = &[
{nodes},
];
"""
    Path(path).write_text(src, encoding="utf8")


if __name__ == "__main__":
    sys.exit(main())
