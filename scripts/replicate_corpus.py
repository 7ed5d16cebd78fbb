#!/usr/bin/env python3
"""Grow a JSONL corpus ({"id", "text"} per line) into a larger dev corpus for the speed
targets: the original plus K-1 replicas, each a distinct text collection with a realistic share
of near-copies of the original.

In replica r (r >= 1) most documents have every third word marked with the replica number, so
no 4-word shingle is shared with another replica and the replica's own near-duplicates stay
what they were in the original; a share (--near, default 5 %) of the documents are instead
light rewrites of their original (--edit, default 1 word in 20 replaced by a word drawn from the
corpus, and one sentence dropped), so they are near-copies across replicas, as syndicated and
re-edited pages are on the web. Deterministic for a given --seed.

    python3 scripts/replicate_corpus.py corpus-10k.jsonl 8 > corpus-80k.jsonl
"""
import argparse
import json
import random
import re
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("replicas", type=int, help="K: the original and K-1 replicas")
    ap.add_argument("--near", type=float, default=0.05, help="share of near-copies per replica")
    ap.add_argument("--edit", type=float, default=0.05, help="share of words replaced in a near-copy")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    docs = [json.loads(l) for l in open(a.corpus, encoding="utf-8") if l.strip()]
    rng = random.Random(a.seed)
    vocab = [w for d in docs[:2000] for w in d["text"].split()[:200]]
    out = sys.stdout
    for r in range(a.replicas):
        for d in docs:
            text = d["text"]
            if r > 0:
                if rng.random() < a.near:
                    sentences = re.split(r"(?<=[.!?])\s+", text)
                    if len(sentences) > 3:
                        del sentences[rng.randrange(len(sentences))]
                    words = " ".join(sentences).split(" ")
                    for i in range(len(words)):
                        if rng.random() < a.edit:
                            words[i] = rng.choice(vocab)
                    text = " ".join(words)
                else:
                    words = text.split(" ")
                    text = " ".join(w + f"r{r}" if i % 3 == 0 and w else w for i, w in enumerate(words))
            out.write(json.dumps({"id": f"{d['id']}#r{r}", "text": text}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
