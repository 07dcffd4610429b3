/* cmd_tune.c — `lucid tune EXPERIMENT.ini`: Lucid's system tuner.  Searches
 * the profiler's time limit, scale (nodes) and GPU factor, the packing
 * switch's threshold, the pairing rules (priority ratio, score sum) and the
 * profiler's scale-down factor by simulating the lucid policy, several
 * simulations at a time on worker threads.
 *
 * The search is deterministic (nothing is random): first every knob alone
 * over its grid around the experiment's value (the sensitivity table), then
 * coordinate descent from the best point seen — each round simulates every
 * knob's grid neighbours and takes the best single move — and finally
 * midpoints between the best value and its neighbours.  Every simulated
 * point is remembered, so none runs twice; the budget counts simulations.
 * The tuned experiment is the original file with the tuned [lucid] keys
 * replaced (or added) and its paths made absolute. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "lucid/atomic.h"
#include "lucid/csv.h"
#include "lucid/util.h"

static const char usage_text[] =
    "usage: lucid tune EXPERIMENT.ini [options]\n"
    "\n"
    "Searches Lucid's knobs by simulating the lucid policy and writes the tuned\n"
    "experiment file.\n"
    "\n"
    "options:\n"
    "  --out FILE           tuned experiment file (default tuned.ini)\n"
    "  --threads N          simulations run at a time (default 2)\n"
    "  --budget N           at most N simulations (default 400)\n"
    "  --knobs LIST         search only these [lucid] keys (default all: profiler_time_limit,\n"
    "                       profiler_nodes, profiler_factor, pack_threshold, priority_ratio,\n"
    "                       score_sum, scale_down_factor, and for [lucid] models = online\n"
    "                       retrain_period)\n"
    "  --objective NAME     jct (average JCT, default) | queue (average queueing delay,\n"
    "                       comparable: the profiling run a job restarts after counts)\n"
    "  --extra-capacity     let profiler nodes beyond the experiment's be extra GPUs the\n"
    "                       baselines do not get (default: equal capacity, every profiler\n"
    "                       node the search adds is taken from a VC)\n"
    "  --quiet              only the best configuration\n";

enum { KNOB_I32, KNOB_I64, KNOB_F64, KNOB_PERIOD };
enum { MAX_GRID = 16 };

/* One tunable [lucid] key: where it lives in the simulator's config and the
 * grid searched around the experiment's own value (which is always added). */
typedef struct knob {
    const char *key;
    int kind;
    size_t offset; /* in lucid_sim_lucid_config */
    double grid[MAX_GRID];
    int ngrid;
} knob;

#define LC(f) offsetof(lucid_sim_lucid_config, f)

static const knob knobs[] = {
    {"profiler_time_limit", KNOB_I64, LC(profiler_time_limit), {50, 100, 200, 300, 450, 600, 900}, 7},
    {"profiler_nodes", KNOB_I32, LC(profiler_nodes), {1, 2, 3, 4, 6, 8}, 6},
    {"profiler_factor", KNOB_I32, LC(profiler_factor), {1, 2, 4, 6, 8}, 5},
    {"pack_threshold", KNOB_F64, LC(pack_threshold), {0.5, 1, 2, 3, 4, 6}, 6},
    {"priority_ratio", KNOB_F64, LC(priority_ratio), {1, 1.5, 2, 3, 4}, 5},
    {"score_sum", KNOB_I32, LC(score_sum), {1, 2, 3, 4}, 4},
    {"scale_down_factor", KNOB_F64, LC(scale_down_factor), {2, 3, 5, 8, 12}, 5},
    /* The update engine's period (online experiments only): 3.5, 7, 14 days. */
    {"retrain_period", KNOB_PERIOD, 0, {302400, 604800, 1209600}, 3},
};

enum { NKNOBS = (int)(sizeof knobs / sizeof knobs[0]), PERIOD_KNOB = NKNOBS - 1 };
enum { PROFILER_NODES_KNOB = 1 }; /* knobs[1] */

typedef struct point {
    double v[NKNOBS];
} point;

typedef struct evaluation {
    point p;
    int online; /* a real online run (models trained), not a replay */
    double avg_jct, avg_queue;
    int infeasible; /* no VC could give the profiler another node */
} evaluation;

typedef struct tuner {
    lucid_sim_config cfg; /* the experiment's; knobs overwritten per simulation */
    const cli_run *run;
    /* Online experiments: the scheduling knobs are searched on replays of
     * the first online run (its estimates, sharing scores and forecast as
     * inputs, cfg.online NULL), then the retrain period by online runs. */
    int online;         /* the experiment has [lucid] models = online */
    int stage_online;   /* evaluations now are online runs (else replays) */
    lucid_sim_result base_result;
    lucid_sim_inputs replay_in;
    /* The throughput forecast of each retrain period the online runs use,
     * built once before them: it does not depend on the schedule. */
    int64_t forecast_period[MAX_GRID + 1];
    lucid_forecast forecasts[MAX_GRID + 1];
    int nforecasts;
    const lucid_policy_ops *lucid;
    int threads, budget, objective_queue, quiet;
    /* Capacity: by default the profiler's nodes beyond those the
     * experiment adds to the cluster (extra_nodes, its profiler_nodes
     * minus its profiler_nodes_from) come out of the VCs (equal_capacity_
     * nodes); with extra_capacity they are added GPUs. */
    int extra_capacity;
    int32_t extra_nodes;
    int32_t *min_nodes; /* per VC: the nodes its largest job needs (at least 1) */
    int active[NKNOBS]; /* searched (the others keep the experiment's value) */
    double grid[NKNOBS][MAX_GRID + 1]; /* sorted, the experiment's value included */
    int ngrid[NKNOBS];
    evaluation *done; /* every simulated point */
    int ndone;
    int best; /* index into done */
    struct timespec t0; /* when tuning began */
    double cpu0;        /* the process's CPU seconds then */
} tuner;

