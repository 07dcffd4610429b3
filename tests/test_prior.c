/* test_prior.c — the Venus prior (src/sim/prior.c): its constants are what
 * learning from data/venus-sept gives, its draws follow the Venus jobs'
 * scores, and a packed pair without workload keys runs at the prior's
 * speeds (hand-computed schedule). */
#include <math.h>

#include "simtest.h"

static void constants_are_learned_from_venus(void **state)
{
    (void)state;
    char p[4096];
    lucid_error err = {{0}};
    lucid_vcs vcs = {0};
    lucid_trace trace = {0};
    lucid_sharing sharing = {0};
    lucid_pairs pairs = {0};
    assert_int_equal(lucid_vcs_load(&vcs, test_path(p, sizeof p, "data/venus-sept/vc_config.csv"), &err), 0);
    assert_int_equal(lucid_trace_load(&trace, test_path(p, sizeof p, "data/venus-sept/trace.csv"), &vcs, &err), 0);
    assert_int_equal(lucid_sharing_load(&sharing, &trace, test_path(p, sizeof p, "data/venus-sept/sharing_labels.csv"), &err), 0);
    assert_int_equal(lucid_pairs_load(&pairs, &trace, test_path(p, sizeof p, "data/venus-sept/colocation_pairs.csv"), &err), 0);
    lucid_share_prior learned;
    assert_int_equal(lucid_share_prior_learn(&trace, &sharing, &pairs, &learned), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(learned.jobs[i], lucid_venus_prior.jobs[i]);
        for (int j = 0; j < 3; j++)
            if (fabs(learned.speed[i][j] - lucid_venus_prior.speed[i][j]) > 1e-12)
                fail_msg("speed[%d][%d]: learned %.17g, constant %.17g", i, j, learned.speed[i][j],
                         lucid_venus_prior.speed[i][j]);
    }
    lucid_sharing_free(&sharing);
    lucid_pairs_free(&pairs);
    lucid_trace_free(&trace);
    lucid_vcs_free(&vcs);
}

/* 100,000 ids: each score's share within 1 % of Venus's (14,196 / 6,296 /
 * 3,367 of 23,859); the same id and seed give the same score. */
static void draws_follow_venus(void **state)
{
    (void)state;
    int64_t n[3] = {0};
    for (int64_t id = 1; id <= 100000; id++) {
        int32_t s = lucid_share_prior_score(&lucid_venus_prior, id, 1);
        assert_true(s >= 0 && s <= 2);
        assert_int_equal(s, lucid_share_prior_score(&lucid_venus_prior, id, 1));
        n[s]++;
    }
    const double want[3] = {14196.0 / 23859, 6296.0 / 23859, 3367.0 / 23859};
    for (int s = 0; s < 3; s++)
        if (fabs((double)n[s] / 100000 - want[s]) > 0.01)
            fail_msg("score %d: %lld of 100000, want %.3f", s, (long long)n[s], want[s]);
    /* (capped at 1: light with light measured 1.0086) */
    assert_true(lucid_share_prior_speed(&lucid_venus_prior, 0, 0) == 1.0);
    assert_true(lucid_share_prior_speed(&lucid_venus_prior, 1, 1) == lucid_venus_prior.speed[1][1]);
}

/* A node of 8 GPUs, no profiling (GPU limit 0), packing always on (no
 * forecast: the switch reads 10 > -1).  At 0 a light 1-GPU job (1,000 s)
 * and a 7-GPU job (5,000 s) fill the node; at 10 a medium 1-GPU job
 * (1,000 s) arrives.  With the prior (scores drawn by id: light 0, medium
 * 1) it packs onto the light job (same GPUs, 0 + 1 <= 2, priority 1,000 <=
 * 2 x 1,000): the light job runs on at 0.985595 and has 990 s left:
 * ceil(990 / 0.985595) = 1,005 s more, it ends at 1,015; the medium one
 * did 1,005 x 0.992720 = 997.68 by then, the last 2.32 s alone: ends at
 * 1,018.  Without the prior both score 2 (unknown: heavy), cannot pack:
 * the medium job waits for the light one (ends 1,000) and ends at 2,000. */
