#!/usr/bin/env python3
"""Share of `collect dedup` duplicate pairs whose true Jaccard over all word 4-shingles is >= 0.4.

Usage: true_jaccard.py CORPUS.jsonl PAIRS.tsv [--threshold 0.4]
True Jaccard: lower-cased \\w+ tokens, every 4-shingle, no stop-word removal (the plain baseline
of ../shared/bench), so it does not share the engine's own canonical form.
"""
import json, re, sys

def shingles(text, w=4):
    toks = re.findall(r"\w+", text.lower())
    if len(toks) < w:
        return {" ".join(toks)}
    return {" ".join(toks[i:i + w]) for i in range(len(toks) - w + 1)}

def main():
    corpus, pairs = sys.argv[1], sys.argv[2]
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