static double knob_get(const lucid_sim_config *cfg, int k)
{
    if (knobs[k].kind == KNOB_PERIOD)
        return cfg->online ? (double)cfg->online->period : 604800.0;
    const char *base = (const char *)&cfg->lucid + knobs[k].offset;
    switch (knobs[k].kind) {
    case KNOB_I32: return *(const int32_t *)(const void *)base;
    case KNOB_I64: return (double)*(const int64_t *)(const void *)base;
    default: return *(const double *)(const void *)base;
    }
}

/* Sets knob k in cfg; the period goes to `oc` (cfg->online's copy). */
static void knob_set(lucid_sim_config *cfg, lucid_online_config *oc, int k, double v)
{
    if (knobs[k].kind == KNOB_PERIOD) {
        if (oc)
            oc->period = (int64_t)llround(v);
        return;
    }
    char *base = (char *)&cfg->lucid + knobs[k].offset;
    switch (knobs[k].kind) {
    case KNOB_I32: *(int32_t *)(void *)base = (int32_t)llround(v); break;
    case KNOB_I64: *(int64_t *)(void *)base = (int64_t)llround(v); break;
    default: *(double *)(void *)base = v;
    }
}

static void knob_text(int k, double v, char *buf, size_t size)
{
    if (knobs[k].kind == KNOB_F64)
        snprintf(buf, size, "%.15g", v);
    else
        snprintf(buf, size, "%lld", (long long)llround(v));
}

static double objective(const tuner *t, const evaluation *e)
{
    if (e->infeasible)
        return INFINITY;
    return t->objective_queue ? e->avg_queue : e->avg_jct;
}

/* The evaluation of `p` in the current stage (online run or replay). */
static int find_done(const tuner *t, const point *p)
{
    for (int i = 0; i < t->ndone; i++)
        if (t->done[i].online == t->stage_online && memcmp(t->done[i].p.v, p->v, sizeof p->v) == 0)
            return i;
    return -1;
}

/* Whether the experiment file accepts the value (so the tuned file can
 * always be read back). */
static int valid_value(int k, double v)
{
    char text[32];
    knob_text(k, v, text, sizeof text);
    lucid_experiment scratch;
    lucid_experiment_defaults(&scratch);
    lucid_error err = {{0}};
    int ok = lucid_experiment_set(&scratch, "lucid", knobs[k].key, text, ".", "tune", 0, &err) == 0;
    lucid_experiment_free(&scratch);
    return ok;
}

/* ---- simulating a batch of points on worker threads ---- */

/* The forecast built for `period`, or NULL (the run trains its own). */
static const lucid_forecast *forecast_for(const tuner *t, int64_t period)
{
    for (int i = 0; i < t->nforecasts; i++)
        if (t->forecast_period[i] == period)
            return &t->forecasts[i];
    return NULL;
}

typedef struct batch {
    const tuner *t;
    evaluation *items;
    int n, next, failed;
    lucid_error err;
    pthread_mutex_t lock;
} batch;

/* Equal capacity: which VC nodes a profiler of `profiler_nodes` nodes
 * takes, from the experiment's profiler_nodes_from by lucid_profiler_take
 * (each VC keeps its largest job's nodes).  Nodes the experiment itself
 * adds beyond its profiler_nodes_from (t->extra_nodes) stay added, no
 * more.  -1 when no VC can give a node. */
static int equal_capacity_nodes(const tuner *t, int32_t profiler_nodes, int32_t *out)
{
    const lucid_vcs *vcs = &t->run->vcs;
    for (int32_t v = 0; v < vcs->count; v++)
        out[v] = t->cfg.lucid.nodes_from ? t->cfg.lucid.nodes_from[v] : 0;
    int32_t want = profiler_nodes - t->extra_nodes;
    return lucid_profiler_take(vcs->nodes, t->min_nodes, vcs->count, want > 0 ? want : 0, out);
}

/* "vc:n,vc:n" of a profiler's nodes taken from the VCs (empty: none). */
static void nodes_from_text(const lucid_vcs *vcs, const int32_t *from, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t v = 0; v < vcs->count && used < size; v++)
        if (from[v] > 0)
            used += (size_t)snprintf(buf + used, size - used, "%s%s:%d", used ? "," : "",
                                     lucid_vcs_name(vcs, v), from[v]);
}

/* Simulates e->p: an online run (models trained) when e->online, else a
 * plain run (an online experiment's replay inputs when it has them).  The
 * result is kept in *keep when given (freed otherwise). */
static int simulate_point(const tuner *t, evaluation *e, lucid_sim_result *keep,
                          lucid_error *err)
{
    lucid_sim_config cfg = t->cfg;
    lucid_online_config oc = {0};
    const lucid_sim_inputs *in = &t->run->in;
    cfg.threads = 1;
    cfg.series = 0;
    if (t->online && e->online) {
        oc = *t->cfg.online;
        cfg.online = &oc;
    } else if (t->online) {
        cfg.online = NULL;
        in = &t->replay_in;
    }
    for (int k = 0; k < NKNOBS; k++)
        knob_set(&cfg, cfg.online ? &oc : NULL, k, e->p.v[k]);
    int32_t *from = NULL;
    if (!t->extra_capacity) {
        from = calloc((size_t)t->run->vcs.count + 1, sizeof *from);
        if (!from)
            return lucid_error_set(err, "out of memory");
        if (equal_capacity_nodes(t, cfg.lucid.profiler_nodes, from) < 0) {
            free(from);
            e->infeasible = 1;
            e->avg_jct = e->avg_queue = INFINITY;
            return 0;
        }
        cfg.lucid.nodes_from = from;
    }
    if (cfg.online)
        oc.forecast = forecast_for(t, oc.period);
    const lucid_policy_ops *policies[1] = {t->lucid};
    lucid_sim_result result;
    /* An online run takes tens of seconds: its progress shows (each run its
     * own line; runs on other threads print theirs). */
    cli_progress pv;
    cli_progress_start(&pv, "tune: online run");
    int quiet_run = t->quiet || !cfg.online;
    int failed = lucid_simulate(&cfg, in, policies, 1, &result,
                                quiet_run ? NULL : cli_progress_show, &pv, err) < 0;
    cli_progress_end(&pv);
    free(from);
    if (failed)
        return -1;
    lucid_summary s;
    int rc = lucid_summarize(&t->run->trace, &result, -1, 0, INT32_MAX, &s);
    e->avg_jct = s.avg_jct;
    e->avg_queue = s.avg_queue;
    if (keep && rc == 0)
        *keep = result;
    else
        lucid_sim_result_free(&result);
    if (rc < 0)
        return lucid_error_set(err, "cannot summarize the lucid run");
    return 0;
}

