#!/usr/bin/env python3
"""How well a review-queue grouping lets one decision settle a cluster.

Usage: queue_grouping.py COLLECTION_DIR [COLLECT_BINARY]

For each grouping of `collect review --clusters` (components, closed) it lists the pending
clusters and, for each, the containment bands of its pending pairs: >= 0.9 (the contained text
is nearly all inside the other: a copy, dropped by keep-container), 0.5-0.9, and < 0.5 (a quote
inside a text of its own: kept by keep-all). A cluster whose pending pairs all fall in one band
is settled by one cluster decision; a mixed one needs a rule or pair decisions as well. The
bands stand in for a curator's decisions, which the dev corpus does not record.
"""
import json
import subprocess
import sys


def run(binary, args):
    out = subprocess.run([binary, "--json", "review", *args], check=True,
                         capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def band(pair):
    cont = pair["cont_a_in_b"] if pair["contained"] == pair["a"] else pair["cont_b_in_a"]
    cont = cont or 0.0
    return 2 if cont >= 0.9 else 1 if cont >= 0.5 else 0


def main():
    coll = sys.argv[1]
    binary = sys.argv[2] if len(sys.argv) > 2 else "collect"
    pairs = {p["id"]: p for p in run(binary, ["list", "--pairs", "--collection", coll])}
    print("grouping\tclusters\tone_band\tpairs_in_one_band\tpairs\tlargest\tsingle_pair")
    for grouping in ("components", "closed"):
        clusters = run(binary, ["list", "--clusters", grouping, "--collection", coll])
        one = one_pairs = total = largest = single = 0
        for c in clusters:
            bands = {band(pairs[i]) for i in c["pending"]}
            n = len(c["pending"])
            total += n
            largest = max(largest, n)
            single += n == 1
            if len(bands) == 1:
                one += 1
                one_pairs += n
        print(f"{grouping}\t{len(clusters)}\t{one}\t{one_pairs}\t{total}\t{largest}\t{single}")


if __name__ == "__main__":
    main()
