/* test_online.c — the update engine: it retrains at the configured times
 * and never learns from a job that has not ended (a planted job whose
 * duration, if leaked, would change the estimates). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/ebm.h"
#include "lucid/features.h"
#include "lucid/online.h"
#include "lucid/sim.h"
#include "testutil.h"

/* 300 one-GPU jobs, one every 600 s; durations depend on the user so the
 * model has something to learn.  Job 8 (trace index 7) runs `planted` s. */
/* One trace row on VC "a", submitted `t` s after 2020-09-01 00:00:00. */
static void write_row(FILE *f, int id, int user, int gpus, int64_t t, int64_t duration,
                      int gpu_util)
{
    char when[32];
    t += 1598918400;
    lucid_time_format(t, when, sizeof when);
    fprintf(f, "%d,u%d,a,%d,1,%lld,%lld,0,%d,20,2000,%s\n", id, user, gpus, (long long)t,
            (long long)duration, gpu_util, when);
}

static FILE *open_trace(const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("job_id,user,vc,gpu_num,cpu_num,submit_time,duration,amp,gpu_util,gmem_util,gmem,"
          "submit_datetime\n",
          f);
    return f;
}

static void write_trace(const char *path, int64_t planted)
{
    FILE *f = open_trace(path);
    for (int k = 0; k < 300; k++)
        write_row(f, k + 1, k % 5, 1, 600LL * k, k == 7 ? planted : 100 + 50 * (k % 5), 50);
    fclose(f);
}

static lucid_online *make(const char *trace_path, lucid_trace *trace, lucid_vcs *vcs)
{
    lucid_error err = {{0}};
    memset(vcs, 0, sizeof *vcs);
    lucid_vcs_add(vcs, "a", 2);
    if (lucid_trace_load(trace, trace_path, vcs, &err) < 0)
        fail_msg("%s", err.msg);
    lucid_online_config oc = {.trace_path = trace_path, .period = 86400, .min_history = 50,
                              .bags = 2, .seed = 3};
    lucid_forecast fc;
    int32_t *share = calloc(trace->njobs, sizeof *share);
    lucid_online *o = lucid_online_new(&oc, trace, share, &fc, &err);
    free(share);
    if (!o)
        fail_msg("%s", err.msg);
    return o;
}

static void never_learns_from_unended_jobs(void **state)
{
    (void)state;
    char dir[2048], a[4096], b[4096], c[4096];
    test_tmpdir(dir, sizeof dir, "online");
    snprintf(a, sizeof a, "%s/a.csv", dir);
    snprintf(b, sizeof b, "%s/b.csv", dir);
    snprintf(c, sizeof c, "%s/c.csv", dir);
    write_trace(a, 100);
    write_trace(b, 90000); /* the same job, a far longer run */
    write_trace(c, 100);
    lucid_trace ta, tb;
    lucid_vcs va, vb;
    lucid_online *oa = make(a, &ta, &va), *ob = make(b, &tb, &vb);
    /* Jobs 1..100 have ended before `now`, the planted job (index 7) among
     * them only in the second check. */
    lucid_jobresult *run = calloc(ta.njobs, sizeof *run);
    int64_t now = ta.jobs[100].submit_time;
    for (size_t i = 0; i < ta.njobs; i++)
        run[i].end_time = i < 100 ? ta.jobs[i].submit_time + 1000 : -1;
    run[7].end_time = -1; /* still running at `now` */
    int32_t jobs[50];
    for (int k = 0; k < 50; k++)
        jobs[k] = 100 + k;
    double ea[50], eb[50];
    lucid_error err = {{0}};
    assert_int_equal(lucid_online_estimate(oa, run, now, jobs, 50, ea, &err), 0);
    assert_int_equal(lucid_online_estimate(ob, run, now, jobs, 50, eb, &err), 0);
    assert_int_equal(lucid_online_trainings(oa, NULL), 1);
    assert_memory_equal(ea, eb, sizeof ea); /* the unended job's duration was not used */
    /* Control: once it has ended, its duration does change the model. */
    run[7].end_time = now - 1;
    assert_int_equal(lucid_online_estimate(oa, run, now, jobs, 50, ea, &err), 0);
    assert_int_equal(lucid_online_estimate(ob, run, now, jobs, 50, eb, &err), 0);
    int differs = 0;
    for (int k = 0; k < 50; k++)
        differs |= ea[k] != eb[k];
    assert_true(differs);
    /* Cold start: with fewer than min_history ended jobs, one constant for
     * every job (not the mean of the ended ones, 190 s here: that mean
     * grows as longer jobs end, docs/online.md). */
    for (size_t i = 0; i < ta.njobs; i++)
        run[i].end_time = i < 10 ? 1 : -1;
    lucid_trace tc;
    lucid_vcs vc;
    lucid_online *oc = make(c, &tc, &vc);
    assert_int_equal(lucid_online_estimate(oc, run, now, jobs, 1, ea, &err), 0);
    assert_true(ea[0] == LUCID_ONLINE_COLD_ESTIMATE);
    assert_int_equal(lucid_online_trainings(oc, NULL), 0);
    lucid_online_free(oa);
    lucid_online_free(ob);
    lucid_online_free(oc);
    lucid_trace_free(&tc);
    lucid_vcs_free(&vc);
    lucid_trace_free(&ta);
    lucid_trace_free(&tb);
    lucid_vcs_free(&va);
    lucid_vcs_free(&vb);
    free(run);
}

