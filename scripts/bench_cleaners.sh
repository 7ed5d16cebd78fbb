#!/usr/bin/env bash
# Scores both cleaners on the dev sets and prints the score tables:
#   bash scripts/bench_cleaners.sh [BENCH_DIR]
# BENCH_DIR holds extraction/ (HTML main-content extraction: html/<id>.html.gz, index.jsonl,
# score.py) and wikitext/ (<lang>/<title>.wikitext, score.py); README "Data for the benchmarks"
# says what they are and where such data comes from. A missing set is skipped with a message, and
# the script exits 0 when there is nothing to run. Speeds go to stderr.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -ge 1 ]; then
    bench=$1
else
    echo "skipping: no benchmark directory given; pass BENCH_DIR (see README, \"Data for the benchmarks\")"
    exit 0
fi
if [ ! -d "$bench" ]; then
    echo "skipping: $bench not found; pass BENCH_DIR (see README, \"Data for the benchmarks\")"
    exit 0
fi
bench=$(cd "$bench" && pwd)

# A set runs only when its pages and its scorer are there.
have() { [ -d "$bench/$1" ] && [ -f "$bench/$1/score.py" ]; }
html=false wt=false
if have extraction; then html=true; else
    echo "skipping HTML extraction: $bench/extraction (with score.py) not found; pass BENCH_DIR"
fi
if have wikitext; then wt=true; else
    echo "skipping wikitext: $bench/wikitext (with score.py) not found; pass BENCH_DIR"
fi
if ! $html && ! $wt; then
    exit 0
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$root"
cargo build --quiet --release --example extraction_bench --example wikitext_bench
if $html; then
    echo "== HTML main-content extraction ($bench/extraction)"
    ./target/release/examples/extraction_bench "$bench/extraction" "$out/html"
    python3 "$bench/extraction/score.py" "$out/html" --by-type
fi
if $html && $wt; then
    echo
fi
if $wt; then
    echo "== Wikitext cleaning ($bench/wikitext)"
    ./target/release/examples/wikitext_bench "$bench/wikitext" "$out/wt"
    python3 "$bench/wikitext/score.py" "$out/wt"
fi
