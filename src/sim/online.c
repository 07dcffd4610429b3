/* online.c — Lucid's three models trained and applied inside the simulator
 * (online.h), on top of the model library (dataset.h, ebm.h, cart.h,
 * features.h).  Hyper-parameters are Lucid's (spec lucid.md §6, models.md):
 * duration GA2M with learning rate 0.01, uniform binning, 20 pairs, fitted
 * to log1p(duration) with the users' recent jobs as features
 * (lucid_duration_model_params, lucid_features_duration_history);
 * throughput GA2Ms with learning rate 0.1, quantile binning, 10 pairs;
 * sharing tree pruned at alpha 1e-4. */
#include "lucid/online.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/cart.h"
#include "lucid/csv.h"
#include "lucid/ebm.h"
#include "lucid/explain.h"
#include "lucid/features.h"

struct lucid_online {
    lucid_online_config cfg;
    const lucid_trace *trace;
    lucid_dataset *duration;   /* features of every trace row (owns the jobs' strings) */
    lucid_duration_job *jobs;  /* per dataset row: the job, submit_time in calendar time */
    int64_t *row_of_job;       /* trace index -> duration dataset row (-1 if none) */
    lucid_ebm *model;
    int64_t first_now;   /* the first estimate's time: period boundaries from there */
    int have_first;
    int trainings;
    size_t last_rows;
    int64_t last_now;    /* when the current model was trained (its rows ended before) */
    int64_t watch;       /* trace index whose estimate is explained, -1 */
    char why[1024];
};

void lucid_online_watch(lucid_online *o, int64_t job) { o->watch = job; }
const char *lucid_online_why(const lucid_online *o) { return o->why; }

/* The watched job's estimate as intercept + its five largest terms (the
 * line lucidd gives for its own estimates, explain.h). */
static void explain_estimate(lucid_online *o, const lucid_dataset *one, double estimate)
{
    int used = snprintf(o->why, sizeof o->why,
                        "duration model #%d (trained on %zu ended jobs): %.0f s = ", o->trainings,
                        o->last_rows, estimate);
    if (used < 0 || (size_t)used >= sizeof o->why)
        return;
    lucid_error err = {{0}};
    char *terms = o->why + used;
    size_t size = sizeof o->why - (size_t)used;
    if (lucid_explain_terms_line(o->model, one, 5, terms, size, &err) < 0)
        snprintf(terms, size, "(%.300s)", err.msg);
}

/* A GA2M's settings: the library defaults, Lucid's learning rate, pairs
 * and binning, the config's bags and seed. */
static void ga2m_params(const lucid_online_config *cfg, double learning_rate, int interactions,
                        lucid_binning binning, lucid_ebm_params *p)
{
    lucid_ebm_default_params(p);
    p->learning_rate = learning_rate;
    p->interactions = interactions;
    p->binning = binning;
    p->outer_bags = cfg->bags;
    p->seed = cfg->seed;
}

static void duration_params(const lucid_online_config *cfg, lucid_ebm_params *p)
{
    lucid_duration_model_params(p);
    p->outer_bags = cfg->bags;
    p->seed = cfg->seed;
}

/* Sharing scores: the tree trained on the labelled workloads, applied to
 * every job's measured metrics (its workload's co-location speed when
 * measured, as in training). */
