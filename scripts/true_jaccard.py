#!/usr/bin/env python3
"""Share of `collect dedup` duplicate pairs whose true Jaccard over all word 4-shingles is >= 0.4.

Usage: true_jaccard.py CORPUS.jsonl PAIRS.tsv [--threshold 0.4]
CORPUS.jsonl: one {"id", "text"} object per line, e.g. the perf corpus of README "Data for the
benchmarks"; PAIRS.tsv: `collect dedup CORPUS.jsonl` output. When CORPUS.jsonl is absent the
script says it is skipping and exits 0.
True Jaccard: lower-cased \\w+ tokens, every 4-shingle, no stop-word removal (a plain baseline),
so it does not share the engine's own canonical form.
"""
import json, os, re, sys

def shingles(text, w=4):
    toks = re.findall(r"\w+", text.lower())
    if len(toks) < w:
        return {" ".join(toks)}
    return {" ".join(toks[i:i + w]) for i in range(len(toks) - w + 1)}

def main():
    args = [a for i, a in enumerate(sys.argv[1:], 1)
            if a != "--threshold" and sys.argv[i - 1] != "--threshold"]
    if len(args) != 2:
        sys.exit("usage: true_jaccard.py CORPUS.jsonl PAIRS.tsv [--threshold 0.4]")
    corpus, pairs = args
    if not os.path.isfile(corpus):
        print(f"skipping: {corpus} not found; pass CORPUS.jsonl (see README, \"Data for the benchmarks\")")
        return
    if not os.path.isfile(pairs):
        sys.exit(f"{pairs}: not found (write it with `collect dedup {corpus} --out {pairs}`)")
    thr = float(sys.argv[sys.argv.index("--threshold") + 1]) if "--threshold" in sys.argv else 0.4
    dup = []
    with open(pairs) as f:
        next(f)
        for line in f:
            a, b, *_rest, verdict = line.rstrip("\n").split("\t")
            if verdict == "duplicate":
                dup.append((a, b))
    need = {x for p in dup for x in p}
    sets = {}
    with open(corpus) as f:
        for line in f:
            d = json.loads(line)
            if str(d["id"]) in need:
                sets[str(d["id"])] = shingles(d["text"])
    good = 0
    for a, b in dup:
        A, B = sets[a], sets[b]
        j = len(A & B) / len(A | B) if A | B else 0
        good += j >= thr
    share = good / len(dup) if dup else 1.0
    print(json.dumps({"duplicate_pairs": len(dup), "true_jaccard_ge": thr, "backed": good, "share": round(share, 4)}))

main()
