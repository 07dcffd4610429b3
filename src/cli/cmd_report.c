/* cmd_report.c — `lucid report OUTDIR`: the paper's tables and figures from
 * what `lucid simulate` wrote there, as one self-contained HTML page (tables
 * in HTML, figures as inline SVG) and the figures as SVG files in
 * OUTDIR/report/:
 *   Table 4   avg JCT, avg queue, p99.9 queue per policy (summary.csv)
 *   Table 5   the same for large (> 8 GPUs) and small jobs (jobs-<policy>.csv)
 *   Figure 8  JCT CDF per policy on a log axis (jobs-<policy>.csv)
 *   Figure 9  average queueing per VC, bars grouped by VC (summary.csv)
 *   GPU utilisation over time per policy (series-<policy>.csv, when present)
 *   for each --model file: its importance chart and shape functions (explain.h)
 * The page is well-formed XML (XHTML syntax), so XML tools can check it.
 * Input errors name the file, line and field. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "lucid/atomic.h"
#include "lucid/bounds.h"
#include "lucid/cart.h"
#include "lucid/csv.h"
#include "lucid/ebm.h"
#include "lucid/explain.h"
#include "lucid/manifest.h"
#include "lucid/model_file.h"
#include "lucid/svg.h"
#include "lucid/util.h"

static const char usage_text[] =
    "usage: lucid report OUTDIR [options]\n"
    "\n"
    "Writes the paper's Tables 4 and 5 and Figures 8 and 9, GPU utilisation over\n"
    "time and the models' charts for the results of `lucid simulate` in OUTDIR.\n"
    "\n"
    "options:\n"
    "  --out FILE.html      the page (default OUTDIR/report.html); figures go to\n"
    "                       OUTDIR/report/\n"
    "  --model FILE.json    also a model's importance chart and shape functions\n"
    "                       (repeatable)\n";

enum { MAX_POLICIES = 16, MAX_VCS = 512, MAX_MODELS = 8, UTIL_BINS = 600 };

static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

static const char *colour(int i)
{
    return palette[i % (int)(sizeof palette / sizeof palette[0])];
}

/* A line style per policy, so that lines stay apart in grey print (NULL:
 * solid). */
static const char *dash(int i)
{
    static const char *const styles[] = {NULL, "9,4", "2,3", "12,3,2,3", "5,5", "14,4,2,4,2,4"};
    return styles[i % (int)(sizeof styles / sizeof styles[0])];
}

/* A fill pattern per policy for bars, drawn as white lines over the
 * colour, so that bars stay apart in grey print: none, horizontal,
 * vertical, '/', '\\', crossed. */
static void hatch(lucid_svg *svg, double x, double y, double w, double h, int i)
{
    const double step = 4;
    int kind = i % 6;
    for (int k = 0; kind == 1 || kind == 5 ? k * step < h : 0; k++) {
        double lx[2] = {x, x + w}, ly[2] = {y + h - k * step, y + h - k * step};
        lucid_svg_polyline(svg, lx, ly, 2, "#ffffff", 1, NULL);
    }
    for (int k = 1; kind == 2 || kind == 5 ? k * step < w : 0; k++) {
        double lx[2] = {x + k * step, x + k * step}, ly[2] = {y, y + h};
        lucid_svg_polyline(svg, lx, ly, 2, "#ffffff", 1, NULL);
    }
    if (kind != 3 && kind != 4)
        return;
    /* Diagonals x' = x + c + t, y' = y + h - t ('/'), clipped to the bar. */
    for (double c = -h; c < w; c += step) {
        double t0 = fmax(0, -c), t1 = fmin(h, w - c);
        if (t1 <= t0)
            continue;
        double lx[2], ly[2] = {y + h - t0, y + h - t1};
        if (kind == 3) {
            lx[0] = x + c + t0;
            lx[1] = x + c + t1;
        } else { /* mirrored: '\' */
            lx[0] = x + w - (c + t0);
            lx[1] = x + w - (c + t1);
        }
        lucid_svg_polyline(svg, lx, ly, 2, "#ffffff", 1, NULL);
    }
}

typedef struct size_class {
    int64_t jobs;
    double jct_sum, queue_sum, duration_sum, bsld_sum;
} size_class;

typedef struct policy_data {
    char name[64];
    int have_all;
    int64_t jobs;
    double avg_jct, avg_queue, p999_queue; /* summary.csv, VC "all" */
    double avg_delay, profiler_gpu_s;      /* likewise (NAN in runs that predate them) */
    double vc_queue[MAX_VCS];              /* NAN where the VC had no jobs */
    double *jct;                           /* jobs-<policy>.csv, sorted */
    size_t njct;
    size_class large, small;
    int64_t first_submit, last_submit;     /* jobs-<policy>.csv */
    int64_t last_end;                      /* likewise: the last job's end */
    double util_day[UTIL_BINS], util[UTIL_BINS]; /* series: days from the start, 0..1 */
    int nutil;
    int have_series;
    double floor, gap;                     /* summary.csv "all" (NAN if absent) */
    double bsld_mean, bsld_p99, jain_users, jain_vcs, gpu_util; /* likewise */
    double ftf_max, ftf_over1;             /* likewise (finish-time fairness) */
    /* eta-<policy>.csv: predicted (P50) and actual waits of jobs that waited
     * more than 60 s after their prediction, and how many started in [P10, P90] */
    double *eta_pred, *eta_wait;
    size_t neta, eta_inside;
    int have_eta;
} policy_data;

typedef struct report {
    const char *dir;
    char figdir[4096];
    policy_data *pol;
    int npol;
    char *vcs[MAX_VCS];
    int nvcs;
    lucid_manifest manifest; /* OUTDIR/MANIFEST */
    int have_manifest, checked; /* files checked against it */
    double series_days; /* utilisation: first sample to the last job's end */
    int64_t last_end;   /* the last job's end over every policy (INT64_MIN: none) */
} report;

static void report_free(report *r)
{
    lucid_manifest_free(&r->manifest);
    for (int p = 0; p < r->npol; p++) {
        free(r->pol[p].jct);
        free(r->pol[p].eta_pred);
        free(r->pol[p].eta_wait);
    }
    free(r->pol);
    for (int v = 0; v < r->nvcs; v++)
        free(r->vcs[v]);
}

/* ---- reading what simulate wrote ---- */

/* Column indices of `names` (n of them), or an error naming the first missing. */
static int require_columns(const lucid_csv *csv, const char *const *names, int *cols, int n,
                           lucid_error *err)
{
    for (int i = 0; i < n; i++)
        if ((cols[i] = lucid_csv_col(csv, names[i])) < 0)
            return lucid_error_at(err, lucid_csv_name(csv), 1, names[i],
                                  "required column is missing");
    return 0;
}

/* A number that must be finite and >= 0. */
static int read_nonneg(const lucid_csv *csv, int col, const char *name, double *out,
                       lucid_error *err)
{
    if (lucid_csv_f64(csv, col, out, err) < 0)
        return -1;
    if (!isfinite(*out) || *out < 0)
        return lucid_error_at(err, lucid_csv_name(csv), lucid_csv_line(csv), name,
                              "'%s' is not a number >= 0", lucid_csv_field(csv, col));
    return 0;
}

