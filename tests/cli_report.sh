#!/usr/bin/env bash
# cli_report.sh — `lucid report`: from a small synthetic run of all six
# policies (with --series) and two models, the page holds Tables 4 and 5 and
# every figure inline with nothing external; every SVG and the page itself are
# well-formed XML; the figures rasterize (rsvg-convert) to non-blank PNGs and
# a headless Chromium screenshot of the page is not blank;
# Table 4 repeats summary.csv; bad inputs give one line naming file, line and
# field and a non-zero exit.
# Usage: cli_report.sh LUCID SOURCE_DIR
set -u
source "$2/tests/lib/checks.sh"

well_formed() { python3 -c 'import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])' "$1"; }

# Setup failures end the test at once.
(cd "$src" && "$lucid" trace synth --out "$tmp/s" --jobs 1500 --nodes 30 --vcs 4 --seed 3 >/dev/null) ||
    { echo "FAIL: trace synth"; exit 1; }
"$lucid" simulate "$tmp/s/experiment.ini" --series --quiet --out "$tmp/out" || { echo "FAIL: simulate"; exit 1; }
data=$src/data/venus-sept
"$lucid" model train --kind throughput --data "$data/throughput.csv" --target submit_gpu_job \
    --bags 1 --max-rounds 100 --interactions 1 --out "$tmp/job.json" >/dev/null || fail "train throughput"
"$lucid" model train --kind sharing --data "$data/sharing_labels.csv" --out "$tmp/share.json" >/dev/null ||
    fail "train sharing"

if "$lucid" report "$tmp/out" --model "$tmp/job.json" --model "$tmp/share.json" >"$tmp/report.log"; then
    html=$tmp/out/report.html
    figs=$tmp/out/report
    check "page written" test -s "$html"
    check "page is well-formed XML" well_formed "$html"
    for t in "Table 4" "Table 5" "Figure 8" "Figure 9" "GPU utilisation" "Model job (ebm)" "Model share (cart)"; do
        check "page has $t" grep -q "$t" "$html"
    done
    # Every figure is inline: the three charts, the start-time scatter, the
    # importance chart and one per term.
    nterms=$(ls "$figs/model-job"/term_*.svg | wc -l)
    check "inline SVGs ($(grep -c '<svg ' "$html") for $((5 + nterms)))" [ "$(grep -c '<svg ' "$html")" -eq $((5 + nterms)) ]
    check "nothing external" bash -c "! grep -Eq '(src|href)=' '$html'"
    # Table 4 repeats summary.csv's all-jobs rows (rounded to seconds).
    while IFS=, read -r policy vc jobs jct queue p999 delay _prof_s prof_gpu floor gap bsld bsld99 jain_u jain_vc util _cov _err _load _inputs ftf_max ftf_over1; do
        [ "$vc" = all ] || continue
        cells=$(awk -v g="$gap" -v b="$bsld" -v b99="$bsld99" -v ju="$jain_u" -v jv="$jain_vc" -v u="$util" -v fm="$ftf_max" -v fo="$ftf_over1" \
            'BEGIN { printf "<td>%.1f %%</td><td>%.2f</td><td>%.2f</td><td>%.3f</td><td>%.3f</td><td>%.1f %%</td><td>%.1f</td><td>%.1f %%</td>", 100 * g, b, b99, ju, jv, 100 * u, fm, 100 * fo }')
        row=$(printf '<tr><td>%s</td><td>%s</td><td>%.0f</td><td>%.0f</td><td>%.0f</td><td>%.0f</td><td>%.0f</td>%s</tr>' "$policy" "$jobs" "$jct" "$delay" "$queue" "$p999" "$prof_gpu" "$cells")
        check "Table 4 row for $policy" grep -qF "$row" "$html"
    done <"$tmp/out/summary.csv"
    # Issue 12: the mean-duration floor as a line on Figure 8, at summary.csv's value.
    floor=$(awk -F, '$2 == "all" { printf "%.0f", $10; exit }' "$tmp/out/summary.csv")
    check "Figure 8 draws the floor ($floor s)" grep -q "floor: mean duration $floor s" "$figs/fig8_jct_cdf.svg"
    # Start-time estimates: coverage per policy equals eta-summary.csv's.
    while IFS=, read -r policy vc n coverage _; do
        [ "$vc" = all ] && [ -n "$coverage" ] || continue
        pct=$(awk -v c="$coverage" 'BEGIN { printf "%.1f", 100 * c }')
        check "eta coverage for $policy ($pct %)" grep -qF "<tr><td>$policy</td><td>$n</td><td>$pct %</td>" "$html"
    done <"$tmp/out/eta-summary.csv"
    check "eta scatter is well-formed XML" well_formed "$figs/eta_scatter.svg"
    # Table 5's large + small jobs add up to all jobs, for each policy.
    sed -n '/Table 5/,/<\/table>/p' "$html" | grep '^<tr><td>' | sed 's/<\/td><td>/|/g; s/<[^>]*>//g; s/ %//g' >"$tmp/t5.cells"
    for policy in fifo sjf srtf qssf tiresias lucid; do
        all=$(awk -F, -v p="$policy" '$1 == p && $2 == "all" { print $3 }' "$tmp/out/summary.csv")
        sizes=$(awk -F'|' -v p="$policy" '$1 == p { print $2 + $7 }' "$tmp/t5.cells")
        check "Table 5 for $policy: $sizes = $all jobs" [ "$sizes" = "$all" ]
    done
    # ... and equals the Table 5 `lucid simulate` prints (JCT, queue, gap and
    # bounded slowdown per class: simulate's from memory, the report's from
    # jobs-<policy>.csv).
    "$lucid" simulate "$tmp/s/experiment.ini" --out "$tmp/again" 2>/dev/null |
        sed -n '/^Table 5/,/^$/p' | awk 'NF == 9 && $2 ~ /^[0-9]/ { gsub(/%/, ""); print }' |
        awk '{ print $1, $2, $3, $4, $5, $6, $7, $8, $9 }' >"$tmp/t5.sim"
    awk -F'|' '{ print $1, $3, $4, $5, $6, $8, $9, $10, $11 }' "$tmp/t5.cells" >"$tmp/t5.html"
    check "Table 5 equals simulate's" bash -c "[ -s '$tmp/t5.sim' ] && cmp -s '$tmp/t5.sim' '$tmp/t5.html'"
    command -v rsvg-convert >/dev/null || fail "rsvg-convert is needed (Debian package librsvg2-bin)"
    for svg in "$figs"/fig8_jct_cdf.svg "$figs"/fig9_vc_queue.svg "$figs"/gpu_utilisation.svg "$figs"/model-job/importance.svg; do
        name=$(basename "$svg" .svg)
        check "$name.svg is well-formed XML" well_formed "$svg"
        if rsvg-convert "$svg" -o "$tmp/$name.png"; then
            check "$name.png is not blank" python3 "$src/tests/png_ink.py" "$tmp/$name.png"
        else
            fail "rsvg-convert $name.svg"
        fi
    done
    # The page as a browser shows it: a headless Chromium screenshot is not blank
    # and holds more than the tables (figures are inline SVG).
    browser=$(command -v chromium || command -v chromium-browser || true)
    if [ -z "$browser" ]; then
        fail "chromium is needed for the page screenshot (Debian package chromium)"
    elif timeout 60 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$tmp/chromium" --window-size=1200,2400 --screenshot="$tmp/page.png" \
        "file://$html" >/dev/null 2>&1 && [ -s "$tmp/page.png" ]; then
        check "page screenshot is not blank" python3 "$src/tests/png_ink.py" "$tmp/page.png"
    else
        fail "chromium screenshot of $html"
    fi
    # Every SVG written, the models' charts included, is well-formed XML.
    check "all SVGs well-formed" python3 -c '
