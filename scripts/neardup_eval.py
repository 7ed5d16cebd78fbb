#!/usr/bin/env python3
"""Precision/recall of `collect dedup` verdicts on a labelled pair set (e.g. clough_stevenson).

Usage: neardup_eval.py PAIRS.tsv ALLPAIRS.tsv THRESHOLDS...
ALLPAIRS is `collect dedup DOCS --all-pairs` output; verdicts are re-derived from its scores for
each threshold t (resemblance >= t -> duplicate, else max containment >= t -> contained), so one
engine run serves every threshold. Pairs the engine did not list share nothing: not duplicates.
"""
import sys

def main():
    labels = {}
    with open(sys.argv[1]) as f:
        next(f)
        for line in f:
            a, b, label, *_ = line.rstrip("\n").split("\t")
            labels[tuple(sorted((a, b)))] = label
    scores = {}
    with open(sys.argv[2]) as f:
        next(f)
        for line in f:
            a, b, r, ab, ba, v = line.rstrip("\n").split("\t")
            conv = lambda x: 0.0 if x == "nan" else float(x)
            scores[(a, b)] = (conv(r), max(conv(ab), conv(ba)))
    print("| t | dup P (cut) | dup R (cut) | dup-or-contained P (cut+light) | R (cut+light) |")
    print("|---|---|---|---|---|")
    for t in map(float, sys.argv[3:]):
        def pr(pred, pos):
            tp = sum(1 for k, l in labels.items() if pred(k) and l in pos)
            fp = sum(1 for k, l in labels.items() if pred(k) and l not in pos)
            n = sum(1 for l in labels.values() if l in pos)
            return (tp / (tp + fp) if tp + fp else 1.0), tp / n
        s = lambda k: scores.get(k, (0.0, 0.0))
        p1, r1 = pr(lambda k: s(k)[0] >= t, {"cut"})
        p2, r2 = pr(lambda k: s(k)[0] >= t or s(k)[1] >= t, {"cut", "light"})
        print(f"| {t:.2f} | {p1:.3f} | {r1:.3f} | {p2:.3f} | {r2:.3f} |")

main()