static int find_policy(report *r, const char *name, const lucid_csv *csv, lucid_error *err)
{
    for (int p = 0; p < r->npol; p++)
        if (strcmp(r->pol[p].name, name) == 0)
            return p;
    if (r->npol == MAX_POLICIES || strlen(name) >= sizeof r->pol[0].name || !*name ||
        strchr(name, '/'))
        return lucid_error_at(err, lucid_csv_name(csv), lucid_csv_line(csv), "policy",
                              "'%s': not a policy name (or more than %d policies)", name,
                              MAX_POLICIES);
    policy_data *pd = &r->pol[r->npol];
    snprintf(pd->name, sizeof pd->name, "%s", name);
    for (int v = 0; v < MAX_VCS; v++)
        pd->vc_queue[v] = NAN;
    return r->npol++;
}

static int find_vc(report *r, const char *name, const lucid_csv *csv, lucid_error *err)
{
    for (int v = 0; v < r->nvcs; v++)
        if (strcmp(r->vcs[v], name) == 0)
            return v;
    if (r->nvcs == MAX_VCS)
        return lucid_error_at(err, lucid_csv_name(csv), lucid_csv_line(csv), "vc",
                              "more than %d VCs", MAX_VCS);
    if (!(r->vcs[r->nvcs] = strdup(name)))
        return lucid_error_set(err, "out of memory");
    return r->nvcs++;
}

/* A file of OUTDIR, refused when the MANIFEST does not list it with its
 * current hash: it is from another run (or was edited since). */
static int check_run(report *r, const char *name, lucid_error *err)
{
    if (!r->have_manifest)
        return 0;
    if (lucid_manifest_check_file(&r->manifest, r->dir, name, err) < 0)
        return -1;
    r->checked++;
    return 0;
}