static void packed_pair_runs_at_prior_speeds(void **state)
{
    (void)state;
    int64_t light = -1, medium = -1;
    for (int64_t id = 1; light < 0 || medium < 0; id++) {
        int32_t s = lucid_share_prior_score(&lucid_venus_prior, id, 1);
        if (s == 0 && light < 0)
            light = id;
        else if (s == 1 && medium < 0)
            medium = id;
    }
    char csv[256];
    snprintf(csv, sizeof csv,
             "job_id,vc,gpu_num,submit_time,duration\n%lld,a,1,0,1000\n9999999,a,7,0,5000\n"
             "%lld,a,1,10,1000\n",
             (long long)light, (long long)medium);
    for (int prior = 0; prior <= 1; prior++) {
        simtest t;
        simtest_load(&t, 1, csv);
        const double est[] = {1000, 5000, 1000};
        simtest_estimates(&t, est);
        t.cfg.seed = 1;
        t.cfg.lucid.profiler_nodes = 1;
        t.cfg.lucid.profiler_factor = 0; /* GPU limit 0: nothing is profiled */
        t.cfg.lucid.profiler_autoscale = 0;
        t.cfg.lucid.pack_threshold = -1;
        t.cfg.lucid.share_prior = prior;
        simtest_run_ok(&t, "lucid");
        if (prior) {
            EXPECT_JOB(&t, light, 0, 1015, 0);
            EXPECT_JOB(&t, medium, 10, 1018, 0);
            assert_int_equal(simtest_job(&t, medium)->packed_with, lucid_trace_find(&t.trace, light));
        } else {
            EXPECT_JOB(&t, light, 0, 1000, 0);
            EXPECT_JOB(&t, medium, 1000, 2000, 990);
        }
        simtest_free(&t);
    }
}

/* pack_when_blocked: the same two light-and-medium 1-GPU jobs on a node
 * with free GPUs (no 7-GPU job): partner first (the reference's rule), the
 * medium job packs onto the light one at 10 and they end at 1,015 and
 * 1,018 as above; packing only when blocked, it starts on a free GPU at 10
 * and both run alone: 0-1,000 and 10-1,010. */
static void pack_only_when_blocked(void **state)
{
    (void)state;
    int64_t light = -1, medium = -1;
    for (int64_t id = 1; light < 0 || medium < 0; id++) {
        int32_t s = lucid_share_prior_score(&lucid_venus_prior, id, 1);
        if (s == 0 && light < 0)
            light = id;
        else if (s == 1 && medium < 0)
            medium = id;
    }
    char csv[256];
    snprintf(csv, sizeof csv, "job_id,vc,gpu_num,submit_time,duration\n%lld,a,1,0,1000\n%lld,a,1,10,1000\n",
             (long long)light, (long long)medium);
    for (int blocked = 0; blocked <= 1; blocked++) {
        simtest t;
        simtest_load(&t, 1, csv);
        const double est[] = {1000, 1000};
        simtest_estimates(&t, est);
        t.cfg.seed = 1;
        t.cfg.lucid.profiler_nodes = 1;
        t.cfg.lucid.profiler_factor = 0;
        t.cfg.lucid.profiler_autoscale = 0;
        t.cfg.lucid.pack_threshold = -1;
        t.cfg.lucid.share_prior = 1;
        t.cfg.lucid.pack_when_blocked = blocked;
        simtest_run_ok(&t, "lucid");
        if (blocked) {
            EXPECT_JOB(&t, light, 0, 1000, 0);
            EXPECT_JOB(&t, medium, 10, 1010, 0);
            assert_int_equal(simtest_job(&t, medium)->packed_with, -1);
        } else {
            EXPECT_JOB(&t, light, 0, 1015, 0);
            EXPECT_JOB(&t, medium, 10, 1018, 0);
        }
        simtest_free(&t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(constants_are_learned_from_venus),
        cmocka_unit_test(draws_follow_venus),
        cmocka_unit_test(packed_pair_runs_at_prior_speeds),
        cmocka_unit_test(pack_only_when_blocked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
