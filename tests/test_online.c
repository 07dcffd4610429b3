/* test_online.c — the update engine: it retrains at the configured times
 * and never learns from a job that has not ended (a planted job whose
 * duration, if leaked, would change the estimates). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    lucid_jobrun *run = calloc(ta.njobs, sizeof *run);
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
    /* Cold start: with fewer than min_history ended jobs, the mean of the ended. */
    for (size_t i = 0; i < ta.njobs; i++)
        run[i].end_time = i < 10 ? 1 : -1;
    lucid_trace tc;
    lucid_vcs vc;
    lucid_online *oc = make(c, &tc, &vc);
    assert_int_equal(lucid_online_estimate(oc, run, now, jobs, 1, ea, &err), 0);
    /* jobs 1..10: durations 100,150,200,250,300, 100,150, 100 (planted), 250,300 -> 190 */
    assert_true(fabs(ea[0] - 190.0) < 1e-9);
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

static void retrains_at_the_configured_times(void **state)
{
    (void)state;
    char dir[2048], path[4096];
    test_tmpdir(dir, sizeof dir, "online-sim");
    snprintf(path, sizeof path, "%s/t.csv", dir);
    write_trace(path, 100);
    online_case c;
    online_case_init(&c, path, 2, 86400, 50, 3);
    lucid_error err = {{0}};
    const lucid_policy_ops *lucid = lucid_policy_find("lucid");
    lucid_sim_result res;
    if (lucid_simulate(&c.cfg, &c.in, &lucid, 1, &res, NULL, NULL, &err) < 0)
        fail_msg("%s", err.msg);
    /* Jobs arrive for 300 x 600 s = 2.08 days and end within minutes: the
     * update engine runs at day 0 (nothing ended: cold start), day 1 (~144
     * ended: trains), day 2 (~288: trains); by day 3 every job has ended. */
    assert_int_equal(res.duration_trainings, 2);
    for (size_t i = 0; i < c.trace.njobs; i++)
        assert_int_equal(res.run[i].status, LUCID_DONE);
    lucid_sim_result_free(&res);
    /* Explanations name the model and its terms (late job) or the cold
     * start (a job of the first day). */
    for (int k = 0; k < 2; k++) {
        char *text = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&text, &len);
        int64_t job = k == 0 ? 253 : 3; /* 250 s: both outlive the 200 s profiling */
        if (lucid_explain_job(&c.cfg, &c.in, lucid, job, out, &err) < 0)
            fail_msg("%s", err.msg);
        fclose(out);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(never_learns_from_unended_jobs),
        cmocka_unit_test(retrains_at_the_configured_times),
        cmocka_unit_test(replay_reproduces_the_online_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