static int predict_sharing(const lucid_online_config *cfg, const lucid_trace *trace,
                           int32_t *share, lucid_error *err)
{
    lucid_dataset *labels = lucid_features_sharing(cfg->sharing_labels, cfg->colocation, err);
    if (!labels)
        return -1;
    lucid_cart *tree = lucid_cart_train(labels, 1e-4, cfg->seed, err);
    int rc = tree ? 0 : -1;
    lucid_dataset *jobs = rc == 0 ? lucid_dataset_new(trace->njobs, err) : NULL;
    double *cols[6];
    for (int c = 0; c < 6; c++)
        cols[c] = calloc(trace->njobs + 1, sizeof(double));
    double *pred = calloc(trace->njobs + 1, sizeof *pred);
    if (rc == 0 && (!jobs || !pred || !cols[0] || !cols[1] || !cols[2] || !cols[3] || !cols[4] || !cols[5]))
        rc = jobs ? lucid_error_set(err, "out of memory") : -1;
    int c_amp = lucid_dataset_find(labels, "amp"), c_speed = lucid_dataset_find(labels, "avg_speed"),
        c_auto = lucid_dataset_find(labels, "auto_label");
    for (size_t i = 0; rc == 0 && i < trace->njobs; i++) {
        const lucid_job *j = &trace->jobs[i];
        cols[0][i] = j->workload.amp >= 0 ? (double)j->workload.amp : (double)NAN;
        cols[1][i] = j->gpu_util;
        cols[2][i] = j->gmem_util;
        cols[3][i] = j->gmem;
        cols[4][i] = 0;
        cols[5][i] = 0;
        /* avg_speed / auto_label come from co-location measurements of the
         * workload: copy them from the labelled row of the same workload. */
        char key[256];
        snprintf(key, sizeof key, "%s/%s/%d/%d",
                 j->workload.model >= 0 ? lucid_strtab_get(trace->strings, j->workload.model) : "",
                 j->workload.dataset >= 0 ? lucid_strtab_get(trace->strings, j->workload.dataset) : "",
                 j->workload.batchsize, j->workload.amp);
        for (size_t r = 0; labels->row_keys && r < labels->nrows; r++)
            if (strcmp(labels->row_keys[r], key) == 0) {
                if (c_speed >= 0)
                    cols[4][i] = labels->cols[c_speed].values[r];
                if (c_auto >= 0)
                    cols[5][i] = labels->cols[c_auto].values[r];
                break;
            }
    }
    (void)c_amp;
    static const char *const names[6] = {"amp", "gpu_util", "gmem_util", "gmem", "avg_speed",
                                         "auto_label"};
    for (int c = 0; rc == 0 && c < 6; c++)
        if (lucid_dataset_find(labels, names[c]) >= 0)
            rc = lucid_dataset_add_numeric(jobs, names[c], cols[c], err);
    if (rc == 0)
        rc = lucid_cart_predict(tree, jobs, pred, err);
    for (size_t i = 0; rc == 0 && i < trace->njobs; i++)
        share[i] = pred[i] < 0.5 ? 0 : pred[i] < 1.5 ? 1 : 2;
    for (int c = 0; c < 6; c++)
        free(cols[c]);
    free(pred);
    lucid_dataset_free(jobs);
    lucid_cart_free(tree);
    lucid_dataset_free(labels);
    return rc;
}

/* The first row at least `period` s after row `week`: the end of the rows
 * predicted by the model trained on the rows before `week`. */
static size_t period_end(const int64_t *times, size_t week, size_t nrows, int64_t period)
{
    size_t until = week;
    while (until < nrows && times[until] < times[week] + period)
        until++;
    return until;
}

void lucid_online_forecast_params(const lucid_online_config *cfg, lucid_ebm_params *p)
{
    ga2m_params(cfg, 0.1, 10, LUCID_BIN_QUANTILE, p);
    /* A week adds 4 % to the forecasters' rows: 20 warm rounds at their
     * rate 0.1 (from scratch they stop after 50-170) are enough, and the
     * tuner builds 22 such models (docs/online.md). */
    p->warm_rounds = 20;
}

/* The forecasts of several retraining periods at once.  Period i cuts the
 * window at rows first = w0 < w1 < ... (each the first row a period after
 * the one before); the model trained on rows [0, w) predicts rows
 * [w, next cut).  The model at w0 is trained from scratch, once per target
 * for every period; each later one is warm-started from the period's
 * model at the cut before (lucid_ebm_train_warm: the rows up to that cut
 * are the ones it saw; from scratch with cfg->full_retrain), so a
 * period's chain depends only on the period:
 * out[i] is what period i alone gets.  The trainings run on two worker
 * threads (one EBM thread each): first the two scratch models, then the
 * chains (target x distinct period), each writing only its own rows. */