/* A trace on one VC "a" of `nodes` nodes and a lucid online simulation of
 * it (one thread, no profiler autoscaling); pointers into the struct, so it
 * stays where it was initialised. */
typedef struct online_case {
    lucid_trace trace;
    lucid_vcs vcs;
    lucid_online_config oc;
    lucid_sim_config cfg;
    lucid_sim_inputs in;
} online_case;

static void online_case_init(online_case *c, const char *path, int32_t nodes, int64_t period,
                             size_t min_history, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    lucid_vcs_add(&c->vcs, "a", nodes);
    lucid_error err = {{0}};
    if (lucid_trace_load(&c->trace, path, &c->vcs, &err) < 0)
        fail_msg("%s", err.msg);
    c->oc = (lucid_online_config){.trace_path = path, .period = period,
                                  .min_history = min_history, .bags = 2, .seed = seed};
    lucid_sim_config_defaults(&c->cfg);
    c->cfg.online = &c->oc;
    c->cfg.threads = 1;
    c->cfg.lucid.profiler_autoscale = 0;
    c->in = (lucid_sim_inputs){.trace = &c->trace, .vcs = &c->vcs};
}

static void online_case_free(online_case *c)
{
    lucid_trace_free(&c->trace);
    lucid_vcs_free(&c->vcs);
}

/* write_trace's jobs on 2 nodes, daily retraining, min_history 50, the
 * given estimate period, simulated (every job must finish); `path` names
 * the trace file, which must outlive the case. */
static void simulate_daily_case(online_case *c, const char *name, char *path, size_t size,
                                int64_t estimate_period, lucid_sim_result *res)
{
    char dir[2048];
    test_tmpdir(dir, sizeof dir, name);
    snprintf(path, size, "%s/t.csv", dir);
    write_trace(path, 100);
    online_case_init(c, path, 2, 86400, 50, 3);
    c->oc.estimate_period = estimate_period;
    lucid_error err = {{0}};
    const lucid_policy_ops *lucid = lucid_policy_find("lucid");
    if (lucid_simulate(&c->cfg, &c->in, &lucid, 1, res, NULL, NULL, &err) < 0)
        fail_msg("%s", err.msg);
    for (size_t i = 0; i < c->trace.njobs; i++)
        assert_int_equal(res->run[i].status, LUCID_DONE);
}