static void *batch_worker(void *arg)
{
    batch *b = arg;
    for (;;) {
        pthread_mutex_lock(&b->lock);
        int i = b->failed ? b->n : b->next++;
        pthread_mutex_unlock(&b->lock);
        if (i >= b->n)
            return NULL;
        lucid_error err = {{0}};
        if (simulate_point(b->t, &b->items[i], NULL, &err) < 0) {
            pthread_mutex_lock(&b->lock);
            if (!b->failed)
                b->err = err;
            b->failed = 1;
            pthread_mutex_unlock(&b->lock);
        }
    }
}

/* Simulates the points not seen before (in order, up to the budget) and
 * appends them to t->done.  Returns the number simulated, or -1. */
static int evaluate(tuner *t, const point *points, int n)
{
    evaluation *items = calloc((size_t)n + 1, sizeof *items);
    if (!items)
        return cli_fail("out of memory"), -1;
    int m = 0;
    for (int i = 0; i < n && t->ndone + m < t->budget; i++) {
        int dup = find_done(t, &points[i]) >= 0;
        items[m].online = t->stage_online;
        for (int j = 0; j < m && !dup; j++)
            dup = memcmp(items[j].p.v, points[i].v, sizeof points[i].v) == 0;
        if (!dup)
            items[m++].p = points[i];
    }
    batch b = {.t = t, .items = items, .n = m};
    pthread_mutex_init(&b.lock, NULL);
    int nthreads = t->threads < m ? t->threads : m;
    pthread_t tids[64];
    int started = 0;
    for (; started < nthreads; started++)
        if (pthread_create(&tids[started], NULL, batch_worker, &b) != 0)
            break;
    if (started == 0)
        batch_worker(&b);
    for (int i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    pthread_mutex_destroy(&b.lock);
    if (b.failed) {
        free(items);
        return cli_fail("%s", b.err.msg), -1;
    }
    memcpy(t->done + t->ndone, items, (size_t)m * sizeof *items);
    /* The first best wins ties, so the result does not depend on threads;
     * online runs and replays are compared only among themselves. */
    for (int i = 0; i < m; i++)
        if (t->best < 0 || t->done[t->best].online != t->stage_online ||
            objective(t, &t->done[t->ndone + i]) < objective(t, &t->done[t->best]))
            t->best = t->ndone + i;
    t->ndone += m;
    free(items);
    return m;
}

/* ---- the search ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void build_grids(tuner *t, const point *base)
{
    for (int k = 0; k < NKNOBS; k++) {
        int n = 0;
        for (int i = 0; i < knobs[k].ngrid; i++)
            if (valid_value(k, knobs[k].grid[i]))
                t->grid[k][n++] = knobs[k].grid[i];
        t->grid[k][n++] = base->v[k];
        qsort(t->grid[k], (size_t)n, sizeof(double), cmp_double);
        int u = 0;
        for (int i = 0; i < n; i++)
            if (u == 0 || t->grid[k][i] != t->grid[k][u - 1])
                t->grid[k][u++] = t->grid[k][i];
        t->ngrid[k] = u;
    }
}

static int grid_index(const tuner *t, int k, double v)
{
    for (int i = 0; i < t->ngrid[k]; i++)
        if (t->grid[k][i] == v)
            return i;
    return -1;
}

/* Phase 1: each knob alone over its grid. */
static int sweep(tuner *t, const point *base)
{
    point pts[NKNOBS * (MAX_GRID + 1) + 1];
    int n = 0;
    pts[n++] = *base;
    for (int k = 0; k < NKNOBS; k++)
        for (int i = 0; i < t->ngrid[k] && t->active[k]; i++) {
            pts[n] = *base;
            pts[n].v[k] = t->grid[k][i];
            n++;
        }
    return evaluate(t, pts, n) < 0 ? -1 : 0;
}

/* The best value of each knob in the sweep, all together. */
static int combine_sweep_bests(tuner *t, const point *base)
{
    point combined = *base;
    for (int k = 0; k < NKNOBS; k++) {
        double best = INFINITY;
        if (!t->active[k])
            continue;
        for (int i = 0; i < t->ndone; i++) {
            const evaluation *e = &t->done[i];
            int alone = 1;
            for (int j = 0; j < NKNOBS && alone; j++)
                alone = j == k || e->p.v[j] == base->v[j];
            if (alone && objective(t, e) < best) {
                best = objective(t, e);
                combined.v[k] = e->p.v[k];
            }
        }
    }
    return evaluate(t, &combined, 1) < 0 ? -1 : 0;
}

/* One move: every knob's neighbours (on the grid, or midpoints when
 * `refine`) from the best point.  Returns 1 if the best improved, 0 if not,
 * -1 on error; *simulated counts new simulations. */
static int descend_round(tuner *t, int refine, int *simulated)
{
    point from = t->done[t->best].p, pts[NKNOBS * 2];
    int n = 0;
    for (int k = 0; k < NKNOBS; k++) {
        int i = grid_index(t, k, from.v[k]);
        for (int side = -1; side <= 1 && t->active[k]; side += 2) {
            double v;
            if (!refine) {
                if (i < 0 || i + side < 0 || i + side >= t->ngrid[k])
                    continue;
                v = t->grid[k][i + side];
            } else {
                /* Halfway towards the nearest simulated value on this side. */
                double other = NAN;
                for (int g = 0; g < t->ngrid[k]; g++) {
                    double x = t->grid[k][g];
                    if ((side < 0 && x < from.v[k]) || (side > 0 && x > from.v[k]))
                        if (isnan(other) || fabs(x - from.v[k]) < fabs(other - from.v[k]))
                            other = x;
                }
                for (int e = 0; e < t->ndone; e++) {
                    double x = t->done[e].p.v[k];
                    if ((side < 0 && x < from.v[k]) || (side > 0 && x > from.v[k]))
                        if (isnan(other) || fabs(x - from.v[k]) < fabs(other - from.v[k]))
                            other = x;
                }
                if (isnan(other))
                    continue;
                v = (from.v[k] + other) / 2;
                if (knobs[k].kind != KNOB_F64)
                    v = (double)llround(v);
                if (v == from.v[k] || v == other || !valid_value(k, v))
                    continue;
            }
            pts[n] = from;
            pts[n].v[k] = v;
            n++;
        }
    }
    int before = t->best;
    int m = evaluate(t, pts, n);
    if (m < 0)
        return -1;
    *simulated = m;
    return t->best != before;
}

/* Two knobs moved together, each to a grid neighbour: 2 x 2 moves per pair
 * of knobs, for interactions a one-knob move cannot see. */
static int pair_round(tuner *t, int *simulated)
{
    point from = t->done[t->best].p;
    point *pts = malloc(sizeof *pts * NKNOBS * NKNOBS * 4);
    if (!pts)
        return cli_fail("out of memory"), -1;
    int n = 0;
    for (int a = 0; a < NKNOBS; a++)
        for (int b = a + 1; b < NKNOBS; b++) {
            int ia = grid_index(t, a, from.v[a]), ib = grid_index(t, b, from.v[b]);
            if (!t->active[a] || !t->active[b] || ia < 0 || ib < 0)
                continue;
            for (int sa = -1; sa <= 1; sa += 2)
                for (int sb = -1; sb <= 1; sb += 2) {
                    if (ia + sa < 0 || ia + sa >= t->ngrid[a] || ib + sb < 0 ||
                        ib + sb >= t->ngrid[b])
                        continue;
                    pts[n] = from;
                    pts[n].v[a] = t->grid[a][ia + sa];
                    pts[n].v[b] = t->grid[b][ib + sb];
                    n++;
                }
        }
    int before = t->best, m = evaluate(t, pts, n);
    free(pts);
    if (m < 0)
        return -1;
    *simulated = m;
    return t->best != before;
}

static void progress(const tuner *t, const char *phase, int round)
{
    if (!t->quiet)
        printf("%s round %d: %s %.3f s after %d simulations\n", phase, round,
               t->objective_queue ? "avg queue" : "avg JCT", objective(t, &t->done[t->best]),
               t->ndone);
}

/* Single moves until none helps, then (once) pair moves; repeat while pair
 * moves help; finally midpoints.  Returns 0 or -1. */
static int search(tuner *t, const point *base)
{
    if (sweep(t, base) < 0 || combine_sweep_bests(t, base) < 0)
        return -1;
    int round = 0;
    for (;;) {
        int simulated = 0, improved = 0;
        while (t->ndone < t->budget && (improved = descend_round(t, 0, &simulated)) > 0) {
            progress(t, "descent", ++round);
            if (simulated == 0)
                break;
        }
        if (improved < 0)
            return -1;
        if (t->ndone >= t->budget || (improved = pair_round(t, &simulated)) == 0)
            break;
        if (improved < 0)
            return -1;
        progress(t, "pair", ++round);
    }
    while (t->ndone < t->budget) {
        int simulated = 0, improved = descend_round(t, 1, &simulated);
        if (improved < 0)
            return -1;
        if (!improved || simulated == 0)
            break;
        progress(t, "refinement", ++round);
    }
    return 0;
}

/* ---- reporting ---- */

/* One knob at a time around `base`, from the evaluations of the current
 * stage; only knob `only` when it is >= 0. */
static void print_sensitivity(const tuner *t, const point *base, int only)
{
    for (int k = 0; k < NKNOBS; k++)
        for (int i = 0; i < t->ngrid[k] && t->active[k] && (only < 0 || k == only); i++) {
            point p = *base;
            p.v[k] = t->grid[k][i];
            int e = find_done(t, &p);
            if (e < 0)
                continue;
            char value[32];
            knob_text(k, p.v[k], value, sizeof value);
            if (p.v[k] == base->v[k])
                strcat(value, " *");
            printf("%-20s %10s %12.0f %12.0f\n", i == 0 ? knobs[k].key : "", value,
                   t->done[e].avg_jct, t->done[e].avg_queue);
        }
}

/* ---- the tuned experiment file ---- */

/* Path keys and where their resolved value is. */
typedef struct path_key {
    const char *section, *key;
    size_t offset;
} path_key;

#define EXP(f) offsetof(lucid_experiment, f)

static const path_key path_keys[] = {
    {"trace", "jobs", EXP(jobs)},
    {"trace", "vcs", EXP(vcs)},
    {"simulate", "out", EXP(out)},
    {"qssf", "estimates", EXP(qssf_estimates)},
    {"lucid", "estimates", EXP(lucid_estimates)},
    {"lucid", "forecast", EXP(forecast)},
    {"lucid", "sharing_labels", EXP(sharing_labels)},
    {"lucid", "colocation", EXP(colocation)},
    {"lucid", "history", EXP(history)},
};

static void absolute(const char *path, char *buf, size_t size)
{
    char real[PATH_MAX], cwd[PATH_MAX];
    if (realpath(path, real))
        snprintf(buf, size, "%s", real);
    else if (path[0] != '/' && getcwd(cwd, sizeof cwd))
        snprintf(buf, size, "%s/%s", cwd, path);
    else
        snprintf(buf, size, "%s", path);
}

static void write_missing_knobs(FILE *out, const point *best, int *written, int online,
                                const char *nodes_from, int *from_written)
{
    if (nodes_from && !*from_written) {
        fprintf(out, "profiler_nodes_from = %s\n", nodes_from);
        *from_written = 1;
    }
    for (int k = 0; k < NKNOBS; k++)
        if (!written[k] && (online || k != PERIOD_KNOB)) {
            char value[32];
            knob_text(k, best->v[k], value, sizeof value);
            fprintf(out, "%s = %s\n", knobs[k].key, value);
            written[k] = 1;
        }
}

/* One line of the original: a tuned key or a path gets its new value. */
static void write_line(FILE *out, const char *line, const char *section,
                       const lucid_experiment *exp, const point *best, int *written, int online,
                       const char *nodes_from, int *from_written)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", line);
    char *eq = strchr(buf, '=');
    char *first = lucid_trim(buf);
    if (!eq || *first == '#' || *first == ';') {
        fputs(line, out);
        return;
    }
    *eq = '\0';
    const char *key = lucid_trim(first);
    if (strcmp(section, "lucid") == 0 && nodes_from && strcmp(key, "profiler_nodes_from") == 0) {
        fprintf(out, "%s = %s\n", key, nodes_from);
        *from_written = 1;
        return;
    }
    if (strcmp(section, "lucid") == 0)
        for (int k = 0; k < NKNOBS; k++)
            if (strcmp(key, knobs[k].key) == 0 && (online || k != PERIOD_KNOB)) {
                char value[32];
                knob_text(k, best->v[k], value, sizeof value);
                fprintf(out, "%s = %s\n", key, value);
                written[k] = 1;
                return;
            }
    for (size_t i = 0; i < sizeof path_keys / sizeof path_keys[0]; i++)
        if (strcmp(section, path_keys[i].section) == 0 && strcmp(key, path_keys[i].key) == 0) {
            const char *v = *(char *const *)(const void *)((const char *)exp + path_keys[i].offset);
            if (v) {
                char abs[PATH_MAX + 64];
                absolute(v, abs, sizeof abs);
                fprintf(out, "%s = %s\n", key, abs);
                return;
            }
        }
    fputs(line, out);
}

