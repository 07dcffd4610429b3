#!/usr/bin/env python3
"""check_figures.py OUTDIR [POLICY...] — the axes of `lucid report`'s
figures against the data they were drawn from (parsing the SVGs):

Figure 8   log x axis of decades: the lowest tick is at most the shortest
           JCT (>= 1 s) and within a decade of it, the highest at least the
           longest JCT and within a decade of it (jobs-<policy>.csv).
Figure 9   log y axis of decades bounding the non-zero VC delays in the same
           way; every bar's top, mapped back through the axis, is its VC's
           avg_queue in summary.csv (within 1 %), in summary.csv's order.
Utilisation  the x axis runs from 0 to the last job's end over all policies (days
           since the first sample; from jobs-<policy>.csv and
           series-<policy>.csv), y from 0 to 100 %; for each POLICY named
           (all by default) every point equals the whole-cluster
           utilisation recomputed here from series-<policy>.csv (within 0.5
           percentage points): per bin and VC the mean busy and total GPUs,
           a VC without samples in a bin idle at its last size.
Prints one line per failed check; exits 1 if any failed."""
import csv
import math
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
BINS = 600
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def load(path):
    root = ET.parse(path).getroot()
    texts = [(float(t.get("x")), float(t.get("y")), t.get("text-anchor"), t.text or "")
             for t in root.iter(NS + "text")]
    rects = [{k: r.get(k) for k in ("x", "y", "width", "height", "fill", "stroke")}
             for r in root.iter(NS + "rect")]
    lines = [r for r in root.iter(NS + "polyline")]
    frame = next(r for r in rects if r["fill"] == "none" and r["stroke"] == "#333333")
    fx, fy = float(frame["x"]), float(frame["y"])
    fw, fh = float(frame["width"]), float(frame["height"])
    return texts, rects, lines, (fx, fy, fx + fw, fy + fh)


def number(label):
    return float(label)


def y_ticks(texts, frame):
    """(value, pixel y) of the y-axis labels: right-aligned left of the frame."""
    return [(number(t), y - 4) for x, y, a, t in texts if a == "end" and abs(x - (frame[0] - 6)) < 0.01]


def x_ticks(texts, frame):
    """(value, pixel x) of the x-axis labels: centred 18 px under the frame."""
    return [(number(t), x) for x, y, a, t in texts if a == "middle" and abs(y - (frame[3] + 18)) < 0.01]


