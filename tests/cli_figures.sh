#!/usr/bin/env bash
# cli_figures.sh — `lucid report`'s figures checked against the data they
# were drawn from, on the Venus run with series (tests/check_figures.py:
# Figure 8's and 9's log axes bound the JCTs and VC delays, every Figure 9
# bar is its summary.csv value, the utilisation chart spans the trace to its
# last job's end and its points are the whole-cluster utilisation), and
# the model charts: terms in the order of importance.csv, at most 30 bars
# per chart, the user x day heatmap labelled with the trace's users and
# days of the month, the isotonic curve's legend dashed as the curve is.
# Usage: cli_figures.sh LUCID SOURCE_DIR
set -u
source "$2/tests/lib/checks.sh"
data=$src/data/venus-sept

(cd "$src" && "$lucid" simulate examples/venus.ini --series --quiet --out "$tmp/v") ||
    { echo "FAIL: simulate"; exit 1; }
"$lucid" model train --kind duration --data "$data/trace.csv" --bags 1 --out "$tmp/dur.json" >/dev/null ||
    { echo "FAIL: train duration"; exit 1; }
"$lucid" model train --kind throughput --data "$data/throughput.csv" --target submit_gpu_job \
    --bags 1 --max-rounds 100 --interactions 1 --out "$tmp/job.json" >/dev/null ||
    { echo "FAIL: train throughput"; exit 1; }
"$lucid" report "$tmp/v" --model "$tmp/dur.json" --model "$tmp/job.json" >/dev/null ||
    { echo "FAIL: report"; exit 1; }

check "figure axes match the data" python3 "$src/tests/check_figures.py" "$tmp/v" fifo tiresias

figs=$tmp/v/report
check "model charts" python3 - "$tmp/v/report.html" "$figs" "$data/trace.csv" <<'EOF'
import csv, re, sys, glob, os
import xml.etree.ElementTree as ET
html, figs, trace = sys.argv[1:4]
NS = "{http://www.w3.org/2000/svg}"
bad = []
page = open(html).read()
for model in ("dur", "job"):
    # Terms on the page in importance.csv's order (terms with one bin have no chart).
    names = [r["term"] for r in csv.DictReader(open(f"{figs}/model-{model}/importance.csv"))]
    files = ["term_" + "_x_".join(re.sub(r"[^A-Za-z0-9_-]", "_", p) for p in n.split(" x ")) for n in names]
    shown = [f + ".svg" for f in files if os.path.exists(f"{figs}/model-{model}/{f}.svg")]
    section = page.split(f"<h2>Model {model} (ebm)</h2>")[1].split("<h2>")[0]
    got = [c for c in re.findall(r"<figcaption>([^<]*)</figcaption>", section) if c.startswith("term_")]
    if got != shown:
        bad.append(f"{model}: terms on the page {got[:4]}... not in importance order {shown[:4]}...")
    for svg in glob.glob(f"{figs}/model-{model}/term_*.svg"):
        root = ET.parse(svg).getroot()
        bars = [r for r in root.iter(NS + "rect") if r.get("fill") in ("#1f77b4", "#d62728")]
        if "_x_" not in svg and len(bars) > 30:
            bad.append(f"{os.path.basename(svg)}: {len(bars)} bars")
        # A line chart's isotonic curve and its legend sample: both dashed.
        red = [p for p in root.iter(NS + "polyline") if p.get("stroke") == "#d62728"]
        solid = [l for l in root.iter(NS + "line") if l.get("stroke") == "#d62728"]
        if red and (len(red) != 2 or solid or not all(p.get("stroke-dasharray") == "6 4" for p in red)):
            bad.append(f"{os.path.basename(svg)}: isotonic legend or curve not dashed")
# The user x day heatmap (a pair the duration model picks since it fits
# log1p(duration)): rows labelled with users of the trace, columns with the
# days of the month.
rows = list(csv.DictReader(open(trace)))
users = {r["user"] for r in rows}
days = {str(int(float(r["day"]))) for r in rows}
heat = f"{figs}/model-dur/term_user_x_day.svg"
if os.path.exists(heat):
    root = ET.parse(heat).getroot()
    labels = [(t.get("text-anchor"), t.get("transform") or "", t.text) for t in root.iter(NS + "text")]
    left = [t for a, tr, t in labels if a == "end" and not tr and t not in ("missing",)]
    left = [t for t in left if not re.match(r"^-?[0-9.e+-]+$", t)]
    bottom = [t for a, tr, t in labels if a == "end" and "rotate(-45" in tr]
    if not left or not set(left) <= users:
        bad.append(f"heatmap rows not user names: {left[:5]}")
    if not bottom or not set(bottom) <= days:
        bad.append(f"heatmap columns not days of the month {sorted(days)}: {bottom}")
else:
    bad.append("no user x day heatmap to check")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
EOF

finish cli_figures