static int read_summary(report *r, lucid_error *err)
{
    char path[4352];
    snprintf(path, sizeof path, "%s/summary.csv", r->dir);
    if (check_run(r, "summary.csv", err) < 0)
        return -1;
    lucid_csv *csv = lucid_csv_open(path, err);
    if (!csv)
        return -1;
    static const char *const names[] = {"policy", "vc", "jobs", "avg_jct", "avg_queue",
                                        "p999_queue"};
    int c[6], rc = require_columns(csv, names, c, 6, err), more;
    /* Optional (runs before the floor existed have neither). */
    int c_floor = lucid_csv_col(csv, "floor"), c_gap = lucid_csv_col(csv, "gap");
    /* Optional too, each may be empty (NaN: e.g. Jain's index of one user). */
    static const char *const extra_names[] = {"bsld_mean",  "bsld_p99",      "jain_users",
                                              "jain_vcs",   "gpu_util",      "avg_delay",
                                              "profiler_gpu_s", "ftf_max",   "ftf_over1"};
    enum { NEXTRA = sizeof extra_names / sizeof extra_names[0] };
    int c_extra[NEXTRA];
    for (int k = 0; k < NEXTRA; k++)
        c_extra[k] = lucid_csv_col(csv, extra_names[k]);
    while (rc == 0 && (more = lucid_csv_next(csv, err)) != 0) {
        int64_t jobs;
        double jct, queue, p999;
        int p;
        if (more < 0 || (p = find_policy(r, lucid_csv_field(csv, c[0]), csv, err)) < 0 ||
            lucid_csv_i64(csv, c[2], &jobs, err) < 0 || read_nonneg(csv, c[3], "avg_jct", &jct, err) < 0 ||
            read_nonneg(csv, c[4], "avg_queue", &queue, err) < 0 ||
            read_nonneg(csv, c[5], "p999_queue", &p999, err) < 0) {
            rc = -1;
            break;
        }
        policy_data *pd = &r->pol[p];
        const char *vc = lucid_csv_field(csv, c[1]);
        if (strcmp(vc, "all") == 0) {
            pd->have_all = 1;
            pd->jobs = jobs;
            pd->avg_jct = jct;
            pd->avg_queue = queue;
            pd->p999_queue = p999;
            pd->floor = pd->gap = NAN;
            if (c_floor >= 0 && c_gap >= 0 &&
                (read_nonneg(csv, c_floor, "floor", &pd->floor, err) < 0 ||
                 lucid_csv_f64(csv, c_gap, &pd->gap, err) < 0)) {
                rc = -1;
                break;
            }
            double *extra[NEXTRA] = {&pd->bsld_mean, &pd->bsld_p99,       &pd->jain_users,
                                     &pd->jain_vcs,  &pd->gpu_util,       &pd->avg_delay,
                                     &pd->profiler_gpu_s, &pd->ftf_max,   &pd->ftf_over1};
            for (int k = 0; k < NEXTRA && rc == 0; k++) {
                *extra[k] = NAN;
                if (c_extra[k] >= 0 && lucid_csv_field(csv, c_extra[k])[0] != '\0' &&
                    read_nonneg(csv, c_extra[k], extra_names[k], extra[k], err) < 0)
                    rc = -1;
            }
            if (rc < 0)
                break;
            continue;
        }
        int v = find_vc(r, vc, csv, err);
        if (v < 0) {
            rc = -1;
            break;
        }
        pd->vc_queue[v] = queue;
    }
    lucid_csv_close(csv);
    if (rc == 0 && r->npol == 0)
        rc = lucid_error_at(err, path, 0, NULL, "no policies: is this a `lucid simulate` output?");
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int read_jobs(report *r, policy_data *pd, lucid_error *err)
{
    char path[4352], name[128];
    snprintf(name, sizeof name, "jobs-%s.csv", pd->name);
    snprintf(path, sizeof path, "%s/%s", r->dir, name);
    if (check_run(r, name, err) < 0)
        return -1;
    lucid_csv *csv = lucid_csv_open(path, err);
    if (!csv)
        return -1;
    static const char *const names[] = {"gpu_num", "queue", "jct", "submit_time", "duration"};
    int c[5], rc = require_columns(csv, names, c, 5, err), more;
    size_t cap = 0;
    pd->first_submit = INT64_MAX;
    pd->last_submit = INT64_MIN;
    pd->last_end = INT64_MIN;
    while (rc == 0 && (more = lucid_csv_next(csv, err)) != 0) {
        int64_t gpus, submit;
        double queue, jct, duration;
        if (more < 0 || lucid_csv_i64(csv, c[0], &gpus, err) < 0 ||
            lucid_csv_i64(csv, c[3], &submit, err) < 0 ||
            read_nonneg(csv, c[4], "duration", &duration, err) < 0 ||
            read_nonneg(csv, c[1], "queue", &queue, err) < 0 ||
            read_nonneg(csv, c[2], "jct", &jct, err) < 0) {
            rc = -1;
            break;
        }
        if (pd->njct == cap) {
            cap = cap ? 2 * cap : 1024;
            double *grown = realloc(pd->jct, cap * sizeof *grown);
            if (!grown) {
                rc = lucid_error_set(err, "out of memory");
                break;
            }
            pd->jct = grown;
        }
        pd->jct[pd->njct++] = jct;
        pd->first_submit = submit < pd->first_submit ? submit : pd->first_submit;
        pd->last_submit = submit > pd->last_submit ? submit : pd->last_submit;
        int64_t end = submit + (int64_t)jct;
        pd->last_end = end > pd->last_end ? end : pd->last_end;
        size_class *sc = gpus > 8 ? &pd->large : &pd->small;
        sc->jobs++;
        sc->jct_sum += jct;
        sc->queue_sum += queue;
        sc->duration_sum += duration;
        /* bounded slowdown as summary.csv's (bounds.h) */
        double slowdown = jct / (duration > LUCID_BSLD_THRESHOLD ? duration : LUCID_BSLD_THRESHOLD);
        sc->bsld_sum += slowdown > 1 ? slowdown : 1;
    }
    lucid_csv_close(csv);
    if (rc == 0 && pd->njct)
        qsort(pd->jct, pd->njct, sizeof *pd->jct, cmp_double);
    return rc;
}

/* eta-<policy>.csv, when the run predicted start times (optional). */
static int read_eta(report *r, policy_data *pd, lucid_error *err)
{
    char path[4352], name[128];
    snprintf(name, sizeof name, "eta-%s.csv", pd->name);
    snprintf(path, sizeof path, "%s/%s", r->dir, name);
    if (access(path, F_OK) != 0)
        return 0;
    if (check_run(r, name, err) < 0)
        return -1;
    lucid_csv *csv = lucid_csv_open(path, err);
    if (!csv)
        return -1;
    static const char *const names[] = {"predicted_at", "start_time", "eta_p10", "eta_p50",
                                        "eta_p90"};
    int c[5], rc = require_columns(csv, names, c, 5, err), more;
    int when = lucid_csv_col(csv, "when"); /* absent in runs before hourly re-predictions */
    size_t cap = 0;
    while (rc == 0 && (more = lucid_csv_next(csv, err)) != 0) {
        if (more > 0 && when >= 0 && strcmp(lucid_csv_field(csv, when), "queued") != 0)
            continue; /* the calibration is of the predictions made when jobs were queued */
        int64_t v[5];
        for (int k = 0; k < 5 && more > 0; k++)
            if (lucid_csv_i64(csv, c[k], &v[k], err) < 0)
                more = -1;
        if (more < 0) {
            rc = -1;
            break;
        }
        if (v[1] - v[0] <= 60 || v[3] < 0)
            continue; /* as eta_coverage counts: waits over a minute */
        if (pd->neta == cap) {
            cap = cap ? 2 * cap : 1024;
            double *a = realloc(pd->eta_pred, cap * sizeof *a);
            if (a)
                pd->eta_pred = a;
            double *b = a ? realloc(pd->eta_wait, cap * sizeof *b) : NULL;
            if (!b) {
                rc = lucid_error_set(err, "out of memory");
                break;
            }
            pd->eta_wait = b;
        }
        pd->eta_pred[pd->neta] = (double)(v[3] - v[0]);
        pd->eta_wait[pd->neta++] = (double)(v[1] - v[0]);
        pd->eta_inside += v[1] >= v[2] && v[1] <= v[4];
    }
    lucid_csv_close(csv);
    pd->have_eta = rc == 0;
    return rc;
}

/* One row of a series file. */
typedef struct sample {
    int64_t time;
    int32_t vc, busy, total;
} sample;

/* Whole-cluster utilisation in UTIL_BINS equal time bins from the first
 * sample to the last job's end (`end`, the span of Table 4's GPU
 * utilisation, drain included): in each bin, the sum
 * over every VC of its mean busy GPUs over the sum of its GPUs.  A VC's
 * samples stop with its last job; from then on it counts as idle, not as
 * gone (which made the last running VCs look like a full cluster). */
static int bin_utilisation(policy_data *pd, const sample *rows, size_t n, int nvcs, int64_t end,
                           int64_t *start, lucid_error *err)
{
    int64_t t0 = rows[0].time;
    for (size_t i = 1; i < n; i++)
        t0 = rows[i].time < t0 ? rows[i].time : t0;
    if (end <= t0)
        end = t0 + 1;
    *start = t0;
    size_t cells = (size_t)UTIL_BINS * (size_t)nvcs;
    double *busy = calloc(cells, sizeof *busy), *total = calloc(cells, sizeof *total),
           *count = calloc(cells, sizeof *count), *last_total = calloc((size_t)nvcs, sizeof *last_total);
    if (!busy || !total || !count || !last_total) {
        free(busy);
        free(total);
        free(count);
        free(last_total);
        return lucid_error_set(err, "out of memory");
    }
    double width = (double)(end - t0) / UTIL_BINS;
    int64_t *first_time = malloc((size_t)nvcs * sizeof *first_time);
    for (int v = 0; first_time && v < nvcs; v++)
        first_time[v] = INT64_MAX;
    for (size_t i = 0; first_time && i < n; i++) {
        const sample *s = &rows[i];
        if (s->time < first_time[s->vc]) { /* before its first bin, a VC has its first size */
            first_time[s->vc] = s->time;
            last_total[s->vc] = s->total;
        }
        if (s->time > end)
            continue;
        int b = (int)((double)(s->time - t0) / width);
        size_t cell = (size_t)(b < UTIL_BINS ? b : UTIL_BINS - 1) * (size_t)nvcs + (size_t)s->vc;
        busy[cell] += s->busy;
        total[cell] += s->total;
        count[cell] += 1;
    }
    for (int b = 0; first_time && b < UTIL_BINS; b++) {
        double all_busy = 0, all_total = 0;
        for (int v = 0; v < nvcs; v++) {
            size_t cell = (size_t)b * (size_t)nvcs + (size_t)v;
            if (count[cell] > 0) {
                last_total[v] = total[cell] / count[cell];
                all_busy += busy[cell] / count[cell];
            }
            all_total += last_total[v];
        }
        if (all_total > 0) {
            pd->util_day[pd->nutil] = ((double)b + 0.5) * width / 86400.0;
            pd->util[pd->nutil++] = all_busy / all_total;
        }
    }
    int rc = first_time ? 0 : lucid_error_set(err, "out of memory");
    free(first_time);
    free(busy);
    free(total);
    free(count);
    free(last_total);
    return rc;
}

/* series-<policy>.csv, when there is one (a missing file is not an error). */
static int read_series(report *r, policy_data *pd, lucid_error *err)
{
    char path[4352], name[128];
    snprintf(name, sizeof name, "series-%s.csv", pd->name);
    snprintf(path, sizeof path, "%s/%s", r->dir, name);
    FILE *probe = fopen(path, "r");
    if (!probe)
        return errno == ENOENT ? 0 : lucid_error_at(err, path, 0, NULL, "cannot open: %s",
                                                    strerror(errno));
    fclose(probe);
    if (check_run(r, name, err) < 0)
        return -1;
    lucid_csv *csv = lucid_csv_open(path, err);
    if (!csv)
        return -1;
    static const char *const names[] = {"time", "vc", "total_gpus", "idle_gpus"};
    int c[4], rc = require_columns(csv, names, c, 4, err), more;
    sample *rows = NULL;
    size_t n = 0, cap = 0;
    lucid_strtab *vcs = lucid_strtab_new();
    if (!vcs)
        rc = lucid_error_set(err, "out of memory");
    while (rc == 0 && (more = lucid_csv_next(csv, err)) != 0) {
        int64_t t, all, idle;
        int32_t vc;
        if (more < 0 || lucid_csv_i64(csv, c[0], &t, err) < 0 ||
            lucid_csv_i64(csv, c[2], &all, err) < 0 || lucid_csv_i64(csv, c[3], &idle, err) < 0) {
            rc = -1;
            break;
        }
        if (all < 0 || idle < 0 || idle > all || all > INT32_MAX) {
            rc = lucid_error_at(err, path, lucid_csv_line(csv), "idle_gpus",
                                "%lld idle of %lld GPUs", (long long)idle, (long long)all);
            break;
        }
        if ((vc = lucid_strtab_intern(vcs, lucid_csv_field(csv, c[1]))) < 0 ||
            LUCID_GROW(rows, cap, n + 1) < 0) {
            rc = lucid_error_set(err, "out of memory");
            break;
        }
        rows[n++] = (sample){t, vc, (int32_t)(all - idle), (int32_t)all};
    }
    lucid_csv_close(csv);
    if (rc == 0 && n > 0) {
        int64_t t0, last = rows[0].time;
        for (size_t i = 1; i < n; i++)
            last = rows[i].time > last ? rows[i].time : last;
        /* The span of Table 4's GPU utilisation: to the last job's end. */
        int64_t end = r->last_end > INT64_MIN ? r->last_end : last;
        pd->have_series = 1;
        rc = bin_utilisation(pd, rows, n, lucid_strtab_count(vcs), end, &t0, err);
        if (end > t0) {
            r->series_days = fmax(r->series_days, (double)(end - t0) / 86400.0);
            (void)last;
        }
    }
    free(rows);
    lucid_strtab_free(vcs);
    return rc;
}

/* ---- charts ---- */

enum { FIG_W = 820, FIG_H = 460, LEFT = 80, RIGHT = 170, TOP = 56, BOTTOM = 64 };

typedef struct axis {
    double lo, hi;
    int log; /* base-10 log scale (lo > 0) */
} axis;

static double map(const axis *a, double v, double from, double to)
{
    double f = a->log ? (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo))
                      : (v - a->lo) / (a->hi - a->lo);
    return from + f * (to - from);
}