typedef struct fc_plan {
    const lucid_online_config *cfg;
    lucid_dataset *ds[2];    /* features of submit_gpu_job, submit_gpu_num */
    double **out[2];         /* [target][period]: rows from `first` */
    const int64_t *periods;
    int nperiods;
    int *uniq;               /* the periods with a chain (first of equal values) */
    int nuniq;
    const int64_t *times;
    size_t first, nrows;
    lucid_ebm *scratch[2];   /* the models at `first` */
    int phase;               /* 0: the scratch models; 1: the chains */
    size_t next;             /* the next job of the phase */
    int failed;
    lucid_error err;
    pthread_mutex_t lock;
} fc_plan;

/* Copies the predictions of rows [w, period i's next cut) into out[i]. */
static size_t fc_copy(fc_plan *pl, int target, int i, size_t w, const double *pred)
{
    size_t until = period_end(pl->times, w, pl->nrows, pl->periods[i]);
    memcpy(pl->out[target][i] + (w - pl->first), pred + w, (until - w) * sizeof *pred);
    return until;
}

static int fc_scratch(fc_plan *pl, int target, const size_t *rows, lucid_error *err)
{
    lucid_ebm_params p;
    lucid_online_forecast_params(pl->cfg, &p);
    p.threads = 1;
    lucid_dataset *train = lucid_dataset_subset(pl->ds[target], rows, pl->first, err);
    pl->scratch[target] = train ? lucid_ebm_train(train, &p, err) : NULL;
    lucid_dataset_free(train);
    return pl->scratch[target] ? 0 : -1;
}

/* Period i's chain for one target. */
static int fc_chain(fc_plan *pl, int target, int i, const size_t *rows, double *pred,
                    lucid_error *err)
{
    lucid_ebm_params p;
    lucid_online_forecast_params(pl->cfg, &p);
    p.threads = 1;
    lucid_dataset *ds = pl->ds[target];
    const lucid_ebm *prev = pl->scratch[target];
    lucid_ebm *own = NULL; /* prev when this chain trained it */
    size_t w = pl->first;
    int rc = lucid_ebm_predict(prev, ds, pred, err);
    while (rc == 0) {
        size_t next = fc_copy(pl, target, i, w, pred);
        if (next >= pl->nrows)
            break;
        lucid_dataset *train = lucid_dataset_subset(ds, rows, next, err);
        /* full_retrain: every model from scratch, as before warm starts. */
        const lucid_ebm *start = pl->cfg->full_retrain ? NULL : prev;
        lucid_ebm *m = train ? lucid_ebm_train_warm(train, &p, start, w, err) : NULL;
        lucid_dataset_free(train);
        rc = m && lucid_ebm_predict(m, ds, pred, err) == 0 ? 0 : -1;
        lucid_ebm_free(own);
        prev = own = m;
        w = next;
    }
    lucid_ebm_free(own);
    return rc;
}

static void *fc_worker(void *arg)
{
    fc_plan *pl = arg;
    size_t n = pl->nrows;
    size_t *rows = malloc((n + 1) * sizeof *rows);
    double *pred = malloc((n + 1) * sizeof *pred);
    for (size_t r = 0; rows && r < n; r++)
        rows[r] = r;
    size_t jobs = pl->phase == 0 ? 2 : 2 * (size_t)pl->nuniq;
    for (;;) {
        pthread_mutex_lock(&pl->lock);
        size_t job = pl->failed ? jobs : pl->next++;
        pthread_mutex_unlock(&pl->lock);
        if (job >= jobs)
            break;
        lucid_error err = {{0}};
        int rc = rows && pred ? 0 : lucid_error_set(&err, "out of memory");
        if (rc == 0)
            rc = pl->phase == 0 ? fc_scratch(pl, (int)job, rows, &err)
                                : fc_chain(pl, (int)(job % 2), pl->uniq[job / 2], rows, pred, &err);
        if (rc < 0) {
            pthread_mutex_lock(&pl->lock);
            if (!pl->failed)
                pl->err = err;
            pl->failed = 1;
            pthread_mutex_unlock(&pl->lock);
        }
    }
    free(rows);
    free(pred);
    return NULL;
}