/* nodes_from: the tuned profiler_nodes_from (NULL: the experiment's line
 * stays; "" is written as an empty value: no node taken). */
static int write_tuned(const char *path, const lucid_experiment *exp, const point *best,
                       const char *header, int online, const char *nodes_from)
{
    int from_written = 0;
    FILE *in = fopen(exp->path, "r");
    if (!in)
        return cli_fail("%s: cannot open: %s", exp->path, strerror(errno));
    lucid_outfile tuned;
    lucid_error err = {{0}};
    FILE *out = lucid_outfile_open(&tuned, path, &err);
    if (!out) {
        fclose(in);
        return cli_fail("%s", err.msg);
    }
    fputs(header, out);
    int written[NKNOBS] = {0}, in_lucid = 0, saw_lucid = 0;
    char section[64] = "", line[4096];
    while (fgets(line, sizeof line, in)) {
        char copy[4096];
        snprintf(copy, sizeof copy, "%s", line);
        char *s = lucid_trim(copy);
        if (s[0] == '[') {
            if (in_lucid)
                write_missing_knobs(out, best, written, online, nodes_from, &from_written);
            char *close = strchr(s, ']');
            if (close)
                *close = '\0';
            snprintf(section, sizeof section, "%s", lucid_trim(s + 1));
            in_lucid = strcmp(section, "lucid") == 0;
            saw_lucid |= in_lucid;
            fputs(line, out);
            continue;
        }
        write_line(out, line, section, exp, best, written, online, nodes_from, &from_written);
        if (line[strlen(line) - 1] != '\n')
            fputc('\n', out);
    }
    if (!saw_lucid)
        fputs("\n[lucid]\n", out);
    write_missing_knobs(out, best, written, online, nodes_from, &from_written);
    int bad = ferror(in) != 0;
    fclose(in);
    if (bad) {
        lucid_outfile_abort(&tuned);
        return cli_fail("%s: read failed", exp->path);
    }
    return lucid_outfile_commit(&tuned, &err) < 0 ? cli_fail("%s", err.msg) : 0;
}

