/* simtest.h — run a policy over a small inline trace (test helper). */
#ifndef LUCID_SIMTEST_H
#define LUCID_SIMTEST_H

#include <stdlib.h>
#include <string.h>

#include "lucid/sim.h"
#include "testutil.h"

typedef struct simtest {
    lucid_vcs vcs;
    lucid_trace trace;
    lucid_sim_config cfg;
    lucid_sim_inputs in;
    double *est;
    lucid_sim_result result;
} simtest;

/* Jobs as CSV text with header job_id,vc,gpu_num,submit_time,duration[,...];
 * one VC "a" of `nodes` nodes unless vcs were added before. */
static inline void simtest_load(simtest *t, int nodes, const char *csv)
{
    memset(t, 0, sizeof *t);
    lucid_vcs_add(&t->vcs, "a", nodes);
    lucid_error err = {{0}};
    if (lucid_trace_load_mem(&t->trace, "inline.csv", csv, strlen(csv), &t->vcs, &err) < 0)
        fail_msg("%s", err.msg);
    lucid_sim_config_defaults(&t->cfg);
    t->cfg.start = 0;
    t->cfg.threads = 1;
    t->in.trace = &t->trace;
    t->in.vcs = &t->vcs;
}

static inline void simtest_estimates(simtest *t, const double *by_job_order)
{
    t->est = malloc(t->trace.njobs * sizeof *t->est);
    for (size_t i = 0; i < t->trace.njobs; i++)
        t->est[i] = by_job_order[i];
    t->in.qssf_estimates = t->est;
    t->in.lucid_estimates = t->est;
}

static inline int simtest_run(simtest *t, const char *policy, lucid_error *err)
{
    const lucid_policy_ops *p = lucid_policy_find(policy);
    assert_non_null(p);
    return lucid_simulate(&t->cfg, &t->in, &p, 1, &t->result, NULL, NULL, err);
}

static inline void simtest_run_ok(simtest *t, const char *policy)
{
    lucid_error err = {{0}};
    if (simtest_run(t, policy, &err) < 0)
        fail_msg("%s: %s", policy, err.msg);
}

static inline const lucid_jobresult *simtest_job(const simtest *t, int64_t job_id)
{
    int64_t i = lucid_trace_find(&t->trace, job_id);
    assert_true(i >= 0);
    return &t->result.run[i];
}

/* Asserts start, end and queue of one job. */
static inline void expect_job(const simtest *t, int64_t id, int64_t start, int64_t end,
                              double queue, int line)
{
    const lucid_jobresult *r = simtest_job(t, id);
    if (r->start_time != start || r->end_time != end || r->queue != queue)
        fail_msg("line %d: job %lld: got start %lld end %lld queue %g, want %lld %lld %g", line,
                 (long long)id, (long long)r->start_time, (long long)r->end_time, r->queue,
                 (long long)start, (long long)end, queue);
}
#define EXPECT_JOB(t, id, s, e, q) expect_job((t), (id), (s), (e), (q), __LINE__)

static inline void simtest_free(simtest *t)
{
    lucid_sim_result_free(&t->result);
    lucid_trace_free(&t->trace);
    lucid_vcs_free(&t->vcs);
    free(t->est);
}

#endif
