#!/usr/bin/env bash
# cli_model.sh — `lucid model` end to end: the three models on the Venus
# data, their accuracy targets, determinism, explanation files (an SVG is
# rendered to PNG with rsvg-convert and checked not to be blank), and clear
# one-line errors for bad input.
# usage: cli_model.sh <lucid binary> <source dir>
set -euo pipefail
LUCID=$1
SRC=$2
DATA=$SRC/data/venus-sept
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
passed=0
ok() {
    passed=$((passed + 1))
    echo "ok $passed - $*"
}
# `expect_error "text" cmd...`: the command fails with one line containing text.
expect_error() {
    local want=$1
    shift
    if "$@" >"$TMP/out" 2>"$TMP/err"; then fail "expected failure: $*"; fi
    [ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "expected one error line, got: $(cat "$TMP/err")"
    grep -qF -- "$want" "$TMP/err" || fail "expected '$want' in: $(cat "$TMP/err")"
}

# A sanitizer build is several times slower: it skips the checks that only
# repeat a full training (thread independence is also a unit test).
SANITIZED=0
if grep -q __asan_init "$LUCID"; then SANITIZED=1; fi

# ---- throughput: train April-August, test September ----
SPLIT='2020-09-01 00:00:00'
"$LUCID" model train --kind throughput --data "$DATA/throughput.csv" --target submit_gpu_job \
    --train-until "$SPLIT" --out "$TMP/job.json" --threads 2 >"$TMP/train.txt"
secs=$(sed -n 's/.* in \([0-9.]*\) s .*/\1/p' "$TMP/train.txt")
if [ $SANITIZED = 1 ]; then
    ok "8-bag throughput training in $secs s (sanitizer build: time and threads not checked)"
else
    "$LUCID" model train --kind throughput --data "$DATA/throughput.csv" --target submit_gpu_job \
        --train-until "$SPLIT" --out "$TMP/job1.json" --threads 1 >/dev/null
    cmp -s "$TMP/job.json" "$TMP/job1.json" || fail "1 and 2 threads gave different model files"
    ok "same seed, byte-identical model for 1 and 2 threads"
    awk -v s="$secs" 'BEGIN { exit !(s < 5) }' || fail "8-bag training took $secs s (want < 5)"
    ok "8-bag throughput training in $secs s"
fi

"$LUCID" model eval --model "$TMP/job.json" --data "$DATA/throughput.csv" \
    --compare "$DATA/throughput_forecast.csv" --compare-column pred_gpu_job >"$TMP/eval.txt"
mae=$(awk '/^model/ { print $5; exit }' "$TMP/eval.txt")
ref=$(awk '/^compared/ { print $5 }' "$TMP/eval.txt")
rows=$(awk '/^model/ { print $3; exit }' "$TMP/eval.txt")
[ "$rows" = 4032 ] || fail "September has 4032 bins, evaluated $rows"
[ "$ref" = 4.1249 ] || fail "the authors' forecast should score 4.1249, got $ref"
awk -v m="$mae" 'BEGIN { exit !(m >= 4.0 && m <= 4.25) }' || fail "September job MAE $mae"
ok "September job-count MAE $mae (authors' EBM $ref)"

"$LUCID" model predict --model "$TMP/job.json" --data "$DATA/throughput.csv" --out "$TMP/pred.csv"
[ "$(head -1 "$TMP/pred.csv")" = "time,prediction" ] || fail "prediction header"
[ "$(wc -l <"$TMP/pred.csv")" = "$(wc -l <"$DATA/throughput.csv")" ] || fail "one row per input row"
grep -q '^2020-09-01 00:00:00,' "$TMP/pred.csv" || fail "prediction rows keyed by time"
ok "predict writes one row per input row"

"$LUCID" model explain --model "$TMP/job.json" --out "$TMP/explain" >"$TMP/explain.txt"
awk '$1 == 1 { print $4 }' "$TMP/explain.txt" | grep -qx hour || fail "hour is not the top term"
for f in importance.csv importance.svg term_hour.csv term_hour.svg; do
    [ -s "$TMP/explain/$f" ] || fail "explain did not write $f"
done
ls "$TMP/explain" | grep -q '_x_.*\.svg$' || fail "no pair heatmap written"
[ "$(wc -l <"$TMP/explain/term_hour.csv")" -ge 25 ] || fail "hour shape function has too few bins"
ok "explain: hour is the most important term; CSV and SVG files written"

command -v rsvg-convert >/dev/null || fail "rsvg-convert is needed (Debian package librsvg2-bin)"
for chart in term_hour importance; do
    rsvg-convert "$TMP/explain/$chart.svg" -o "$TMP/$chart.png"
    /usr/bin/python3 - "$TMP/$chart.png" <<'EOF' || fail "$chart.png looks blank"
# Decodes the PNG (8-bit RGB/RGBA, any filter) and checks that it has ink:
# a share of non-white pixels and some strongly blue ones (the curve, the bars).
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat, width = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
        assert depth == 8 and ctype in (2, 6)
        bpp = 4 if ctype == 6 else 3
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw, stride = zlib.decompress(idat), width * bpp
prev, ink, blue = bytearray(stride), 0, 0
for y in range(height):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(width):
        r, g, bl = line[x * bpp:x * bpp + 3]
        alpha = line[x * bpp + 3] if bpp == 4 else 255
        if alpha > 128 and (r, g, bl) != (255, 255, 255):
            ink += 1
            if bl > 150 and r < 100:
                blue += 1
    prev = line
print(f"{sys.argv[1]}: {width}x{height}, {ink} inked pixels, {blue} blue")
sys.exit(0 if ink > width * height // 100 and blue > 200 else 1)
EOF
done
ok "SVGs render to non-blank PNGs"

# ---- GPU-count target ----
if [ $SANITIZED = 0 ]; then
    "$LUCID" model train --kind throughput --data "$DATA/throughput.csv" --target submit_gpu_num \
        --train-until "$SPLIT" --out "$TMP/gpu.json" >/dev/null
    mae=$("$LUCID" model eval --model "$TMP/gpu.json" --data "$DATA/throughput.csv" | awk '/^model/ { print $5 }')
    awk -v m="$mae" 'BEGIN { exit !(m <= 52.93) }' || fail "September GPU MAE $mae > 52.93"
    ok "September GPU-count MAE $mae (authors' EBM 52.93)"
fi

# ---- sharing tree ----
"$LUCID" model eval --kind sharing --data "$DATA/sharing_labels.csv" >"$TMP/share.txt"
grep -q 'accuracy 0.8500 (17/20), tree of 8 leaves' "$TMP/share.txt" || fail "$(cat "$TMP/share.txt")"
grep -q '^leave-one-out accuracy' "$TMP/share.txt" || fail "no leave-one-out accuracy"
ok "sharing tree: $(head -1 "$TMP/share.txt")"
"$LUCID" model train --kind sharing --data "$DATA/sharing_labels.csv" --out "$TMP/share.json" >/dev/null
"$LUCID" model explain --model "$TMP/share.json" >"$TMP/tree.txt"
grep -q '^|--- gmem_util <= ' "$TMP/tree.txt" || fail "tree: $(cat "$TMP/tree.txt")"
grep -q '|--- class ' "$TMP/tree.txt" || fail "tree has no leaves printed"
"$LUCID" model predict --model "$TMP/share.json" --data "$DATA/sharing_labels.csv" --out "$TMP/share.csv"
[ "$(wc -l <"$TMP/share.csv")" = 67 ] || fail "sharing predictions"
ok "sharing tree printed and applied"

# ---- duration: a small slice of the trace keeps this quick ----
head -n 3001 "$DATA/trace.csv" >"$TMP/trace.csv"
"$LUCID" model train --kind duration --data "$TMP/trace.csv" --train-until '2020-09-03 12:00:00' \
    --out "$TMP/dur.json" --max-rounds 150 --bags 2 >/dev/null
"$LUCID" model eval --model "$TMP/dur.json" --data "$TMP/trace.csv" \
    --compare "$DATA/estimates_lucid.csv" >"$TMP/dur.txt"
grep -q '^compared ' "$TMP/dur.txt" || fail "no comparison with the authors' estimates"
job=$(sed -n '3000p' "$TMP/trace.csv" | cut -d, -f1)
"$LUCID" model explain --model "$TMP/dur.json" --data "$TMP/trace.csv" --row "$job" >"$TMP/row.txt"
grep -q "^row $job: prediction" "$TMP/row.txt" || fail "row explanation: $(tail -3 "$TMP/row.txt")"
grep -q ' user = ' "$TMP/row.txt" || fail "row explanation lacks the user term"
"$LUCID" model eval --kind duration --data "$TMP/trace.csv" --weekly-from '2020-09-02 00:00:00' \
    --max-rounds 100 --bags 2 --compare "$DATA/estimates_lucid.csv" >"$TMP/weekly.txt"
grep -q '^week from 2020-09-02 00:00:00: trained on ' "$TMP/weekly.txt" || fail "weekly: $(cat "$TMP/weekly.txt")"
grep -q '^compared ' "$TMP/weekly.txt" || fail "weekly replay lacks the comparison"
ok "duration model trained, compared with the authors' estimates, one job explained, weekly replay"

# The duration model fits log1p(duration) (a version-2 file); the row
# explanation gives each term's factor; --target-transform none is the old
# model (version 1); anything else is refused.
grep -q '"target_transform": "log1p"' "$TMP/dur.json" || fail "duration model is not log1p"
grep -q '"version": 2' "$TMP/dur.json" || fail "log1p duration model is not version 2"
grep -q 'multiplies 1 + prediction' "$TMP/row.txt" || fail "row explanation: $(head -1 "$TMP/row.txt")"
grep -q ' user_log_median = ' "$TMP/row.txt" || fail "row explanation lacks the user history"
grep -q '^P10-P90    rows [0-9]*  inside 0\.' "$TMP/dur.txt" || fail "eval gives no P10-P90 coverage"
"$LUCID" model train --kind duration --data "$TMP/trace.csv" --train-until '2020-09-03 12:00:00' \
    --out "$TMP/dur-plain.json" --max-rounds 50 --bags 2 --target-transform none >/dev/null
grep -q '"version": 1' "$TMP/dur-plain.json" || fail "untransformed model is not version 1"
grep -q 'target_transform' "$TMP/dur-plain.json" && fail "untransformed model names a transform"
expect_error "option --target-transform: expected none or log1p" "$LUCID" model train --kind duration \
    --data "$TMP/trace.csv" --out "$TMP/x.json" --target-transform sqrt
ok "duration model: log1p target (version 2), factors explained, --target-transform none"

# --warm-start: the model of the first rows seeds the model of all rows,
# which then boosts at most 100 rounds per bag; a missing start model is
# one error line.
"$LUCID" model train --kind duration --data "$TMP/trace.csv" --warm-start "$TMP/dur.json" \
    --bags 2 --out "$TMP/dur-warm.json" >"$TMP/warm.txt"
rounds=$(sed -n 's/.*(mean \([0-9]*\) main rounds per bag).*/\1/p' "$TMP/warm.txt")
[ -n "$rounds" ] && [ "$rounds" -le 100 ] || fail "warm start: $(cat "$TMP/warm.txt")"
"$LUCID" model eval --model "$TMP/dur-warm.json" --data "$TMP/trace.csv" --from '2020-09-01 00:00:00' \
    | grep -q '^model ' || fail "warm-started model does not evaluate"
expect_error "cannot open" "$LUCID" model train --kind duration --data "$TMP/trace.csv" \
    --warm-start "$TMP/nope.json" --out "$TMP/x.json"
ok "duration model warm-started from another (--warm-start)"

# ---- bad input: one clear line, non-zero exit, never a crash ----
head -c 2000 "$TMP/job.json" >"$TMP/cut.json"
expect_error "$TMP/cut.json:" "$LUCID" model predict --model "$TMP/cut.json" --data "$DATA/throughput.csv" --out "$TMP/x.csv"
sed 's/"version": 1/"version": 7/' "$TMP/job.json" >"$TMP/v7.json"
expect_error "version: version 7 is not supported" "$LUCID" model eval --model "$TMP/v7.json" --data "$DATA/throughput.csv"
sed '0,/"name": "hour"/s//"name": "hours"/' "$TMP/job.json" >"$TMP/renamed.json"
expect_error "names a feature the model does not have" "$LUCID" model eval --model "$TMP/renamed.json" --data "$DATA/throughput.csv"
printf 'time,submit_gpu_job,submit_gpu_num\n2020-09-01 00:00:00,3,4\n2020-09-01 00:10:00,3\n' >"$TMP/ragged.csv"
expect_error "ragged.csv:3:" "$LUCID" model predict --model "$TMP/job.json" --data "$TMP/ragged.csv" --out "$TMP/x.csv"
expect_error "cannot open" "$LUCID" model eval --model "$TMP/nope.json" --data "$DATA/throughput.csv"
expect_error "unknown argument '--bogus'" "$LUCID" model train --bogus
expect_error "--kind is required" "$LUCID" model train --data x --out y
ok "bad model files and inputs give one located error line"

echo "$passed passed, 0 failed"