static double fx(const axis *a, double v)
{
    return map(a, v, LEFT, FIG_W - RIGHT);
}

static double fy(const axis *a, double v, double height)
{
    return map(a, v, height - BOTTOM, TOP);
}

static void tick_label(double v, int log_scale, char *buf, size_t size)
{
    if (log_scale && v >= 1e5)
        snprintf(buf, size, "1e%d", (int)lround(log10(v)));
    else
        snprintf(buf, size, "%g", v);
}

/* A log axis gets a tick per decade, a linear one round ticks. */
static int axis_ticks(const axis *a, double *ticks, int max)
{
    if (!a->log)
        return lucid_svg_ticks(a->lo, a->hi, ticks, max);
    int n = 0;
    for (double v = a->lo; v <= a->hi * 1.0001 && n < max; v *= 10)
        ticks[n++] = v;
    return n;
}

/* Frame, grid, ticks, title and axis labels of a chart `height` high. */
static void draw_axes(lucid_svg *svg, const axis *x, const axis *y, double height,
                      const char *title, const char *xlabel, const char *ylabel)
{
    double ticks[64];
    char label[32];
    int n;
    if (x) {
        n = axis_ticks(x, ticks, 64);
        for (int i = 0; i < n; i++) {
            double px = fx(x, ticks[i]);
            lucid_svg_line(svg, px, TOP, px, height - BOTTOM, "#e5e5e5", 1);
            tick_label(ticks[i], x->log, label, sizeof label);
            lucid_svg_text(svg, px, height - BOTTOM + 18, 11, "middle", 0, label);
        }
        lucid_svg_text(svg, (LEFT + FIG_W - RIGHT) / 2.0, height - 20, 13, "middle", 0, xlabel);
    }
    n = axis_ticks(y, ticks, 64);
    for (int i = 0; i < n; i++) {
        double py = fy(y, ticks[i], height);
        lucid_svg_line(svg, LEFT, py, FIG_W - RIGHT, py, "#e5e5e5", 1);
        tick_label(ticks[i], y->log, label, sizeof label);
        lucid_svg_text(svg, LEFT - 6, py + 4, 11, "end", 0, label);
    }
    lucid_svg_rect(svg, LEFT, TOP, FIG_W - LEFT - RIGHT, height - TOP - BOTTOM, "none", "#333333");
    lucid_svg_text(svg, FIG_W / 2.0, 30, 16, "middle", 0, title);
    lucid_svg_text(svg, 22, (TOP + height - BOTTOM) / 2, 13, "middle", -90, ylabel);
}

/* Policy names beside the plot, a coloured line (or box) each. */
static void legend(lucid_svg *svg, const report *r, int boxes, const int *shown)
{
    double x = FIG_W - RIGHT + 16, y = TOP + 10;
    for (int p = 0; p < r->npol; p++) {
        if (shown && !shown[p])
            continue;
        if (boxes) {
            lucid_svg_rect(svg, x, y - 9, 18, 10, colour(p), "none");
            hatch(svg, x, y - 9, 18, 10, p);
        }
        else {
            double lx[2] = {x, x + 18}, ly[2] = {y - 4, y - 4};
            lucid_svg_polyline(svg, lx, ly, 2, colour(p), 2.5, dash(p));
        }
        lucid_svg_text(svg, x + 24, y, 12, "start", 0, r->pol[p].name);
        y += 20;
    }
}

static int save(lucid_svg *svg, const char *path, lucid_error *err)
{
    int rc = lucid_svg_save(svg, path, err);
    lucid_svg_free(svg);
    return rc;
}

/* Figure 8: fraction of jobs with JCT <= x, log x from the decade below the
 * shortest JCT (at least 1 s) to the decade above the longest. */