/* ---- the command ---- */

typedef struct tune_opts {
    const char *experiment, *out, *knobs;
    int64_t threads, budget;
    int objective_queue, quiet, extra_capacity;
} tune_opts;

static int parse_args(int argc, char **argv, tune_opts *o)
{
    *o = (tune_opts){.out = "tuned.ini", .threads = 2, .budget = 400};
    for (int i = 1; i < argc; i++) {
        const char *value = NULL;
        int got;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_text, stdout);
            exit(0);
        }
        if (strcmp(argv[i], "--quiet") == 0) {
            o->quiet = 1;
        } else if (strcmp(argv[i], "--extra-capacity") == 0) {
            o->extra_capacity = 1;
        } else if ((got = cli_option(argc, argv, &i, "--out", &value)) != 0) {
            if (got < 0)
                return 2;
            o->out = value;
        } else if ((got = cli_option(argc, argv, &i, "--threads", &value)) != 0) {
            if (got < 0 || cli_int("--threads", value, &o->threads) < 0)
                return 2;
            if (o->threads < 1 || o->threads > 64)
                return cli_fail("option --threads: %lld is not between 1 and 64",
                                (long long)o->threads), 2;
        } else if ((got = cli_option(argc, argv, &i, "--budget", &value)) != 0) {
            if (got < 0 || cli_int("--budget", value, &o->budget) < 0)
                return 2;
            if (o->budget < 1 || o->budget > 100000)
                return cli_fail("option --budget: %lld is not between 1 and 100000",
                                (long long)o->budget), 2;
        } else if ((got = cli_option(argc, argv, &i, "--knobs", &value)) != 0) {
            if (got < 0)
                return 2;
            o->knobs = value;
        } else if ((got = cli_option(argc, argv, &i, "--objective", &value)) != 0) {
            if (got < 0)
                return 2;
            if (strcmp(value, "jct") != 0 && strcmp(value, "queue") != 0)
                return cli_fail("option --objective: '%s' is neither jct nor queue", value), 2;
            o->objective_queue = strcmp(value, "queue") == 0;
        } else if (argv[i][0] == '-') {
            return cli_fail("tune: unknown option '%s' (see lucid tune --help)", argv[i]), 2;
        } else if (o->experiment) {
            return cli_fail("tune: more than one experiment file given ('%s')", argv[i]), 2;
        } else {
            o->experiment = argv[i];
        }
    }
    if (!o->experiment)
        return cli_fail("tune: give an experiment file (lucid tune EXPERIMENT.ini)"), 2;
    return 0;
}

