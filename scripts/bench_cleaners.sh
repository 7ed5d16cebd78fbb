#!/usr/bin/env bash
# Scores both cleaners on the dev sets and prints the score tables:
#   bash scripts/bench_cleaners.sh [BENCH_DIR]     (default ../shared/bench)
# HTML: ../shared/bench/extraction (480 pages, per page type);
# wikitext: ../shared/bench/wikitext (111 articles). Speeds go to stderr.
set -euo pipefail
bench=${1:-../shared/bench}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cargo build --quiet --release --example extraction_bench --example wikitext_bench
echo "== HTML main-content extraction ($bench/extraction)"
./target/release/examples/extraction_bench "$bench/extraction" "$out/html"
python3 "$bench/extraction/score.py" "$out/html" --by-type
echo
echo "== Wikitext cleaning ($bench/wikitext)"
./target/release/examples/wikitext_bench "$bench/wikitext" "$out/wt"
python3 "$bench/wikitext/score.py" "$out/wt"