/* What `lucid explain` prints for trace job `job` (free it). */
static char *explain_text(const online_case *c, int64_t job)
{
    char *text = NULL;
    size_t len = 0;
    lucid_error err = {{0}};
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    if (lucid_explain_job(&c->cfg, &c->in, lucid_policy_find("lucid"), job, out, &err) < 0)
        fail_msg("%s", err.msg);
    fclose(out);
    return text;
}

static void retrains_at_the_configured_times(void **state)
{
    (void)state;
    char path[4096];
    online_case c;
    lucid_sim_result res;
    simulate_daily_case(&c, "online-sim", path, sizeof path, 0, &res);
    /* Jobs arrive for 300 x 600 s = 2.08 days and end within minutes: the
     * update engine runs at day 0 (nothing ended: cold start), day 1 (~144
     * ended: trains), day 2 (~288: trains); by day 3 every job has ended. */
    assert_int_equal(res.duration_trainings, 2);
    lucid_sim_result_free(&res);
    /* Explanations name the model and its terms (late job) or the cold
     * start (a job of the first day). */
    for (int k = 0; k < 2; k++) {
        char *text = explain_text(&c, k == 0 ? 253 : 3); /* 250 s: both outlive the 200 s profiling */
        /* Job 254 arrives on day 1: the model trained then on the 144 jobs of day 0. */
        const char *want = k == 0 ? "the estimate: duration model #1 (trained on 144 ended jobs)"
                                  : "the estimate: cold start (0 jobs had ended, fewer than 50)";
        if (!strstr(text, want))
            fail_msg("explanation lacks \"%s\":\n%s", want, text);
        if (k == 0 && !strstr(text, "intercept"))
            fail_msg("no terms in:\n%s", text);
        free(text);
    }
    online_case_free(&c);
}

/* Daily estimates, weekly models — here 6-hour estimates and daily models:
 * the first model at the first step with min_history ended jobs (12 h:
 * about 70; at 6 h about 35), then one at the first step of each later
 * day (24 h, 48 h); the steps between estimate with the model they have.
 * Jobs arrive until 49.8 h, so nothing is trained after 48 h. */
static void estimates_every_step_retrains_every_period(void **state)
{
    (void)state;
    char path[4096];
    online_case c;
    lucid_sim_result res;
    simulate_daily_case(&c, "online-steps", path, sizeof path, 6 * 3600, &res);
    assert_int_equal(lucid_online_step(&c.oc), 6 * 3600);
    assert_int_equal(res.duration_trainings, 3);
    size_t at6 = 0, at12 = 0, at24 = 0;
    int64_t t0 = c.trace.jobs[0].submit_time;
    for (size_t i = 0; i < c.trace.njobs; i++) {
        at6 += res.run[i].end_time < t0 + 6 * 3600;
        at12 += res.run[i].end_time < t0 + 12 * 3600;
        at24 += res.run[i].end_time < t0 + 24 * 3600;
    }
    assert_true(at6 < 50 && at12 >= 50);
    lucid_sim_result_free(&res);
    /* Trace index i arrives at 600 i s and runs 100 + 50 (i % 5) s: these
     * run 300 s, past the 200 s profiling, so Lucid orders them.  39 at
     * 6.5 h (cold: the step at 6 h had fewer than 50 ended), 84 at 14 h
     * and 114 at 19 h (model #1, trained at 12 h), 154 at 25.7 h (model
     * #2, trained at 24 h). */
    const int64_t job[4] = {39, 84, 114, 154};
    char want[4][128];
    snprintf(want[0], sizeof want[0], "the estimate: cold start (%zu jobs had ended, fewer than 50)",
             at6);
    snprintf(want[1], sizeof want[1], "the estimate: duration model #1 (trained on %zu ended jobs)",
             at12);
    snprintf(want[2], sizeof want[2], "%s", want[1]);
    snprintf(want[3], sizeof want[3], "the estimate: duration model #2 (trained on %zu ended jobs)",
             at24);
    for (int k = 0; k < 4; k++) {
        char *text = explain_text(&c, job[k]);
        if (!strstr(text, want[k]))
            fail_msg("job %lld: explanation lacks \"%s\":\n%s", (long long)job[k], want[k], text);
        free(text);
    }
    /* An estimate period longer than the retrain period is the latter. */
    c.oc.estimate_period = 2 * 86400;
    assert_int_equal(lucid_online_step(&c.oc), 86400);
    c.oc.estimate_period = 0;
    assert_int_equal(lucid_online_step(&c.oc), 86400);
    online_case_free(&c);
}