static int figure_cdf(const report *r, const char *path, lucid_error *err)
{
    double lo = INFINITY, hi = 0;
    for (int p = 0; p < r->npol; p++)
        if (r->pol[p].njct) {
            lo = fmin(lo, fmax(1, r->pol[p].jct[0]));
            hi = fmax(hi, r->pol[p].jct[r->pol[p].njct - 1]);
        }
    if (!(hi >= lo))
        lo = hi = 1;
    axis x = {pow(10, floor(log10(lo))), pow(10, ceil(log10(hi))), 1}, y = {0, 1, 0};
    if (x.hi <= x.lo)
        x.hi = x.lo * 10;
    lucid_svg *svg = lucid_svg_new(FIG_W, FIG_H);
    if (!svg)
        return lucid_error_set(err, "out of memory");
    draw_axes(svg, &x, &y, FIG_H, "Figure 8: JCT distribution per policy", "job completion time (s, log scale)",
              "fraction of jobs (CDF)");
    enum { POINTS = 400 };
    double xs[POINTS + 1], ys[POINTS + 1];
    for (int p = 0; p < r->npol; p++) {
        const policy_data *pd = &r->pol[p];
        if (!pd->njct)
            continue;
        int n = 0;
        for (int k = 0; k <= POINTS; k++) { /* evenly spaced ranks, last job included */
            size_t i = (size_t)((double)k / POINTS * (double)(pd->njct - 1));
            xs[n] = fx(&x, fmax(x.lo, pd->jct[i]));
            ys[n] = fy(&y, (double)(i + 1) / (double)pd->njct, FIG_H);
            n++;
        }
        lucid_svg_polyline(svg, xs, ys, n, colour(p), 2, dash(p));
        /* Its name on the line itself, each policy at its own height (0.2,
         * 0.3, ... of the jobs), for grey print. */
        double f = 0.2 + 0.1 * (p % 7);
        size_t i = (size_t)(f * (double)(pd->njct - 1));
        lucid_svg_text(svg, fx(&x, fmax(x.lo, pd->jct[i])) + 4, fy(&y, f, FIG_H) - 3, 11, "start",
                       0, pd->name);
    }
    /* The mean-duration floor (lucid bounds): no schedule that keeps the
     * durations has a lower average JCT. */
    double floor_jct = NAN;
    for (int p = 0; p < r->npol; p++)
        if (r->pol[p].floor > 0)
            floor_jct = r->pol[p].floor;
    if (floor_jct > 0 && floor_jct >= x.lo && floor_jct <= x.hi) {
        double px = fx(&x, floor_jct);
        double fxs[2] = {px, px}, fys[2] = {TOP, FIG_H - BOTTOM};
        lucid_svg_polyline(svg, fxs, fys, 2, "#333333", 1.5, "6,4");
        char label[96];
        snprintf(label, sizeof label, "floor: mean duration %.0f s", floor_jct);
        lucid_svg_text(svg, px + 4, TOP + 14, 11, "start", 0, label);
    }
    legend(svg, r, 0, NULL);
    return save(svg, path, err);
}

/* Start-time estimates: predicted (P50) against actual wait of every job
 * that waited over a minute after its prediction, both on log axes, with
 * the diagonal where they agree; at most 3,000 points per policy (every
 * k-th job in file order) keep the file small. */
static int figure_eta(const report *r, const char *path, lucid_error *err)
{
    double lo = INFINITY, hi = 60;
    for (int p = 0; p < r->npol; p++)
        for (size_t i = 0; i < r->pol[p].neta; i++) {
            double a = fmax(1, r->pol[p].eta_pred[i]), b = r->pol[p].eta_wait[i];
            lo = fmin(lo, fmin(a, b));
            hi = fmax(hi, fmax(a, b));
        }
    if (!(lo < hi))
        lo = 1;
    axis x = {pow(10, floor(log10(lo))), pow(10, ceil(log10(hi))), 1};
    axis y = x;
    lucid_svg *svg = lucid_svg_new(FIG_W, FIG_H);
    if (!svg)
        return lucid_error_set(err, "out of memory");
    draw_axes(svg, &x, &y, FIG_H, "Predicted vs actual wait (predictions at submission)",
              "actual wait (s, log scale)", "predicted wait, P50 (s, log scale)");
    double dx[2] = {fx(&x, x.lo), fx(&x, x.hi)}, dy[2] = {fy(&y, y.lo, FIG_H), fy(&y, y.hi, FIG_H)};
    lucid_svg_polyline(svg, dx, dy, 2, "#333333", 1, "6,4");
    for (int p = 0; p < r->npol; p++) {
        const policy_data *pd = &r->pol[p];
        size_t step = pd->neta > 3000 ? pd->neta / 3000 + 1 : 1;
        for (size_t i = 0; i < pd->neta; i += step) {
            double px = fx(&x, pd->eta_wait[i]), py = fy(&y, fmax(x.lo, pd->eta_pred[i]), FIG_H);
            lucid_svg_rect(svg, px - 1, py - 1, 2, 2, colour(p), "none");
        }
    }
    legend(svg, r, 1, NULL);
    return save(svg, path, err);
}

/* Figure 9: average queueing delay per VC, one bar per policy in each VC's
 * group (a colour and a fill pattern each, as in the legend, for grey print), on a log axis from the decade below the smallest non-zero delay to
 * the decade above the largest: the delays span decades, and on a linear
 * axis FIFO's flattens every other policy's.  A zero delay has no bar. */
static int figure_vc_queue(const report *r, const char *path, lucid_error *err)
{
    double lo = INFINITY, hi = 0;
    for (int p = 0; p < r->npol; p++)
        for (int v = 0; v < r->nvcs; v++) {
            double q = r->pol[p].vc_queue[v];
            if (!isnan(q) && q > 0) {
                lo = fmin(lo, q);
                hi = fmax(hi, q);
            }
        }
    if (!(hi >= lo))
        lo = hi = 1;
    axis y = {pow(10, floor(log10(lo))), pow(10, ceil(log10(hi))), 1};
    if (y.hi <= y.lo)
        y.hi = y.lo * 10;
    const double height = FIG_H + 40; /* room for the slanted VC names */
    lucid_svg *svg = lucid_svg_new(FIG_W, height);
    if (!svg)
        return lucid_error_set(err, "out of memory");
    draw_axes(svg, NULL, &y, height - 40, "Figure 9: average queueing delay per VC", "",
              "average queueing delay (s, log scale)");
    double group = (FIG_W - LEFT - RIGHT) / (double)(r->nvcs ? r->nvcs : 1);
    double bar = group * 0.8 / r->npol;
    for (int v = 0; v < r->nvcs; v++) {
        double gx = LEFT + group * v + group * 0.1;
        for (int p = 0; p < r->npol; p++) {
            double q = r->pol[p].vc_queue[v];
            if (isnan(q) || q <= 0)
                continue;
            double top = fy(&y, q, height - 40), base = fy(&y, y.lo, height - 40);
            lucid_svg_rect(svg, gx + bar * p, top, bar, base - top, colour(p), "none");
            hatch(svg, gx + bar * p, top, bar, base - top, p);
        }
        double cx = LEFT + group * (v + 0.5), cy = height - 40 - BOTTOM + 14;
        lucid_svg_text(svg, cx, cy, 10, "end", -40, r->vcs[v]);
    }
    lucid_svg_text(svg, (LEFT + FIG_W - RIGHT) / 2.0, height - 8, 13, "middle", 0, "virtual cluster");
    legend(svg, r, 1, NULL);
    return save(svg, path, err);
}

/* Cluster GPU utilisation over time (busy / all GPUs of the cluster,
 * binned), from the start to the last job's end (Table 4's span); each
 * policy's line style (legend) keeps them apart in grey print (the lines
 * overlap too much for labels on them). */
static int figure_utilisation(const report *r, const char *path, lucid_error *err)
{
    int shown[MAX_POLICIES];
    for (int p = 0; p < r->npol; p++)
        shown[p] = r->pol[p].nutil > 0;
    axis x = {0, r->series_days > 0 ? r->series_days : 1, 0}, y = {0, 100, 0};
    lucid_svg *svg = lucid_svg_new(FIG_W, FIG_H);
    if (!svg)
        return lucid_error_set(err, "out of memory");
    draw_axes(svg, &x, &y, FIG_H, "GPU utilisation over time",
              "time since the start (days), to the last job's end",
              "busy GPUs (% of all the cluster's GPUs)");
    legend(svg, r, 0, shown);
    double xs[UTIL_BINS], ys[UTIL_BINS];
    for (int p = 0; p < r->npol; p++) {
        const policy_data *pd = &r->pol[p];
        for (int i = 0; i < pd->nutil; i++) {
            xs[i] = fx(&x, pd->util_day[i]);
            ys[i] = fy(&y, 100 * pd->util[i], FIG_H);
        }
        if (pd->nutil)
            lucid_svg_polyline(svg, xs, ys, pd->nutil, colour(p), 1.5, dash(p));
    }
    return save(svg, path, err);
}