static int forecast_all(fc_plan *pl, lucid_error *err)
{
    static const char *const targets[2] = {"submit_gpu_job", "submit_gpu_num"};
    int rc = 0;
    for (int k = 0; k < 2 && rc == 0; k++) {
        int64_t *t2 = NULL;
        if (!(pl->ds[k] = lucid_features_throughput(pl->cfg->history, targets[k], &t2, err)))
            rc = -1;
        else if (pl->ds[k]->nrows != pl->nrows)
            rc = lucid_error_set(err, "%s: the two targets' feature rows differ",
                                 pl->cfg->history);
        free(t2);
    }
    if (rc == 0 && !(pl->uniq = malloc((size_t)pl->nperiods * sizeof *pl->uniq)))
        rc = lucid_error_set(err, "out of memory");
    for (int i = 0; rc == 0 && i < pl->nperiods; i++) {
        int j = 0;
        while (j < i && pl->periods[j] != pl->periods[i])
            j++;
        if (j == i)
            pl->uniq[pl->nuniq++] = i;
    }
    if (rc == 0) {
        pthread_mutex_init(&pl->lock, NULL);
        for (pl->phase = 0; pl->phase < 2 && !pl->failed; pl->phase++) {
            pl->next = 0;
            pthread_t tid;
            int threaded = pthread_create(&tid, NULL, fc_worker, pl) == 0;
            fc_worker(pl);
            if (threaded)
                pthread_join(tid, NULL);
        }
        pthread_mutex_destroy(&pl->lock);
        if (pl->failed) {
            *err = pl->err;
            rc = -1;
        }
    }
    /* Equal periods share the first one's chain. */
    for (int i = 0; rc == 0 && i < pl->nperiods; i++)
        for (int j = 0; j < i; j++)
            if (pl->periods[j] == pl->periods[i]) {
                for (int k = 0; k < 2; k++)
                    memcpy(pl->out[k][i], pl->out[k][j],
                           (pl->nrows - pl->first) * sizeof *pl->out[k][i]);
                break;
            }
    free(pl->uniq);
    lucid_ebm_free(pl->scratch[0]);
    lucid_ebm_free(pl->scratch[1]);
    lucid_dataset_free(pl->ds[0]);
    lucid_dataset_free(pl->ds[1]);
    return rc;
}

int lucid_online_forecasts(const lucid_online_config *cfg, const int64_t *periods, int nperiods,
                           lucid_forecast *out, lucid_error *err)
{
    for (int i = 0; i < nperiods; i++)
        memset(&out[i], 0, sizeof out[i]);
    if (!cfg->history)
        return 0;
    for (int i = 0; i < nperiods; i++)
        if (periods[i] <= 0)
            return lucid_error_set(err, "retrain period %lld s: must be positive",
                                   (long long)periods[i]);
    if (nperiods <= 0)
        return 0;
    int64_t *times = NULL;
    lucid_dataset *probe = lucid_features_throughput(cfg->history, "submit_gpu_job", &times, err);
    if (!probe)
        return -1;
    size_t nrows = probe->nrows, first = 0;
    lucid_dataset_free(probe);
    while (first < nrows && times[first] < cfg->window_start)
        first++;
    if (first == 0 || first == nrows) {
        free(times);
        return lucid_error_set(err, "%s: needs rows before and after the simulation start",
                               cfg->history);
    }
    size_t n = nrows - first;
    fc_plan pl = {.cfg = cfg, .periods = periods, .nperiods = nperiods, .times = times,
                  .first = first, .nrows = nrows};
    pl.out[0] = malloc((size_t)nperiods * sizeof *pl.out[0]);
    pl.out[1] = malloc((size_t)nperiods * sizeof *pl.out[1]);
    int rc = pl.out[0] && pl.out[1] ? 0 : lucid_error_set(err, "out of memory");
    for (int i = 0; rc == 0 && i < nperiods; i++) {
        lucid_forecast *fc = &out[i];
        fc->offset = malloc(n * sizeof *fc->offset);
        fc->pred_gpu_job = malloc(n * sizeof *fc->pred_gpu_job);
        fc->pred_gpu_num = malloc(n * sizeof *fc->pred_gpu_num);
        if (!fc->offset || !fc->pred_gpu_job || !fc->pred_gpu_num) {
            rc = lucid_error_set(err, "out of memory");
            break;
        }
        /* Row times relative to the simulation start's calendar time. */
        for (size_t r = 0; r < n; r++)
            fc->offset[r] = times[first + r] - cfg->window_start;
        fc->count = n;
        pl.out[0][i] = fc->pred_gpu_job;
        pl.out[1][i] = fc->pred_gpu_num;
    }
    if (rc == 0)
        rc = forecast_all(&pl, err);
    free(pl.out[0]);
    free(pl.out[1]);
    free(times);
    for (int i = 0; rc < 0 && i < nperiods; i++)
        lucid_forecast_free(&out[i]);
    return rc;
}