/* The tuner's surrogate: an online run's estimates, sharing scores and
 * forecast fed back as inputs replay that run exactly, without training.
 * A busy VC (jobs of 1-4 GPUs every 60 s on 8 GPUs) so that priorities
 * decide the order. */
static void replay_reproduces_the_online_run(void **state)
{
    (void)state;
    char dir[2048], path[4096];
    test_tmpdir(dir, sizeof dir, "online-replay");
    snprintf(path, sizeof path, "%s/t.csv", dir);
    FILE *f = open_trace(path);
    for (int k = 0; k < 400; k++)
        write_row(f, k + 1, k % 7, 1 + k % 4, 60LL * k, 250 + 97 * (k % 7) + 13 * (k % 11),
                  30 + k % 50);
    fclose(f);
    online_case c;
    online_case_init(&c, path, 1, 2 * 3600, 30, 5);
    lucid_error err = {{0}};
    const lucid_policy_ops *lucid = lucid_policy_find("lucid");
    lucid_sim_result online, replay;
    if (lucid_simulate(&c.cfg, &c.in, &lucid, 1, &online, NULL, NULL, &err) < 0)
        fail_msg("%s", err.msg);
    assert_true(online.duration_trainings >= 2);
    assert_non_null(online.estimates);
    assert_non_null(online.share);
    lucid_sim_inputs rin = c.in;
    rin.lucid_estimates = online.estimates;
    rin.lucid_share = online.share;
    rin.forecast = online.forecast.count ? &online.forecast : NULL;
    lucid_sim_config rcfg = c.cfg;
    rcfg.online = NULL;
    if (lucid_simulate(&rcfg, &rin, &lucid, 1, &replay, NULL, NULL, &err) < 0)
        fail_msg("%s", err.msg);
    int queued = 0, estimated = 0;
    for (size_t i = 0; i < c.trace.njobs; i++) {
        assert_int_equal(online.run[i].status, LUCID_DONE);
        assert_int_equal(replay.run[i].start_time, online.run[i].start_time);
        assert_int_equal(replay.run[i].end_time, online.run[i].end_time);
        queued += online.run[i].queue > 0;
        estimated += online.estimates[i] >= 0;
    }
    assert_true(queued > 50);     /* the order mattered */
    assert_true(estimated > 100); /* and came from the models */
    assert_null(replay.estimates);
    lucid_sim_result_free(&online);
    lucid_sim_result_free(&replay);
    online_case_free(&c);
}

/* A throughput history of 10-minute bins from `days_before` days before
 * 2020-09-01 00:00 (the traces' first submission) to `days_after` days
 * after, with a daily cycle and some jitter to learn. */
static void write_history(const char *path, int days_before, int days_after)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("time,submit_gpu_job,submit_gpu_num\n", f);
    int64_t t0 = 1598918400 - 86400LL * days_before;
    for (int t = 0; t < 144 * (days_before + days_after); t++) {
        char when[32];
        lucid_time_format(t0 + 600LL * t, when, sizeof when);
        int hour = (t / 6) % 24, jobs = 2 + (hour >= 8 && hour < 20 ? 6 : 0) + (t * 7919) % 5;
        fprintf(f, "%s,%d,%d\n", when, jobs, 2 * jobs + (t * 31) % 7);
    }
    fclose(f);
}