/* --knobs LIST into t->active (all when no list). */
static int parse_knobs(const char *list, tuner *t)
{
    for (int k = 0; k < NKNOBS; k++)
        t->active[k] = list == NULL;
    if (!list)
        return 0;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *item = strtok_r(buf, ", ", &save); item;
         item = strtok_r(NULL, ", ", &save)) {
        int k = 0;
        while (k < NKNOBS && strcmp(item, knobs[k].key) != 0)
            k++;
        if (k == NKNOBS)
            return cli_fail("option --knobs: '%s' is not a tunable [lucid] key (see lucid tune "
                            "--help)",
                            item), 2;
        t->active[k] = 1;
    }
    return 0;
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0->tv_nsec);
}

static double cpu_seconds(void)
{
    struct timespec cpu;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
    return (double)cpu.tv_sec + 1e-9 * (double)cpu.tv_nsec;
}

/* "[wall s, CPU s]" since tuning began, for the stage lines. */
static const char *stage_time(const tuner *t, char *buf, size_t size)
{
    snprintf(buf, size, "[%.1f s, %.1f s CPU]", seconds_since(&t->t0), cpu_seconds() - t->cpu0);
    return buf;
}

static const char sensitivity_head[] =
    "(lucid policy, all jobs; * = the experiment's value)\n"
    "knob                      value      avg JCT    avg queue\n";

/* The forecasts of the experiment's retrain period and, when it is
 * searched, of every period on its grid: the online runs differ in their
 * knobs, not in the forecast of a period, so each period's chain of
 * models is trained once here instead of in every run. */
static int build_forecasts(tuner *t, lucid_error *err)
{
    const lucid_online_config *oc = t->cfg.online;
    if (!oc->history)
        return 0;
    int n = 0;
    t->forecast_period[n++] = oc->period;
    for (int i = 0; i < t->ngrid[PERIOD_KNOB] && t->active[PERIOD_KNOB]; i++) {
        int64_t period = llround(t->grid[PERIOD_KNOB][i]);
        if (period != oc->period)
            t->forecast_period[n++] = period;
    }
    if (lucid_online_forecasts(oc, t->forecast_period, n, t->forecasts, err) < 0)
        return -1;
    t->nforecasts = n;
    return 0;
}

/* An online experiment: (1) one online run of the experiment's own
 * configuration; (2) the scheduling knobs searched on replays of that run
 * (its per-job estimates, sharing scores and forecast as inputs: exact for
 * the experiment's knobs, a surrogate elsewhere, since other knobs would
 * end other jobs before each retraining); (3) online runs of the best
 * replayed point with each retrain period.  The best online run wins, so
 * the reported numbers are those `lucid simulate` gives the tuned file. */