def decades(ticks, what):
    values = [v for v, _ in ticks]
    ok = len(values) >= 2 and all(a > 0 and abs(math.log10(b / a) - 1) < 1e-9
                                  for a, b in zip(values, values[1:]))
    check(ok, f"{what}: ticks are not consecutive decades: {values}")
    return values if ok else []


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main():
    out = sys.argv[1]
    figs = out + "/report"
    summary = read_csv(out + "/summary.csv")
    policies = []
    for row in summary:
        if row["policy"] not in policies:
            policies.append(row["policy"])
    jobs = {p: read_csv(f"{out}/jobs-{p}.csv") for p in policies}

    # Figure 8
    texts, rects, lines, frame = load(figs + "/fig8_jct_cdf.svg")
    jcts = [float(j["jct"]) for p in policies for j in jobs[p]]
    lo, hi = max(1.0, min(jcts)), max(jcts)
    ticks = decades(x_ticks(texts, frame), "Figure 8 x")
    if ticks:
        check(ticks[0] <= lo < 10 * ticks[0], f"Figure 8: lowest tick {ticks[0]} vs shortest JCT {lo}")
        check(ticks[-1] / 10 < hi <= ticks[-1], f"Figure 8: highest tick {ticks[-1]} vs longest JCT {hi}")

    # Figure 9
    texts, rects, lines, frame = load(figs + "/fig9_vc_queue.svg")
    rows = [r for r in summary if r["vc"] != "all"]
    queues = [float(r["avg_queue"]) for r in rows if float(r["avg_queue"]) > 0]
    ticks = decades(y_ticks(texts, frame), "Figure 9 y")
    if ticks and queues:
        check(ticks[0] <= min(queues) < 10 * ticks[0], f"Figure 9: lowest tick {ticks[0]} vs {min(queues)}")
        check(ticks[-1] / 10 < max(queues) <= ticks[-1], f"Figure 9: highest tick {ticks[-1]} vs {max(queues)}")
        vcs = []
        for r in rows:
            if r["vc"] not in vcs:
                vcs.append(r["vc"])
        by = {(r["policy"], r["vc"]): float(r["avg_queue"]) for r in rows}
        want = [by[(p, v)] for v in vcs for p in policies if (p, v) in by and by[(p, v)] > 0]
        bars = [r for r in rects if r["stroke"] == "none" and float(r["x"]) < frame[2]]
        check(len(bars) == len(want), f"Figure 9: {len(bars)} bars for {len(want)} non-zero delays")
        span = math.log10(ticks[-1]) - math.log10(ticks[0])
        for bar, q in zip(bars, want):
            top = float(bar["y"])
            got = 10 ** (math.log10(ticks[0]) + (frame[3] - top) / (frame[3] - frame[1]) * span)
            check(abs(got - q) <= 0.01 * q, f"Figure 9: bar at x={bar['x']} shows {got:.1f}, summary says {q}")
        # Grey print: every policy's bars but the first carry a white fill
        # pattern (hatch lines inside the bar), the same in the legend.
        hatches = [l for l in lines if l.get("stroke") == "#ffffff"]
        def hatched(bar):
            x0, y0 = float(bar["x"]), float(bar["y"])
            x1, y1 = x0 + float(bar["width"]), y0 + float(bar["height"])
            for l in hatches:
                pts = [tuple(map(float, p.split(","))) for p in l.get("points").split()]
                if all(x0 - 0.01 <= px <= x1 + 0.01 and y0 - 0.01 <= py <= y1 + 0.01 for px, py in pts):
                    return True
            return False
        for bar, q in zip(bars, want):
            if bar["fill"] != "#1f77b4" and float(bar["height"]) >= 8 and float(bar["width"]) >= 3:
                check(hatched(bar), f"Figure 9: the {bar['fill']} bar at x={bar['x']} has no fill pattern")

    # Utilisation
    try:
        texts, rects, lines, frame = load(figs + "/gpu_utilisation.svg")
    except FileNotFoundError:
        texts = None
    if texts is not None:
        xt = x_ticks(texts, frame)
        (v0, p0), (v1, p1) = xt[0], xt[-1]
        right_day = v0 + (frame[2] - p0) * (v1 - v0) / (p1 - p0)
        check(abs((frame[0] - p0) * (v1 - v0) / (p1 - p0) + v0) < 1e-6, "utilisation: x axis does not start at 0")
        yt = y_ticks(texts, frame)
        check(yt[0][0] == 0 and yt[-1][0] == 100, f"utilisation: y axis {yt[0][0]}..{yt[-1][0]}, not 0..100")
        colours = {}
        for i, line in enumerate(lines):
            colours[line.get("stroke")] = line
        palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                   "#7f7f7f", "#bcbd22", "#17becf"]
        wanted = sys.argv[2:] or policies
        for p in wanted:
            series = read_csv(f"{out}/series-{p}.csv")
            t0 = min(int(s["time"]) for s in series)
            end = max(int(j["end_time"]) for q in policies for j in jobs[q])
            check(abs(right_day - (end - t0) / 86400) < 1e-3,
                  f"utilisation ({p}): x axis ends at {right_day:.4f} days, the last end is at {(end - t0) / 86400:.4f}")
            util = recompute(series, t0, end)
            line = colours.get(palette[policies.index(p) % len(palette)])
            if line is None:
                check(False, f"utilisation: no line for {p}")
                continue
            points = [tuple(map(float, xy.split(","))) for xy in line.get("points").split()]
            got = [100 * (frame[3] - y) / (frame[3] - frame[1]) for _, y in points]
            check(len(got) == len(util), f"utilisation ({p}): {len(got)} points, {len(util)} bins")
            worst = max((abs(a - 100 * b) for a, b in zip(got, util)), default=0)
            check(worst < 0.5, f"utilisation ({p}): a point differs from the series by {worst:.2f} points")
            check(all(0 <= g <= 100 for g in got), f"utilisation ({p}): a point outside 0..100 %")

    for f in failures:
        print("FAIL:", f)
    print(f"check_figures: {len(failures)} failed")
    sys.exit(1 if failures else 0)


def recompute(series, t0, end):
    width = (end - t0) / BINS
    vcs = {}
    first = {}
    for s in series:
        v = s["vc"]
        t = int(s["time"])
        if v not in first or t < first[v][0]:
            first[v] = (t, int(s["total_gpus"]))
        if t > end:
            continue
        b = min(int((t - t0) / width), BINS - 1)
        cell = vcs.setdefault(v, {}).setdefault(b, [0, 0, 0])
        cell[0] += int(s["total_gpus"]) - int(s["idle_gpus"])
        cell[1] += int(s["total_gpus"])
        cell[2] += 1
    last = {v: first[v][1] for v in first}
    util = []
    for b in range(BINS):
        busy = total = 0
        for v in first:
            cell = vcs.get(v, {}).get(b)
            if cell:
                last[v] = cell[1] / cell[2]
                busy += cell[0] / cell[2]
            total += last[v]
        if total > 0:
            util.append(busy / total)
    return util


if __name__ == "__main__":
    main()