static void assert_same_forecast(const lucid_forecast *a, const lucid_forecast *b)
{
    assert_int_equal(a->count, b->count);
    assert_memory_equal(a->offset, b->offset, a->count * sizeof *a->offset);
    assert_memory_equal(a->pred_gpu_job, b->pred_gpu_job, a->count * sizeof *a->pred_gpu_job);
    assert_memory_equal(a->pred_gpu_num, b->pred_gpu_num, a->count * sizeof *a->pred_gpu_num);
}

/* The forecast of one target by its definition, written out here: for
 * each cut w (the window's first row, then a period after the last cut),
 * a throughput GA2M trained on rows [0, w) predicts rows [w, next cut);
 * the first from scratch, each later one warm-started from the one before
 * (which saw the rows before the previous cut). */
static void reference_forecast(const lucid_online_config *oc, const char *target, int64_t period,
                               double *out)
{
    lucid_error err = {{0}};
    int64_t *times = NULL;
    lucid_dataset *ds = lucid_features_throughput(oc->history, target, &times, &err);
    if (!ds)
        fail_msg("%s", err.msg);
    lucid_ebm_params p;
    lucid_online_forecast_params(oc, &p);
    size_t first = 0, *rows = malloc(ds->nrows * sizeof *rows);
    double *pred = malloc(ds->nrows * sizeof *pred);
    while (times[first] < oc->window_start)
        first++;
    lucid_ebm *prev = NULL;
    size_t last = 0;
    for (size_t week = first, until; week < ds->nrows; week = until) {
        for (size_t r = 0; r < week; r++)
            rows[r] = r;
        lucid_dataset *train = lucid_dataset_subset(ds, rows, week, &err);
        lucid_ebm *m = train ? lucid_ebm_train_warm(train, &p, prev, last, &err) : NULL;
        if (!m || lucid_ebm_predict(m, ds, pred, &err) < 0)
            fail_msg("%s", err.msg);
        assert_int_equal(m->warm_rows, prev ? last : 0);
        for (until = week; until < ds->nrows && times[until] < times[week] + period; until++)
            out[until - first] = pred[until];
        lucid_ebm_free(prev);
        prev = m;
        last = week;
        lucid_dataset_free(train);
    }
    lucid_ebm_free(prev);
    free(rows);
    free(pred);
    free(times);
    lucid_dataset_free(ds);
}

/* The tuner builds the forecasts of several retrain periods together,
 * sharing the scratch model at the window start and a repeated period's
 * chain: each is bit-identical to the forecast built for its period alone
 * and to the definition above (nested periods P, P/2, 2P, 4 h 10 min,
 * whose cuts fall between theirs, and P again). */
static void forecasts_built_together_equal_those_built_alone(void **state)
{
    (void)state;
    char dir[2048], path[4096];
    test_tmpdir(dir, sizeof dir, "online-forecasts");
    snprintf(path, sizeof path, "%s/history.csv", dir);
    write_history(path, 3, 1);
    lucid_online_config oc = {.history = path, .window_start = 1598918400, .bags = 1, .seed = 7};
    const int64_t periods[5] = {6 * 3600, 3 * 3600, 12 * 3600, 15000, 6 * 3600};
    lucid_forecast together[5], alone;
    lucid_error err = {{0}};
    if (lucid_online_forecasts(&oc, periods, 5, together, &err) < 0)
        fail_msg("%s", err.msg);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(together[i].count, 144);
        assert_int_equal(together[i].offset[0], 0);
        if (lucid_online_forecasts(&oc, &periods[i], 1, &alone, &err) < 0)
            fail_msg("%s", err.msg);
        assert_same_forecast(&together[i], &alone);
        lucid_forecast_free(&alone);
        double want[144];
        reference_forecast(&oc, "submit_gpu_job", periods[i], want);
        assert_memory_equal(together[i].pred_gpu_job, want, sizeof want);
        reference_forecast(&oc, "submit_gpu_num", periods[i], want);
        assert_memory_equal(together[i].pred_gpu_num, want, sizeof want);
    }
    /* The periods' models differ (else the test would prove little). */
    assert_true(memcmp(together[0].pred_gpu_job, together[1].pred_gpu_job,
                       144 * sizeof(double)) != 0);
    for (int i = 0; i < 5; i++)
        lucid_forecast_free(&together[i]);
    /* No history, no forecast; a period that never ends, one clear error. */
    oc.history = NULL;
    assert_int_equal(lucid_online_forecasts(&oc, periods, 4, together, &err), 0);
    assert_int_equal(together[3].count, 0);
    oc.history = path;
    const int64_t zero = 0;
    assert_int_equal(lucid_online_forecasts(&oc, &zero, 1, together, &err), -1);
    assert_non_null(strstr(err.msg, "retrain period 0 s: must be positive"));
}