/* ---- the page ---- */

static void html_text(FILE *out, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(*s, out);
        }
}

/* The SVG file's content without its XML declaration, inline in the page. */
static int embed_svg(FILE *out, const char *path, lucid_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return lucid_error_at(err, path, 0, NULL, "cannot open: %s", strerror(errno));
    char line[8192];
    int first = 1;
    fputs("<figure>\n", out);
    while (fgets(line, sizeof line, f)) {
        if (!(first && strncmp(line, "<?xml", 5) == 0))
            fputs(line, out);
        first = 0;
    }
    const char *name = strrchr(path, '/');
    fputs("<figcaption>", out);
    html_text(out, name ? name + 1 : path);
    fputs("</figcaption></figure>\n", out);
    int rc = ferror(f) ? lucid_error_at(err, path, 0, NULL, "read failed") : 0;
    fclose(f);
    return rc;
}

/* A cell of an optional summary.csv value ("n/a" when absent or NaN). */
static void optional_cell(FILE *out, double v, const char *format, double scale)
{
    fputs("<td>", out);
    if (v == v)
        fprintf(out, format, scale * v);
    else
        fputs("n/a", out);
    fputs("</td>", out);
}

static void table4(FILE *out, const report *r)
{
    fputs("<h2>Table 4: all jobs</h2>\n<table>\n<tr><th>policy</th><th>jobs</th>"
          "<th>avg JCT (s)</th><th>avg delay (s)</th><th>avg queue (s)</th>"
          "<th>p99.9 queue (s)</th><th>profiler GPU-s</th><th>gap to floor</th><th>bounded slowdown</th><th>p99 bounded slowdown</th>"
          "<th>Jain (users)</th><th>Jain (VCs)</th><th>GPU utilisation</th>"
          "<th>max finish-time fairness</th><th>jobs with finish-time fairness &gt; 1</th></tr>\n",
          out);
    double floor_jct = NAN;
    for (int p = 0; p < r->npol; p++) {
        const policy_data *pd = &r->pol[p];
        fputs("<tr><td>", out);
        html_text(out, pd->name);
        if (pd->have_all) {
            fprintf(out, "</td><td>%lld</td><td>%.0f</td>", (long long)pd->jobs, pd->avg_jct);
            optional_cell(out, pd->avg_delay, "%.0f", 1);
            fprintf(out, "<td>%.0f</td><td>%.0f</td>", pd->avg_queue, pd->p999_queue);
            optional_cell(out, pd->profiler_gpu_s, "%.0f", 1);
            optional_cell(out, pd->gap, "%.1f %%", 100);
            optional_cell(out, pd->bsld_mean, "%.2f", 1);
            optional_cell(out, pd->bsld_p99, "%.2f", 1);
            optional_cell(out, pd->jain_users, "%.3f", 1);
            optional_cell(out, pd->jain_vcs, "%.3f", 1);
            optional_cell(out, pd->gpu_util, "%.1f %%", 100);
            optional_cell(out, pd->ftf_max, "%.1f", 1);
            optional_cell(out, pd->ftf_over1, "%.1f %%", 100);
            fputs("</tr>\n", out);
            if (pd->floor > 0)
                floor_jct = pd->floor;
        } else {
            fputs("</td><td colspan=\"14\">no \"all\" row in summary.csv</td></tr>\n", out);
        }
    }
    fputs("</table>\n", out);
    const char *def = r->have_manifest ? lucid_manifest_get(&r->manifest, "queue_definition") : NULL;
    fputs("<p>Delay = JCT &#8722; duration, the same for every policy. ", out);
    if (def && strcmp(def, CLI_QUEUE_COMPARABLE) == 0)
        fputs("Queue = all time from submission to the start of the run that completes, "
              "discarded work included (Lucid's restarted profiling run, a preempted job's "
              "checkpoint cost); the profiler's GPU-seconds are in their own column.</p>\n",
              out);
    else if (def && strcmp(def, CLI_QUEUE_WAITS_ONLY) == 0)
        fputs("Queue = waiting only, the reference simulator's accounting: Lucid's time in "
              "the profiler and preemptions' checkpoint cost are not in it, so compare "
              "policies on delay.</p>\n",
              out);
    else
        fputs("The run does not say how its queue column was counted (no "
              "queue_definition in its MANIFEST): compare policies on delay.</p>\n",
              out);
    if (floor_jct > 0)
        fprintf(out, "<p>Floor: the mean job duration, %.0f s: no schedule that leaves durations "
                     "unchanged has a lower average JCT (gap = avg JCT / floor - 1; "
                     "<code>lucid bounds</code> gives tighter floors).</p>\n",
                floor_jct);
}

static void size_cells(FILE *out, const size_class *sc)
{
    if (sc->jobs)
        fprintf(out, "<td>%lld</td><td>%.0f</td><td>%.0f</td><td>%.1f %%</td><td>%.2f</td>",
                (long long)sc->jobs, sc->jct_sum / (double)sc->jobs,
                sc->queue_sum / (double)sc->jobs,
                sc->duration_sum > 0 ? 100 * (sc->jct_sum / sc->duration_sum - 1) : 0.0,
                sc->bsld_sum / (double)sc->jobs);
    else
        fputs("<td>0</td><td>-</td><td>-</td><td>-</td><td>-</td>", out);
}

static void table5(FILE *out, const report *r)
{
    fputs("<h2>Table 5: large (&gt; 8 GPUs) and small jobs</h2>\n<table>\n"
          "<tr><th>policy</th><th>large jobs</th><th>large avg JCT (s)</th>"
          "<th>large avg queue (s)</th><th>large gap</th><th>large bounded slowdown</th>"
          "<th>small jobs</th><th>small avg JCT (s)</th><th>small avg queue (s)</th>"
          "<th>small gap</th><th>small bounded slowdown</th></tr>\n",
          out);
    for (int p = 0; p < r->npol; p++) {
        fputs("<tr><td>", out);
        html_text(out, r->pol[p].name);
        fputs("</td>", out);
        size_cells(out, &r->pol[p].large);
        size_cells(out, &r->pol[p].small);
        fputs("</tr>\n", out);
    }
    fputs("</table>\n", out);
}

static int make_dir(const char *path, lucid_error *err)
{
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return lucid_error_at(err, path, 0, NULL, "cannot create directory: %s", strerror(errno));
    return 0;
}