/* The run's forecast: a copy of the one given (built once for several
 * runs), else trained for this run's period alone. */
static int build_forecast(const lucid_online_config *cfg, lucid_forecast *fc, lucid_error *err)
{
    if (cfg->forecast)
        return lucid_forecast_copy(fc, cfg->forecast, err);
    return lucid_online_forecasts(cfg, &cfg->period, 1, fc, err);
}

/* The jobs of the trace rows, rebuilt from their feature columns (the
 * strings stay the dataset's) with the calendar submit times, so that the
 * features of a job can be built again against the jobs the simulated run
 * has ended (lucid_features_duration_history). */
static int duration_jobs(lucid_online *o, const int64_t *times)
{
    const lucid_dataset *ds = o->duration;
    o->jobs = calloc(ds->nrows + 1, sizeof *o->jobs);
    if (!o->jobs)
        return -1;
    static const char *const nums[7] = {"gpu_num", "cpu_num",   "amp", "gpu_util",
                                        "gmem_util", "gmem", NULL};
    const lucid_column *col[8] = {0};
    for (int k = 0; nums[k]; k++) {
        int c = lucid_dataset_find(ds, nums[k]);
        col[k] = c >= 0 ? &ds->cols[c] : NULL;
    }
    int cu = lucid_dataset_find(ds, "user"), cv = lucid_dataset_find(ds, "vc");
    for (size_t r = 0; r < ds->nrows; r++) {
        lucid_duration_job *j = &o->jobs[r];
        double v[6];
        for (int k = 0; k < 6; k++)
            v[k] = col[k] && col[k]->values ? col[k]->values[r] : (double)NAN;
        const lucid_column *u = cu >= 0 ? &ds->cols[cu] : NULL, *vc = cv >= 0 ? &ds->cols[cv] : NULL;
        *j = (lucid_duration_job){
            .key = ds->row_keys ? ds->row_keys[r] : NULL,
            .user = u && u->ids && u->ids[r] >= 0 ? lucid_strtab_get(u->strings, u->ids[r]) : NULL,
            .vc = vc && vc->ids && vc->ids[r] >= 0 ? lucid_strtab_get(vc->strings, vc->ids[r]) : NULL,
            .gpu_num = v[0], .cpu_num = v[1], .amp = v[2], .gpu_util = v[3], .gmem_util = v[4],
            .gmem = v[5], .submit_time = times[r],
            .duration = ds->target ? ds->target[r] : (double)NAN};
    }
    return 0;
}

