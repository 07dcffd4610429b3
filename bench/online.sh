#!/usr/bin/env bash
# bench/online.sh — online Lucid (nothing precomputed) against the five
# baselines and against Lucid fed the authors' model outputs, on Venus, in
# both semantics where they apply.  Prints a Markdown table (seconds);
# docs/online.md records it.
set -euo pipefail
cd "$(dirname "$0")/.."
lucid=build/lucid
out=bench/out/online
mkdir -p "$out"
row() { # label summary.csv policy
    awk -F, -v p="$3" -v l="$1" '$1 == p && $2 == "all" {printf "| %s | %.0f | %.0f | %.0f |\n", l, $4, $5, $6}' "$2"
}
start=$(date +%s)
"$lucid" simulate examples/venus-online.ini --quiet --out "$out/online-fixed"
online_s=$(( $(date +%s) - start ))
"$lucid" simulate examples/venus-online.ini --quiet --compat reference --out "$out/online-reference"
"$lucid" simulate examples/venus.ini --quiet --compat fixed --out "$out/files-fixed"
"$lucid" simulate examples/venus.ini --quiet --compat reference --out "$out/files-reference"
echo "| run | avg JCT | avg queue | p99.9 queue |"
echo "|---|---|---|---|"
for p in fifo sjf srtf qssf tiresias; do row "$p (fixed)" "$out/files-fixed/summary.csv" "$p"; done
row "lucid, authors' model outputs (fixed)" "$out/files-fixed/summary.csv" lucid
row "lucid, online models (fixed)" "$out/online-fixed/summary.csv" lucid
for p in tiresias; do row "$p (reference)" "$out/files-reference/summary.csv" "$p"; done
row "lucid, authors' model outputs (reference)" "$out/files-reference/summary.csv" lucid
row "lucid, online models (reference)" "$out/online-reference/summary.csv" lucid
echo
echo "online run (fixed semantics): ${online_s} s wall"