/* The file's name without directory and extension, safe in a path. */
static void stem(const char *path, char *buf, size_t size)
{
    const char *base = strrchr(path, '/');
    snprintf(buf, size, "%s", base ? base + 1 : path);
    char *dot = strrchr(buf, '.');
    if (dot && dot != buf)
        *dot = '\0';
    for (char *c = buf; *c; c++)
        if (!(*c == '-' || *c == '_' || (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') ||
              (*c >= 'A' && *c <= 'Z')))
            *c = '_';
}

/* An EBM's charts (importance first, then every term) or a tree's text. */
static int model_section(FILE *out, const report *r, const char *path, lucid_error *err)
{
    char kind[32], name[256], dir[4608];
    if (lucid_model_file_kind(path, kind, sizeof kind, err) < 0)
        return -1;
    stem(path, name, sizeof name);
    fputs("<h2>Model ", out);
    html_text(out, name);
    fputs(" (", out);
    html_text(out, kind);
    fputs(")</h2>\n", out);
    if (strcmp(kind, "cart") == 0) {
        lucid_cart *tree = lucid_cart_load(path, err);
        if (!tree)
            return -1;
        char *text = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len);
        int rc = mem ? lucid_cart_print(tree, mem, err) : lucid_error_set(err, "out of memory");
        if (mem)
            fclose(mem);
        lucid_cart_free(tree);
        if (rc == 0) {
            fputs("<pre>", out);
            html_text(out, text ? text : "");
            fputs("</pre>\n", out);
        }
        free(text);
        return rc;
    }
    if (strcmp(kind, "ebm") != 0)
        return lucid_error_at(err, path, 0, "kind", "unknown model kind '%s'", kind);
    lucid_ebm *m = lucid_ebm_load(path, err);
    if (!m)
        return -1;
    snprintf(dir, sizeof dir, "%s/model-%s", r->figdir, name);
    int rc = lucid_explain_write_dir(m, dir, err);
    if (rc < 0) {
        lucid_ebm_free(m);
        return -1;
    }
    /* The importance chart, then the terms from the most important down. */
    char svg[5400];
    snprintf(svg, sizeof svg, "%s/importance.svg", dir);
    rc = embed_svg(out, svg, err);
    int *order = malloc((size_t)(m->nterms ? m->nterms : 1) * sizeof *order);
    if (rc == 0 && (!order || lucid_explain_rank(m, order) < 0))
        rc = lucid_error_set(err, "out of memory");
    for (int i = 0; i < m->nterms && rc == 0; i++) {
        char base[600];
        lucid_explain_term_file(m, order[i], base, sizeof base);
        snprintf(svg, sizeof svg, "%s/%s.svg", dir, base);
        /* A term with a single bin has no chart. */
        if (access(svg, F_OK) == 0)
            rc = embed_svg(out, svg, err);
    }
    free(order);
    lucid_ebm_free(m);
    return rc;
}

static const char style[] =
    "body{font-family:DejaVu Sans,Arial,sans-serif;margin:2em;max-width:1100px}"
    "table{border-collapse:collapse;margin:1em 0}"
    "th,td{border:1px solid #bbb;padding:4px 10px;text-align:right}"
    "th:first-child,td:first-child{text-align:left}"
    "figure{margin:1.5em 0}svg{max-width:100%;height:auto}"
    "figcaption{color:#666;font-size:small}";

/* Which run the page shows: the MANIFEST's lines (inputs with their hashes,
 * semantics, policies, knobs), not the per-file hashes it was checked with. */
static void run_section(FILE *out, const report *r)
{
    fputs("<h2>Run</h2>\n", out);
    if (!r->have_manifest) {
        fputs("<p>No MANIFEST in the folder (written by a lucid before 0.1.0 recorded its "
              "runs): which trace, semantics and knobs produced these files is not known, and "
              "files of different runs cannot be told apart.</p>\n",
              out);
        return;
    }
    fprintf(out, "<p>From <code>MANIFEST</code>; the %d files read were checked against its "
                 "hashes.</p>\n<table>\n",
            r->checked);
    for (size_t i = 0; i < r->manifest.n; i++) {
        if (strcmp(r->manifest.keys[i], "file") == 0)
            continue;
        fputs("<tr><td>", out);
        html_text(out, r->manifest.keys[i]);
        fputs("</td><td style=\"text-align:left\"><code>", out);
        html_text(out, r->manifest.values[i]);
        fputs("</code></td></tr>\n", out);
    }
    fputs("</table>\n", out);
}

/* Start-time estimates: interval coverage and the scatter (eta-*.csv). */
static int eta_section(FILE *out, const report *r, lucid_error *err)
{
    int any = 0;
    for (int p = 0; p < r->npol; p++)
        any |= r->pol[p].have_eta;
    if (!any)
        return 0;
    fputs("<h2>Start-time estimates</h2>\n<p>Each job's start predicted when it joined the "
          "queue (P10, P50, P90). Over the jobs that then waited more than 60 s: the share "
          "that started inside [P10, P90], and the median of |predicted - actual wait| / "
          "actual wait.</p>\n<table>\n<tr><th>policy</th><th>jobs</th><th>coverage</th>"
          "<th>median relative error</th></tr>\n",
          out);
    for (int p = 0; p < r->npol; p++) {
        const policy_data *pd = &r->pol[p];
        if (!pd->have_eta)
            continue;
        fputs("<tr><td>", out);
        html_text(out, pd->name);
        fprintf(out, "</td><td>%zu</td>", pd->neta);
        if (pd->neta == 0) {
            fputs("<td>n/a</td><td>n/a</td></tr>\n", out);
            continue;
        }
        double *e = malloc(pd->neta * sizeof *e);
        if (!e)
            return lucid_error_set(err, "out of memory");
        for (size_t i = 0; i < pd->neta; i++)
            e[i] = fabs(pd->eta_pred[i] - pd->eta_wait[i]) / pd->eta_wait[i];
        qsort(e, pd->neta, sizeof *e, cmp_double);
        size_t n = pd->neta;
        double median = n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2;
        free(e);
        fprintf(out, "<td>%.1f %%</td><td>%.1f %%</td></tr>\n",
                100.0 * (double)pd->eta_inside / (double)n, 100 * median);
    }
    fputs("</table>\n", out);
    char path[4608];
    snprintf(path, sizeof path, "%s/eta_scatter.svg", r->figdir);
    return embed_svg(out, path, err);
}

static int write_page(const report *r, FILE *out, const char *const *models, int nmodels,
                      lucid_error *err)
{
    static const char *const figures[] = {"fig8_jct_cdf.svg", "fig9_vc_queue.svg",
                                          "gpu_utilisation.svg"};
    fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
                 "<title>Lucid report</title>\n<style>%s</style>\n</head>\n<body>\n",
            style);
    fputs("<h1>Lucid simulation report</h1>\n<p>Results in <code>", out);
    html_text(out, r->dir);
    fprintf(out, "</code>: %d policies, %d VCs. Times in seconds; large jobs use more than 8 "
                 "GPUs.</p>\n",
            r->npol, r->nvcs);
    run_section(out, r);
    table4(out, r);
    table5(out, r);
    int have_series = 0, rc = 0;
    for (int p = 0; p < r->npol; p++)
        have_series |= r->pol[p].nutil > 0;
    for (int f = 0; f < 3 && rc == 0; f++) {
        if (f == 2 && !have_series) {
            fputs("<p>No GPU utilisation: run <code>lucid simulate --series</code> for "
                  "series-&lt;policy&gt;.csv.</p>\n",
                  out);
            continue;
        }
        if (f == 2)
            fprintf(out, "<p>GPU utilisation: busy GPUs over all the cluster's GPUs, from the "
                         "start to the last job's end (%.1f days): the span of Table 4's GPU "
                         "utilisation, the last jobs' drain included.</p>\n",
                    r->series_days);
        char path[4608];
        snprintf(path, sizeof path, "%s/%s", r->figdir, figures[f]);
        rc = embed_svg(out, path, err);
    }
    if (rc == 0)
        rc = eta_section(out, r, err);
    for (int i = 0; i < nmodels && rc == 0; i++)
        rc = model_section(out, r, models[i], err);
    fputs("</body>\n</html>\n", out);
    return rc;
}

