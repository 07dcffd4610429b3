#!/usr/bin/env bash
# bench/fuzz.sh [SECONDS] — bounded libFuzzer runs of the trace, experiment,
# Philly JSON and sacct parsers (ASan + UBSan). Seeds come from
# tests/fuzz/<target>/; any crashing input is copied there so
# test_fuzz_corpus replays it from then on.
# Needs clang and libclang-rt-14-dev (Debian).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
cc=$(command -v clang || command -v clang-14)
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER="$cc" -DLUCID_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-fuzz -j2 --target fuzz_trace fuzz_experiment fuzz_philly fuzz_sacct >/dev/null
status=0
for target in trace experiment philly sacct; do
    work=bench/out/fuzz/$target
    mkdir -p "$work/corpus" "$work/artifacts"
    cp -n tests/fuzz/$target/* "$work/corpus/" 2>/dev/null || true
    echo "fuzz_$target: ${seconds}s"
    if ! build-fuzz/fuzz_$target -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
        -artifact_prefix="$work/artifacts/" "$work/corpus" 2>"$work/log.txt"; then
        status=1
        cp "$work"/artifacts/* tests/fuzz/$target/ 2>/dev/null || true
        echo "fuzz_$target found a crash; inputs copied to tests/fuzz/$target/"
    fi
    grep -E 'stat::number_of_executed_units|stat::peak_rss_mb|cov:' "$work/log.txt" | tail -3
done
exit $status