lucid_online *lucid_online_new(const lucid_online_config *cfg, const lucid_trace *trace,
                               int32_t *share, lucid_forecast *forecast, lucid_error *err)
{
    lucid_online *o = calloc(1, sizeof *o);
    if (!o) {
        lucid_error_set(err, "out of memory");
        return NULL;
    }
    o->cfg = *cfg;
    o->trace = trace;
    o->watch = -1;
    int64_t *times = NULL;
    o->duration = lucid_features_duration(cfg->trace_path, &times, err);
    o->row_of_job = malloc((trace->njobs + 1) * sizeof *o->row_of_job);
    if (o->duration && o->row_of_job && duration_jobs(o, times) < 0)
        lucid_error_set(err, "out of memory");
    free(times);
    if (!o->duration || !o->row_of_job || !o->jobs) {
        if (o->duration && !o->jobs)
            lucid_error_set(err, "out of memory");
        lucid_online_free(o);
        return NULL;
    }
    for (size_t i = 0; i < trace->njobs; i++)
        o->row_of_job[i] = -1;
    for (size_t r = 0; o->duration->row_keys && r < o->duration->nrows; r++) {
        int64_t id, i;
        if (lucid_parse_i64(o->duration->row_keys[r], &id) == 0 &&
            (i = lucid_trace_find(trace, id)) >= 0)
            o->row_of_job[i] = (int64_t)r;
    }
    memset(forecast, 0, sizeof *forecast);
    if ((cfg->sharing_labels && predict_sharing(cfg, trace, share, err) < 0) ||
        build_forecast(cfg, forecast, err) < 0) {
        lucid_online_free(o);
        return NULL;
    }
    return o;
}

void lucid_online_free(lucid_online *o)
{
    if (!o)
        return;
    lucid_dataset_free(o->duration);
    free(o->jobs);
    free(o->row_of_job);
    lucid_ebm_free(o->model);
    free(o);
}

int lucid_online_trainings(const lucid_online *o, size_t *last_rows)
{
    if (last_rows)
        *last_rows = o->last_rows;
    return o->trainings;
}

int64_t lucid_online_step(const lucid_online_config *cfg)
{
    int64_t period = cfg->period > 0 ? cfg->period : 604800;
    return cfg->estimate_period > 0 && cfg->estimate_period < period ? cfg->estimate_period
                                                                     : period;
}

/* Trace job i as a feature row: calendar times, and its end in the
 * simulated run when it has ended before `now` (trace timeline). */
static lucid_duration_job job_row(const lucid_online *o, const lucid_jobresult *run, size_t i,
                                  int64_t now)
{
    lucid_duration_job j = o->jobs[o->row_of_job[i]];
    int64_t shift = j.submit_time - o->trace->jobs[i].submit_time; /* trace -> calendar */
    if (run[i].end_time >= 0 && run[i].end_time < now)
        j.end_time = run[i].end_time + shift;
    return j;
}