/* Every --model file is read before anything is written: a bad one fails
 * the run with the previous report in place. */
static int check_models(const char *const *models, int nmodels, lucid_error *err)
{
    for (int i = 0; i < nmodels; i++) {
        char kind[32];
        if (lucid_model_file_kind(models[i], kind, sizeof kind, err) < 0)
            return -1;
        if (strcmp(kind, "cart") == 0) {
            lucid_cart *tree = lucid_cart_load(models[i], err);
            if (!tree)
                return -1;
            lucid_cart_free(tree);
        } else if (strcmp(kind, "ebm") == 0) {
            lucid_ebm *m = lucid_ebm_load(models[i], err);
            if (!m)
                return -1;
            lucid_ebm_free(m);
        } else {
            return lucid_error_at(err, models[i], 0, "kind", "unknown model kind '%s'", kind);
        }
    }
    return 0;
}

/* The page must not replace a file the report reads. */
static int check_page_path(const report *r, const char *html, const char *const *models,
                           int nmodels, lucid_error *err)
{
    char paths[3 * MAX_POLICIES + 3][4352];
    const char *inputs[3 * MAX_POLICIES + 3 + MAX_MODELS];
    int n = 0;
    snprintf(paths[n++], sizeof paths[0], "%s/summary.csv", r->dir);
    snprintf(paths[n++], sizeof paths[0], "%s/%s", r->dir, LUCID_MANIFEST_NAME);
    snprintf(paths[n++], sizeof paths[0], "%s/experiment.ini", r->dir);
    for (int p = 0; p < r->npol; p++) {
        snprintf(paths[n++], sizeof paths[0], "%s/jobs-%s.csv", r->dir, r->pol[p].name);
        snprintf(paths[n++], sizeof paths[0], "%s/series-%s.csv", r->dir, r->pol[p].name);
        snprintf(paths[n++], sizeof paths[0], "%s/eta-%s.csv", r->dir, r->pol[p].name);
    }
    for (int i = 0; i < n; i++)
        inputs[i] = paths[i];
    for (int i = 0; i < nmodels; i++)
        inputs[n++] = models[i];
    return lucid_check_not_input(html, inputs, n, NULL, err);
}

static int build(report *r, const char *html, const char *const *models, int nmodels,
                 lucid_error *err)
{
    int have = lucid_manifest_load(&r->manifest, r->dir, err);
    if (have < 0)
        return -1;
    r->have_manifest = have == 0;
    if (read_summary(r, err) < 0)
        return -1;
    for (int p = 0; p < r->npol; p++)
        if (read_jobs(r, &r->pol[p], err) < 0)
            return -1;
    /* One time axis for every policy's utilisation: to the last end of all. */
    r->last_end = INT64_MIN;
    for (int p = 0; p < r->npol; p++)
        r->last_end = r->pol[p].last_end > r->last_end ? r->pol[p].last_end : r->last_end;
    for (int p = 0; p < r->npol; p++)
        if (read_series(r, &r->pol[p], err) < 0 || read_eta(r, &r->pol[p], err) < 0)
            return -1;
    if (check_page_path(r, html, models, nmodels, err) < 0 || check_models(models, nmodels, err) < 0)
        return -1;
    snprintf(r->figdir, sizeof r->figdir, "%s/report", r->dir);
    if (make_dir(r->figdir, err) < 0)
        return -1;
    char path[4608];
    snprintf(path, sizeof path, "%s/fig8_jct_cdf.svg", r->figdir);
    if (figure_cdf(r, path, err) < 0)
        return -1;
    snprintf(path, sizeof path, "%s/fig9_vc_queue.svg", r->figdir);
    if (figure_vc_queue(r, path, err) < 0)
        return -1;
    int have_series = 0;
    for (int p = 0; p < r->npol; p++)
        have_series |= r->pol[p].nutil > 0;
    snprintf(path, sizeof path, "%s/gpu_utilisation.svg", r->figdir);
    if (have_series && figure_utilisation(r, path, err) < 0)
        return -1;
    int have_eta = 0;
    for (int p = 0; p < r->npol; p++)
        have_eta |= r->pol[p].have_eta;
    snprintf(path, sizeof path, "%s/eta_scatter.svg", r->figdir);
    if (have_eta && figure_eta(r, path, err) < 0)
        return -1;
    /* Written whole or not at all: a failure keeps the previous page. */
    lucid_outfile page;
    FILE *out = lucid_outfile_open(&page, html, err);
    if (!out)
        return -1;
    if (write_page(r, out, models, nmodels, err) < 0) {
        lucid_outfile_abort(&page);
        return -1;
    }
    return lucid_outfile_commit(&page, err);
}

int cmd_report(int argc, char **argv)
{
    const char *dir = NULL, *html = NULL, *models[MAX_MODELS];
    int nmodels = 0;
    for (int i = 1; i < argc; i++) {
        const char *value = NULL;
        int got;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_text, stdout);
            return 0;
        }
        if ((got = cli_option(argc, argv, &i, "--out", &value)) != 0) {
            if (got < 0)
                return 2;
            html = value;
        } else if ((got = cli_option(argc, argv, &i, "--model", &value)) != 0) {
            if (got < 0)
                return 2;
            if (nmodels == MAX_MODELS)
                return cli_fail("report: at most %d --model files", MAX_MODELS), 2;
            models[nmodels++] = value;
        } else if (argv[i][0] == '-') {
            return cli_fail("report: unknown option '%s' (see lucid report --help)", argv[i]), 2;
        } else if (dir) {
            return cli_fail("report: more than one OUTDIR given ('%s')", argv[i]), 2;
        } else {
            dir = argv[i];
        }
    }
    if (!dir)
        return cli_fail("report: give the output directory of `lucid simulate` (lucid report "
                        "OUTDIR)"),
               2;
    char default_html[4352];
    if (!html) {
        snprintf(default_html, sizeof default_html, "%s/report.html", dir);
        html = default_html;
    }
    report r = {.dir = dir};
    lucid_error err = {{0}};
    int rc = 0;
    if (!(r.pol = calloc(MAX_POLICIES, sizeof *r.pol)))
        rc = cli_fail("out of memory");
    else if (build(&r, html, models, nmodels, &err) < 0)
        rc = cli_fail("%s", err.msg);
    else
        printf("report written to %s (figures in %s/)\n", html, r.figdir);
    report_free(&r);
    return rc;
}