import glob, sys, xml.dom.minidom
files = glob.glob(sys.argv[1] + "/*.svg") + glob.glob(sys.argv[1] + "/*/*.svg")
assert len(files) >= 5, files
for f in files:
    xml.dom.minidom.parse(f)' "$figs"
    # Log axis of Figure 8: decade ticks.
    check "Figure 8 has a log axis" grep -q '>1000</text>' "$figs/fig8_jct_cdf.svg"
else
    fail "lucid report"; cat "$tmp/report.log"
fi

# Without series files there is no utilisation chart, and --out puts the page elsewhere.
"$lucid" simulate "$tmp/s/experiment.ini" --policies fifo,lucid --quiet --out "$tmp/plain" || fail "simulate plain"
if "$lucid" report "$tmp/plain" --out "$tmp/plain.html" >/dev/null; then
    check "no series: page says so" grep -q 'No GPU utilisation' "$tmp/plain.html"
    check "no series: three inline SVGs (two charts, the start-time scatter)" [ "$(grep -c '<svg ' "$tmp/plain.html")" -eq 3 ]
    check "no series: well-formed" well_formed "$tmp/plain.html"
else
    fail "report without series"
fi

# Bad inputs.
bad=$tmp/bad
mkdir -p "$bad"
cp "$tmp/plain"/*.csv "$bad/"
expect_error "no OUTDIR" "give the output directory" "$lucid" report
expect_error "unknown option" "unknown option '--frobnicate'" "$lucid" report "$bad" --frobnicate
expect_error "missing directory" "$tmp/nope/summary.csv: cannot open" "$lucid" report "$tmp/nope"
sed -i '3s/^\([^,]*,[^,]*,[^,]*\),[^,]*,/\1,fast,/' "$bad/summary.csv"
expect_error "bad avg_jct" "summary.csv:3: avg_jct: 'fast'" "$lucid" report "$bad"
cp "$tmp/plain/summary.csv" "$bad/summary.csv"
sed -i '1s/avg_queue/avg_wait/' "$bad/summary.csv"
expect_error "missing column" "summary.csv:1: avg_queue: required column is missing" "$lucid" report "$bad"
cp "$tmp/plain/summary.csv" "$bad/summary.csv"
sed -i '4s/^\([^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*\),[^,]*,/\1,-5,/' "$bad/jobs-lucid.csv"
expect_error "negative jct" "jobs-lucid.csv:4: jct: '-5' is not a number >= 0" "$lucid" report "$bad"
rm "$bad/jobs-lucid.csv"
expect_error "missing jobs file" "jobs-lucid.csv: cannot open" "$lucid" report "$bad"
cp "$tmp/plain/jobs-lucid.csv" "$bad/"
echo '{"format": "something-else"}' >"$tmp/notamodel.json"
expect_error "not a model" "notamodel.json" "$lucid" report "$bad" --model "$tmp/notamodel.json"
printf 'time,vc,total_gpus,idle_gpus\n60,vcA,8,9\n' >"$bad/series-fifo.csv"
expect_error "bad series" "series-fifo.csv:2: idle_gpus: 9 idle of 8 GPUs" "$lucid" report "$bad"

finish cli_report