int lucid_online_estimate(lucid_online *o, const lucid_jobresult *run, int64_t now,
                          const int32_t *jobs, size_t njobs, double *estimates, lucid_error *err)
{
    const lucid_trace *trace = o->trace;
    /* The jobs the run has ended before now: the training rows, and the
     * users' histories every feature row is built against — each job to
     * estimate from those ended before now (it is estimated now, before it
     * arrives), each training row likewise from those ended before the
     * start of its own step (measured on Venus with weekly steps, fixed
     * semantics: online Lucid 13,036 s; with the history up to each
     * training row's submission instead, 13,080 s — the model then learns
     * from fresher histories than it is given). */
    lucid_duration_job *ended = malloc((trace->njobs + 1) * sizeof *ended);
    lucid_duration_job *query = malloc((njobs + 1) * sizeof *query);
    if (!ended || !query) {
        free(ended);
        free(query);
        return lucid_error_set(err, "out of memory");
    }
    if (!o->have_first) {
        o->first_now = now;
        o->have_first = 1;
    }
    int64_t period = o->cfg.period > 0 ? o->cfg.period : 604800;
    int64_t step = lucid_online_step(&o->cfg);
    size_t n = 0, seen = 0;
    /* A warm start needs the rows its start model was trained on first
     * (lucid_ebm_train_warm draws validation rows from the others): pass 0
     * takes the jobs that had ended when that model was trained, pass 1
     * the rest.  From scratch, one pass in trace order, as always. */
    int warm = !o->cfg.full_retrain && o->model;
    for (int pass = warm ? 0 : 1; pass < 2; pass++) {
        if (pass == 1)
            seen = n;
        for (size_t i = 0; i < trace->njobs; i++) {
            if (run[i].end_time < 0 || run[i].end_time >= now || o->row_of_job[i] < 0 ||
                (warm && (run[i].end_time < o->last_now) != (pass == 0)))
                continue;
            ended[n] = job_row(o, run, i, now);
            /* As a training row, the job is seen as it was when it was
             * estimated: at the start of the step it arrived in (the
             * users' histories as of then), so that the model learns from
             * the features it will be given. */
            int64_t s = trace->jobs[i].submit_time;
            if (s >= o->first_now)
                ended[n].known_at = o->first_now + (s - o->first_now) / step * step +
                                    (ended[n].submit_time - s);
            n++;
        }
    }
    int rc = 0;
    /* Estimates are made every step (a day), models trained less often:
     * the first as soon as min_history jobs have ended, then one at the
     * first step of every retrain period (counted from the first step, so
     * a weekly model is trained at the start of each week whatever day the
     * first came).  A model no arriving job would use is not trained (the
     * next one starts from the last one trained, or from scratch). */
    int due = !o->model || (now - o->first_now) / period > (o->last_now - o->first_now) / period;
    if (due && n >= o->cfg.min_history && njobs > 0) {
        lucid_ebm_params p;
        duration_params(&o->cfg, &p);
        lucid_dataset *train = lucid_features_duration_history(ended, n, ended, n, 1, err);
        /* Warm-started from the previous model (its shapes carried onto
         * the new bins, boosted a few rounds on all ended jobs):
         * docs/online.md measures it against retraining from scratch. */
        lucid_ebm *m = train ? lucid_ebm_train_warm(train, &p, warm ? o->model : NULL, seen, err)
                             : NULL;
        lucid_dataset_free(train);
        if (!m)
            rc = -1;
        else {
            lucid_ebm_free(o->model);
            o->model = m;
            o->trainings++;
            o->last_rows = n;
            o->last_now = now;
        }
    }
    /* Cold start, and jobs without a feature row: one constant for all.
     * (The mean duration of the ended jobs, the rule before daily
     * estimates, grows as longer jobs end, so recomputed every day it
     * ranked each day's arrivals behind the day before's by an artefact:
     * with no model at all, Venus fixed, 13,463 s against 13,200 s.) */
    double fallback = LUCID_ONLINE_COLD_ESTIMATE;
    if (rc == 0 && o->model && njobs > 0) {
        size_t m = 0;
        for (size_t k = 0; k < njobs; k++)
            if (o->row_of_job[jobs[k]] >= 0) {
                query[m] = job_row(o, run, (size_t)jobs[k], now);
                query[m].end_time = 0; /* not ended: it has not even arrived */
                query[m].known_at = now + (query[m].submit_time - trace->jobs[jobs[k]].submit_time);
                m++;
            }
        lucid_dataset *sub = lucid_features_duration_history(query, m, ended, n, 0, err);
        double *pred = sub ? malloc((m + 1) * sizeof *pred) : NULL;
        if (!sub || !pred || lucid_ebm_predict(o->model, sub, pred, err) < 0)
            rc = -1;
        for (size_t k = 0, q = 0; rc == 0 && k < njobs; k++) {
            if (o->row_of_job[jobs[k]] < 0) {
                estimates[k] = fallback;
                continue;
            }
            if (jobs[k] == o->watch) {
                lucid_dataset *one = lucid_dataset_subset(sub, &q, 1, err);
                if (one)
                    explain_estimate(o, one, pred[q]);
                lucid_dataset_free(one);
            }
            estimates[k] = pred[q++];
        }
        free(pred);
        lucid_dataset_free(sub);
    } else if (rc == 0) {
        for (size_t k = 0; k < njobs; k++) {
            estimates[k] = fallback;
            if (jobs[k] == o->watch)
                snprintf(o->why, sizeof o->why,
                         "cold start (%zu jobs had ended, fewer than %zu): the same estimate "
                         "for every job, %.0f s",
                         n, o->cfg.min_history, fallback);
        }
    }
    free(ended);
    free(query);
    return rc;
}