static int search_online(tuner *t, const point *base)
{
    lucid_error err = {{0}};
    char tbuf[64];
    if (build_forecasts(t, &err) < 0)
        return cli_fail("%s", err.msg);
    if (!t->quiet && t->nforecasts > 0)
        printf("load forecasts of %d retrain period%s built %s\n", t->nforecasts,
               t->nforecasts == 1 ? "" : "s", stage_time(t, tbuf, sizeof tbuf));
    t->stage_online = 1;
    t->done[0] = (evaluation){.p = *base, .online = 1};
    if (simulate_point(t, &t->done[0], &t->base_result, &err) < 0)
        return cli_fail("%s", err.msg);
    t->ndone = 1;
    t->best = 0;
    if (!t->quiet)
        printf("online run of the experiment: avg JCT %.3f s, avg queue %.3f s %s\n",
               t->done[0].avg_jct, t->done[0].avg_queue, stage_time(t, tbuf, sizeof tbuf));
    t->replay_in = t->run->in;
    t->replay_in.lucid_estimates = t->base_result.estimates;
    t->replay_in.lucid_share = t->base_result.share;
    t->replay_in.forecast = t->base_result.forecast.count ? &t->base_result.forecast : NULL;

    int period_active = t->active[PERIOD_KNOB], budget = t->budget;
    int reserve = period_active ? t->ngrid[PERIOD_KNOB] : 1;
    t->active[PERIOD_KNOB] = 0;
    t->budget = budget - reserve > t->ndone ? budget - reserve : t->ndone + 1;
    t->stage_online = 0;
    if (search(t, base) != 0)
        return -1;
    int replayed = find_done(t, base);
    if (!t->quiet && replayed >= 0)
        printf("replay check: the experiment's configuration replayed gives avg JCT %.3f s, "
               "online %.3f s (%s)\n",
               t->done[replayed].avg_jct, t->done[0].avg_jct,
               t->done[replayed].avg_jct == t->done[0].avg_jct &&
                       t->done[replayed].avg_queue == t->done[0].avg_queue
                   ? "identical"
                   : "DIFFERENT: the replay is not exact");
    if (!t->quiet)
        printf("replay search done after %d simulations %s\n", t->ndone,
               stage_time(t, tbuf, sizeof tbuf));
    point tuned = t->done[t->best].p;
    t->budget = budget;
    t->active[PERIOD_KNOB] = period_active;
    t->stage_online = 1;
    t->best = 0;
    point pts[MAX_GRID + 1];
    int n = 0;
    pts[n++] = tuned;
    for (int i = 0; i < t->ngrid[PERIOD_KNOB] && period_active; i++) {
        pts[n] = tuned;
        pts[n].v[PERIOD_KNOB] = t->grid[PERIOD_KNOB][i];
        n++;
    }
    if (evaluate(t, pts, n) < 0)
        return -1;
    if (!t->quiet)
        printf("online runs of the best replayed point: best avg JCT %.3f s, avg queue %.3f s "
               "after %d simulations %s\n",
               t->done[t->best].avg_jct, t->done[t->best].avg_queue, t->ndone,
               stage_time(t, tbuf, sizeof tbuf));
    return 0;
}

/* What equal capacity needs: each VC's smallest size (its largest job's
 * nodes) and the nodes the experiment's profiler adds to the cluster. */
static int capacity_setup(tuner *t)
{
    const lucid_vcs *vcs = &t->run->vcs;
    if (!(t->min_nodes = calloc((size_t)vcs->count + 1, sizeof *t->min_nodes)))
        return cli_fail("out of memory");
    int32_t gpn = t->cfg.gpus_per_node > 0 ? t->cfg.gpus_per_node : 8;
    for (int32_t v = 0; v < vcs->count; v++)
        t->min_nodes[v] = 1;
    for (size_t i = 0; i < t->run->trace.njobs; i++) {
        const lucid_job *job = &t->run->trace.jobs[i];
        int32_t need = (job->gpu_num + gpn - 1) / gpn;
        if (job->vc >= 0 && job->vc < vcs->count && need > t->min_nodes[job->vc])
            t->min_nodes[job->vc] = need;
    }
    int32_t taken = 0;
    for (int32_t v = 0; t->cfg.lucid.nodes_from && v < vcs->count; v++)
        taken += t->cfg.lucid.nodes_from[v];
    t->extra_nodes = t->cfg.lucid.profiler_nodes > taken ? t->cfg.lucid.profiler_nodes - taken : 0;
    return 0;
}

/* The capacity line of the result: what the best point's profiler takes
 * from the VCs, and any nodes it adds to the cluster. */
static void capacity_text(const tuner *t, const point *p, char *from, size_t from_size,
                          char *line, size_t size)
{
    int32_t nodes = (int32_t)llround(p->v[PROFILER_NODES_KNOB]);
    int32_t *taken = calloc((size_t)t->run->vcs.count + 1, sizeof *taken);
    from[0] = '\0';
    if (!taken) {
        snprintf(line, size, "capacity: unknown (out of memory)");
        return;
    }
    if (t->extra_capacity) {
        for (int32_t v = 0; t->cfg.lucid.nodes_from && v < t->run->vcs.count; v++)
            taken[v] = t->cfg.lucid.nodes_from[v];
    } else {
        (void)equal_capacity_nodes(t, nodes, taken);
    }
    nodes_from_text(&t->run->vcs, taken, from, from_size);
    int32_t sum = 0;
    for (int32_t v = 0; v < t->run->vcs.count; v++)
        sum += taken[v];
    free(taken);
    if (nodes > sum)
        snprintf(line, size,
                 "capacity: %s; the profiler's %d nodes take %d from the VCs (%s) and add %d "
                 "nodes (%d GPUs) the baselines do not get",
                 t->extra_capacity ? "extra capacity allowed (--extra-capacity)"
                                   : "equal to the experiment's",
                 nodes, sum, from[0] ? from : "none", nodes - sum,
                 (nodes - sum) * (t->cfg.gpus_per_node > 0 ? t->cfg.gpus_per_node : 8));
    else
        snprintf(line, size,
                 "capacity: equal to the baselines'; the profiler's %d nodes are taken from the "
                 "VCs (%s)",
                 nodes, from[0] ? from : "none");
}