/* An online run given the forecast built beforehand schedules exactly as
 * one that trains its own, and hands back that forecast (a doctored one
 * shows that it is used, not retrained). */
static void online_run_with_a_given_forecast_is_the_same_run(void **state)
{
    (void)state;
    char dir[2048], path[4096], history[4096];
    test_tmpdir(dir, sizeof dir, "online-given");
    snprintf(path, sizeof path, "%s/t.csv", dir);
    snprintf(history, sizeof history, "%s/history.csv", dir);
    write_trace(path, 100);
    write_history(history, 3, 3);
    online_case c;
    online_case_init(&c, path, 1, 12 * 3600, 50, 3);
    c.oc.history = history;
    c.oc.window_start = 1598918400;
    c.oc.bags = 1;
    lucid_error err = {{0}};
    const lucid_policy_ops *lucid = lucid_policy_find("lucid");
    lucid_sim_result trained, given;
    if (lucid_simulate(&c.cfg, &c.in, &lucid, 1, &trained, NULL, NULL, &err) < 0)
        fail_msg("%s", err.msg);
    lucid_forecast fc;
    if (lucid_online_forecasts(&c.oc, &c.oc.period, 1, &fc, &err) < 0)
        fail_msg("%s", err.msg);
    c.oc.forecast = &fc;
    if (lucid_simulate(&c.cfg, &c.in, &lucid, 1, &given, NULL, NULL, &err) < 0)
        fail_msg("%s", err.msg);
    assert_int_equal(trained.forecast.count, 3 * 144);
    assert_same_forecast(&given.forecast, &trained.forecast);
    assert_true(given.forecast.pred_gpu_job != fc.pred_gpu_job); /* a copy: the run frees it */
    for (size_t i = 0; i < c.trace.njobs; i++) {
        assert_int_equal(given.run[i].status, LUCID_DONE);
        assert_int_equal(given.run[i].start_time, trained.run[i].start_time);
        assert_int_equal(given.run[i].end_time, trained.run[i].end_time);
    }
    assert_int_equal(given.duration_trainings, trained.duration_trainings);
    lucid_sim_result_free(&given);
    for (size_t r = 0; r < fc.count; r++)
        fc.pred_gpu_job[r] += 1000;
    if (lucid_simulate(&c.cfg, &c.in, &lucid, 1, &given, NULL, NULL, &err) < 0)
        fail_msg("%s", err.msg);
    assert_same_forecast(&given.forecast, &fc);
    lucid_sim_result_free(&given);
    lucid_sim_result_free(&trained);
    lucid_forecast_free(&fc);
    online_case_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(never_learns_from_unended_jobs),
        cmocka_unit_test(retrains_at_the_configured_times),
        cmocka_unit_test(estimates_every_step_retrains_every_period),
        cmocka_unit_test(replay_reproduces_the_online_run),
        cmocka_unit_test(forecasts_built_together_equal_those_built_alone),
        cmocka_unit_test(online_run_with_a_given_forecast_is_the_same_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