static int tune(const tune_opts *o, const lucid_experiment *exp, tuner *t, cli_run *run)
{
    clock_gettime(CLOCK_MONOTONIC, &t->t0);
    t->cpu0 = cpu_seconds();
    t->lucid = lucid_policy_find("lucid");
    if (cli_run_config(exp, &t->cfg) != 0 || cli_run_load(exp, &t->lucid, 1, run, &t->cfg, 0) != 0)
        return 1;
    t->run = run;
    t->online = t->cfg.online != NULL;
    /* The tuner's queue objective is the comparable one whatever the
     * experiment's compat (the accounting changes no schedule). */
    t->cfg.sem.queue_waits_only = 0;
    if (capacity_setup(t) != 0)
        return 1;
    if (!t->online)
        t->active[PERIOD_KNOB] = 0; /* no update engine */
    point base;
    for (int k = 0; k < NKNOBS; k++)
        base.v[k] = knob_get(&t->cfg, k);
    build_grids(t, &base);
    if (!(t->done = calloc((size_t)t->budget + 2, sizeof *t->done)))
        return cli_fail("out of memory");
    if (!o->quiet)
        printf("tuning lucid on %s (%zu jobs): objective %s, budget %d simulations, %d at a time%s\n",
               exp->jobs, run->trace.njobs, t->objective_queue ? "avg queue" : "avg JCT",
               t->budget, t->threads,
               t->online ? "; models online: knobs searched on replays of one online run, then "
                           "the retrain period by online runs"
                         : "");
    if (!o->quiet)
        printf("%s\n", t->extra_capacity
                           ? "capacity: --extra-capacity: profiler nodes beyond the experiment's "
                             "are GPUs the baselines do not get"
                           : "capacity: equal to the experiment's: every profiler node the search "
                             "adds is taken from a VC (--extra-capacity to add GPUs instead)");
    if ((t->online ? search_online(t, &base) : search(t, &base)) != 0)
        return 1;
    double elapsed = seconds_since(&t->t0);
    const evaluation *best = &t->done[t->best], *start = &t->done[0];
    if (!o->quiet) {
        int stage = t->stage_online;
        t->stage_online = 0;
        if (t->online)
            printf("\nsensitivity: one knob at a time, the others at the experiment's values, on "
                   "replays of its online run\n%s",
                   sensitivity_head);
        else
            printf("\nsensitivity: one knob at a time, the others at the experiment's values\n%s",
                   sensitivity_head);
        int period_active = t->active[PERIOD_KNOB];
        t->active[PERIOD_KNOB] = 0; /* replays have the experiment's period */
        print_sensitivity(t, &base, -1);
        t->active[PERIOD_KNOB] = period_active;
        t->stage_online = stage;
        if (t->online && t->active[PERIOD_KNOB]) {
            point tuned = best->p;
            tuned.v[PERIOD_KNOB] = base.v[PERIOD_KNOB];
            printf("\nretrain period: online runs, the other knobs at their tuned values\n%s",
                   sensitivity_head);
            print_sensitivity(t, &tuned, PERIOD_KNOB);
        }
    }
    printf("\nbest configuration (%d simulations in %.1f s):\n", t->ndone, elapsed);
    char header[2048];
    int len = snprintf(header, sizeof header,
                       "# Tuned by `lucid tune` from %s (%d simulations, objective %s):\n"
                       "# lucid avg JCT %.3f s, avg queue %.3f s (experiment's values: %.3f s, "
                       "%.3f s);\n# its paths are absolute.\n",
                       exp->path, t->ndone, t->objective_queue ? "queue" : "jct", best->avg_jct,
                       best->avg_queue, start->avg_jct, start->avg_queue);
    for (int k = 0; k < NKNOBS; k++) {
        char value[32], was[32];
        if (k == PERIOD_KNOB && !t->online)
            continue;
        knob_text(k, best->p.v[k], value, sizeof value);
        knob_text(k, base.v[k], was, sizeof was);
        printf("  %-20s = %-8s (was %s)\n", knobs[k].key, value, was);
        if (len > 0 && (size_t)len < sizeof header)
            len += snprintf(header + len, sizeof header - (size_t)len, "#   %s = %s (was %s)\n",
                            knobs[k].key, value, was);
    }
    char from[1024], capacity[1536];
    capacity_text(t, &best->p, from, sizeof from, capacity, sizeof capacity);
    printf("%s\n", capacity);
    if (len > 0 && (size_t)len < sizeof header)
        len += snprintf(header + len, sizeof header - (size_t)len, "# %s\n", capacity);
    printf("best lucid avg_jct=%.3f avg_queue=%.3f (experiment's values: avg_jct=%.3f "
           "avg_queue=%.3f; %+.1f%% %s)\n",
           best->avg_jct, best->avg_queue, start->avg_jct, start->avg_queue,
           100.0 * (objective(t, best) - objective(t, start)) / objective(t, start),
           t->objective_queue ? "avg queue" : "avg JCT");
    if (write_tuned(o->out, exp, &best->p, header, t->online,
                    t->extra_capacity ? NULL : from) != 0)
        return 1;
    printf("tuned experiment written to %s\n", o->out);
    return 0;
}

int cmd_tune(int argc, char **argv)
{
    /* Stage lines appear as each stage ends, also in a pipe or a log. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    tune_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc != 0)
        return rc;
    lucid_experiment exp;
    lucid_experiment_defaults(&exp);
    lucid_error err = {{0}};
    if (lucid_experiment_load(&exp, o.experiment, &err) < 0) {
        lucid_experiment_free(&exp);
        return cli_fail("%s", err.msg);
    }
    /* Checked before the search, not after minutes of it: the tuned file
     * must not replace the experiment or any file it reads. */
    const char *inputs[64], *what[64];
    int ninputs = lucid_experiment_inputs(&exp, inputs, what, 64);
    if (lucid_check_not_input(o.out, inputs, ninputs, what, &err) < 0) {
        lucid_experiment_free(&exp);
        return cli_fail("%s", err.msg);
    }
    tuner t = {.threads = (int)o.threads, .budget = (int)o.budget,
               .objective_queue = o.objective_queue, .quiet = o.quiet,
               .extra_capacity = o.extra_capacity, .best = -1};
    if ((rc = parse_knobs(o.knobs, &t)) != 0) {
        lucid_experiment_free(&exp);
        return rc;
    }
    cli_run run;
    memset(&run, 0, sizeof run);
    rc = tune(&o, &exp, &t, &run);
    free(t.done);
    free(t.min_nodes);
    for (int i = 0; i < t.nforecasts; i++)
        lucid_forecast_free(&t.forecasts[i]);
    lucid_sim_result_free(&t.base_result);
    cli_run_free(&run);
    lucid_experiment_free(&exp);
    return rc;
}
