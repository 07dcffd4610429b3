/* test_decide.c — lucidd's decision step without Slurm: consolidated
 * placement (best fit, whole nodes), strict priority order with head-of-line
 * stop, the profiler's least-GPU-first order, each of Lucid's packing
 * conditions (spec lucid.md §4.1, §4.5), the Slurm-only rules around
 * packing, and that the daemon and the simulator, given the same jobs and
 * free GPUs, start the same jobs in the same order on the same nodes (both
 * run the core's queue order and decision pass, sched.h). */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "../src/daemon/decide.h"
#include "lucid/backfill.h"
#include "lucid/eta.h"
#include "lucid/sched.h"

static void make_nodes(decide_node *nodes, int n, const int *free_gpus)
{
    for (int i = 0; i < n; i++) {
        memset(&nodes[i], 0, sizeof nodes[i]);
        snprintf(nodes[i].name, sizeof nodes[i].name, "n%d", i + 1);
        nodes[i].total_gpus = 8;
        nodes[i].free_gpus = free_gpus[i];
    }
}

static void placement_is_best_fit_then_whole_nodes(void **state)
{
    (void)state;
    decide_node nodes[4];
    int chosen[8];
    make_nodes(nodes, 4, (const int[]){8, 3, 5, 8});
    /* 3 GPUs: the fullest node that still fits is n2 (3 free). */
    assert_int_equal(decide_place(3, 1, nodes, 4, chosen), 1);
    assert_int_equal(chosen[0], 1);
    assert_int_equal(nodes[1].free_gpus, 0);
    /* 4 GPUs: n3 (5 free) before the empty nodes. */
    assert_int_equal(decide_place(4, 1, nodes, 4, chosen), 1);
    assert_int_equal(chosen[0], 2);
    /* 16 GPUs on 2 nodes: the two empty ones, in node order. */
    assert_int_equal(decide_place(16, 2, nodes, 4, chosen), 2);
    assert_int_equal(chosen[0], 0);
    assert_int_equal(chosen[1], 3);
    assert_int_equal(nodes[0].free_gpus, 0);
    /* Nothing left for 2 GPUs on one node: unchanged on failure. */
    assert_int_equal(decide_place(2, 1, nodes, 4, chosen), 0);
    assert_int_equal(nodes[2].free_gpus, 1);
    /* Ties go to the lowest index. */
    make_nodes(nodes, 3, (const int[]){4, 4, 4});
    assert_int_equal(decide_place(2, 1, nodes, 3, chosen), 1);
    assert_int_equal(chosen[0], 0);
}

static void priority_order_stops_at_first_failure(void **state)
{
    (void)state;
    decide_node nodes[2];
    make_nodes(nodes, 2, (const int[]){4, 2});
    decide_job jobs[] = {
        {.id = 1, .gpus = 2, .nodes = 1, .priority = 300, .sharing_score = -1},
        {.id = 2, .gpus = 8, .nodes = 1, .priority = 100, .sharing_score = -1},
        {.id = 3, .gpus = 1, .nodes = 1, .priority = 200, .sharing_score = -1},
        {.id = 4, .gpus = 1, .nodes = 1, .priority = 200, .sharing_score = -1},
    };
    decide_result results[4];
    decide_params params = {.packing = 0, .gpu_memory_mib = 24576, .score_sum = 2, .priority_ratio = 2};
    /* Job 2 (best priority) does not fit: nothing behind it starts. */
    assert_int_equal(decide_main(jobs, 4, NULL, 0, nodes, 2, &params, results), 0);
    assert_int_equal(results[0].id, 2);
    assert_string_equal(results[0].reason, "waiting for 8 free GPUs on 1 node (priority 100)");
    assert_int_equal(results[1].id, 3); /* ties by id */
    assert_string_equal(results[1].reason,
                        "waiting behind job 2 (higher priority, does not fit yet)");
    /* With packing on every job is tried (no partner runs here): the
     * others start in order, best fit each. */
    params.packing = 1;
    assert_int_equal(decide_main(jobs, 4, NULL, 0, nodes, 2, &params, results), 3);
    assert_int_equal(results[1].id, 3);
    assert_string_equal(results[1].nodes, "n2");
    assert_int_equal(results[2].id, 4);
    assert_string_equal(results[2].nodes, "n2");
    assert_int_equal(results[3].id, 1);
    assert_string_equal(results[3].nodes, "n1");
}

static void profiler_takes_least_gpus_first(void **state)
{
    (void)state;
    decide_node nodes[1];
    make_nodes(nodes, 1, (const int[]){8});
    decide_job jobs[] = {
        {.id = 1, .gpus = 8, .nodes = 1}, {.id = 2, .gpus = 2, .nodes = 1},
        {.id = 3, .gpus = 4, .nodes = 1}, {.id = 4, .gpus = 1, .nodes = 1},
    };
    decide_result results[4];
    assert_int_equal(decide_profiling(jobs, 4, LUCID_ORDER_FEWEST_GPUS, nodes, 1, results), 3);
    assert_int_equal(results[0].id, 4);
    assert_int_equal(results[1].id, 2);
    assert_int_equal(results[2].id, 3);
    assert_true(results[2].start);
    assert_int_equal(results[3].id, 1);
    assert_false(results[3].start);
    assert_string_equal(results[3].reason, "waiting for 8 free GPUs on the profiling partition");
}

static decide_running host(uint32_t id, int gpus, int score, double gmem, double priority)
{
    decide_running r;
    memset(&r, 0, sizeof r);
    r.job = (decide_job){.id = id, .gpus = gpus, .nodes = 1, .priority = priority,
                         .sharing_score = score, .gmem_mib = gmem};
    r.node = 0;
    snprintf(r.gpu_list, sizeof r.gpu_list, "0-%d", gpus - 1);
    return r;
}

/* One newcomer against one running job under the pair rule's limits: 1 if
 * it is packed onto it. */
static int packs_within(decide_job newcomer, decide_running running, int score_sum,
                        double priority_ratio)
{
    decide_node nodes[1];
    make_nodes(nodes, 1, (const int[]){0});
    decide_result result;
    decide_params params = {.packing = 1, .gpu_memory_mib = 24576, .score_sum = score_sum,
                            .priority_ratio = priority_ratio};
    decide_main(&newcomer, 1, &running, 1, nodes, 1, &params, &result);
    return result.start && result.partner == running.job.id;
}

/* The same under the paper's limits (scores sum <= 2, ratio <= 2). */
static int packs(decide_job newcomer, decide_running running)
{
    return packs_within(newcomer, running, 2, 2.0);
}

static void packing_follows_lucid_rules(void **state)
{
    (void)state;
    decide_job job = {.id = 9, .gpus = 4, .nodes = 1, .priority = 2000, .sharing_score = 1,
                      .gmem_mib = 10000};
    assert_true(packs(job, host(5, 4, 1, 10000, 1000)));
    /* Same GPU count only. */
    assert_false(packs(job, host(5, 2, 1, 10000, 1000)));
    /* Scores must sum to <= 2. */
    assert_false(packs(job, host(5, 4, 2, 10000, 1000)));
    /* Memory must fit in one GPU: 10000 + 14576 = 24576 does not. */
    assert_false(packs(job, host(5, 4, 1, 14576, 1000)));
    assert_true(packs(job, host(5, 4, 1, 14575, 1000)));
    /* Newcomer's priority at most twice the partner's. */
    assert_false(packs(job, host(5, 4, 1, 10000, 999)));
    /* lucidd's --score-sum / --priority-ratio (what `lucid tune` writes):
     * scores 1 + 2 = 3 and priority 2000 vs 999 pass at 4 and 4; 2000 vs
     * 499 (ratio 4.008) does not, nor does 1 + 2 at a sum of 2. */
    assert_true(packs_within(job, host(5, 4, 2, 10000, 999), 4, 4.0));
    assert_false(packs_within(job, host(5, 4, 2, 10000, 499), 4, 4.0));
    assert_false(packs_within(job, host(5, 4, 2, 10000, 1000), 2, 4.0));
    assert_true(packs_within(job, host(5, 4, 2, 10000, 1000), 3, 2.0));
    /* Never more than 8 GPUs, never an unprofiled job, never an already packed one. */
    decide_job big = job;
    big.gpus = 16;
    big.nodes = 2;
    assert_false(packs(big, host(5, 16, 0, 0, 1e9)));
    decide_job unknown = job;
    unknown.sharing_score = -1;
    assert_false(packs(unknown, host(5, 4, 0, 0, 1e9)));
    decide_running busy = host(5, 4, 0, 0, 1e9);
    busy.packed = 1;
    assert_false(packs(job, busy));
    /* The pair shares exactly the partner's GPUs on its node. */
    decide_node nodes[1];
    make_nodes(nodes, 1, (const int[]){0});
    decide_running partner = host(5, 4, 1, 1000, 1000);
    snprintf(partner.gpu_list, sizeof partner.gpu_list, "4-7");
    decide_result result;
    decide_params params = {.packing = 1, .gpu_memory_mib = 24576, .score_sum = 2, .priority_ratio = 2};
    assert_int_equal(decide_main(&job, 1, &partner, 1, nodes, 1, &params, &result), 1);
    assert_string_equal(result.nodes, "n1");
    assert_string_equal(result.gpu_list, "4-7");
    /* Each running job takes one partner only. */
    decide_job two[] = {job, job};
    two[1].id = 10;
    decide_result results[2];
    assert_int_equal(decide_main(two, 2, &partner, 1, nodes, 1, &params, results), 1);
    assert_false(results[1].start);
}

/* Slurm's side of a pair (params.slurm_packing, fit_pack_ok): Slurm 22.05
 * starts a packed job only beside one free GPU of the node (its cleared GPU
 * request stays an entry of count 0), and where the node has the share GRES
 * the packed job asks as many units as its GPUs.  Two 4-GPU partners, one
 * per node: node 1 full, node 2 with 1 GPU free and 4 share units. */
static void a_pair_forms_only_where_slurm_starts_the_packed_job(void **state)
{
    (void)state;
    decide_node nodes[2];
    make_nodes(nodes, 2, (const int[]){0, 1});
    nodes[0].slurm_free = 0, nodes[0].share_free = 4;
    nodes[1].slurm_free = 1, nodes[1].share_free = 4;
    decide_running partners[2] = {host(5, 4, 0, 1000, 1000), host(6, 4, 0, 1000, 1000)};
    partners[1].node = 1;
    decide_job job = {.id = 9, .gpus = 4, .nodes = 1, .priority = 1000, .sharing_score = 0,
                      .gmem_mib = 1000};
    decide_params params = {.packing = 1, .gpu_memory_mib = 24576, .score_sum = 2,
                            .priority_ratio = 2, .slurm_packing = 1};
    decide_result result;
    /* The first partner in running order is on the full node: the next one. */
    assert_int_equal(decide_main(&job, 1, partners, 2, nodes, 2, &params, &result), 1);
    assert_int_equal(result.partner, 6);
    assert_string_equal(result.nodes, "n2");
    assert_int_equal(result.share_gpus, 4);
    /* Without the rule (the simulator's pair) the first partner would do. */
    params.slurm_packing = 0;
    make_nodes(nodes, 2, (const int[]){0, 1});
    assert_int_equal(decide_main(&job, 1, partners, 2, nodes, 2, &params, &result), 1);
    assert_int_equal(result.partner, 5);
    assert_int_equal(result.share_gpus, 0);
    /* Share units short (3 of 4): no pair; none on the node (-1): a pair
     * that asks nothing of it. */
    params.slurm_packing = 1;
    make_nodes(nodes, 2, (const int[]){0, 1});
    nodes[0].slurm_free = 0, nodes[0].share_free = 4;
    nodes[1].slurm_free = 1, nodes[1].share_free = 3;
    assert_int_equal(decide_main(&job, 1, partners, 2, nodes, 2, &params, &result), 0);
    assert_false(result.start);
    nodes[1].share_free = -1;
    assert_int_equal(decide_main(&job, 1, partners, 2, nodes, 2, &params, &result), 1);
    assert_int_equal(result.partner, 6);
    assert_int_equal(result.share_gpus, 0);
    /* Two newcomers, one free GPU and 8 share units on node 2 (two
     * partners there): both pack (a packed job takes no GPU of Slurm's),
     * each asking 4 units; with 6 units only the first. */
    decide_running two[2] = {host(5, 4, 0, 1000, 1000), host(6, 4, 0, 1000, 1000)};
    two[0].node = two[1].node = 1;
    decide_job jobs[2] = {job, job};
    jobs[1].id = 10;
    decide_result results[2];
    make_nodes(nodes, 2, (const int[]){0, 1});
    nodes[0].slurm_free = 0, nodes[0].share_free = -1;
    nodes[1].slurm_free = 1, nodes[1].share_free = 8;
    assert_int_equal(decide_main(jobs, 2, two, 2, nodes, 2, &params, results), 2);
    assert_int_equal(results[0].share_gpus + results[1].share_gpus, 8);
    make_nodes(nodes, 2, (const int[]){0, 1});
    nodes[0].slurm_free = 0, nodes[0].share_free = -1;
    nodes[1].slurm_free = 1, nodes[1].share_free = 6;
    assert_int_equal(decide_main(jobs, 2, two, 2, nodes, 2, &params, results), 1);
    assert_true(results[0].start);
    assert_false(results[1].start);
}

/* Within one decision: a node that just received a packed job takes no
 * unpacked job (Slurm would see the partner's GPUs free once it ends), and
 * no job is packed onto a node where a job was just placed (Slurm could
 * hand that one the partner's GPUs). */
static void packed_nodes_stay_apart_from_new_placements(void **state)
{
    (void)state;
    decide_node nodes[2];
    make_nodes(nodes, 2, (const int[]){4, 8});
    decide_running partner = host(5, 4, 0, 1000, 10000);
    decide_job jobs[] = {
        {.id = 1, .gpus = 4, .nodes = 1, .priority = 100, .sharing_score = 0, .gmem_mib = 1000},
        {.id = 2, .gpus = 4, .nodes = 1, .priority = 200, .sharing_score = -1},
    };
    decide_result results[2];
    decide_params params = {.packing = 1, .gpu_memory_mib = 24576, .score_sum = 2, .priority_ratio = 2};
    assert_int_equal(decide_main(jobs, 2, &partner, 1, nodes, 2, &params, results), 2);
    assert_int_equal(results[0].partner, 5);
    assert_string_equal(results[0].nodes, "n1");
    /* n1 still had 4 free GPUs (best fit) but carries a packed job now. */
    assert_string_equal(results[1].nodes, "n2");

    make_nodes(nodes, 2, (const int[]){4, 0});
    decide_job first_placed[] = {
        {.id = 1, .gpus = 4, .nodes = 1, .priority = 100, .sharing_score = -1},
        {.id = 2, .gpus = 4, .nodes = 1, .priority = 200, .sharing_score = 0, .gmem_mib = 1000},
    };
    assert_int_equal(decide_main(first_placed, 2, &partner, 1, nodes, 2, &params, results), 1);
    assert_string_equal(results[0].nodes, "n1");
    assert_false(results[1].start);
    assert_int_equal(nodes[0].settling, 1);
}

/* ---- the same decision in the daemon and in the simulator ---- */

typedef struct started_job {
    uint32_t id;
    int node; /* index of its (first) node */
} started_job;

enum { SAME_MAX_JOBS = 16 };

/* The simulator's side: a lucid_sched of 8-GPU nodes with `free_gpus` free
 * under the core's `policy` (Lucid, or the profiler's queue), the jobs
 * arriving at t = 0 in id order, one decide().  Writes the jobs started in
 * start order; returns how many. */
static int simulator_starts(const lucid_policy_ops *policy, const decide_job *jobs, int njobs,
                            const int *free_gpus, int nnodes, int packing, started_job *out)
{
    assert_true(njobs <= SAME_MAX_JOBS);
    lucid_job trace[SAME_MAX_JOBS];
    lucid_jobrun run[SAME_MAX_JOBS];
    double priority[SAME_MAX_JOBS];
    int32_t share[SAME_MAX_JOBS];
    for (int j = 0; j < njobs; j++) {
        trace[j] = (lucid_job){.job_id = jobs[j].id, .duration = 1000, .gpu_num = jobs[j].gpus,
                               .gmem = jobs[j].gmem_mib, .workload = {.model = -1}};
        run[j] = (lucid_jobrun){.start_time = -1, .end_time = -1, .partner = -1,
                                .packed_with = -1, .packed_onto = -1, .exclusive = 1,
                                .remain = 1000, .rate = 1};
        priority[j] = jobs[j].priority;
        share[j] = jobs[j].sharing_score;
    }
    lucid_lucid_inputs inputs = {.share = share, .gmem_limit = 24576, .priority_ratio = 2,
                                 .score_sum = 2, .switch_initial = (int8_t)packing};
    lucid_sched s;
    lucid_error err = {{0}};
    assert_int_equal(lucid_sched_init(&s, trace, run, 0, nnodes, 8,
                                      lucid_placer_find("consolidate"), policy,
                                      lucid_semantics_fixed(), 1, &err),
                     0);
    s.priority = priority;
    s.lucid = &inputs;
    assert_true(!policy->init || policy->init(&s, &err) == 0);
    for (int i = 0; i < nnodes; i++) {
        int busy = 8 - free_gpus[i];
        lucid_alloc taken = {.node = i, .gpus = busy, .mask = (1ULL << busy) - 1};
        if (busy > 0)
            lucid_cluster_take(&s.cluster, &taken, 1);
    }
    s.now = 0;
    for (uint32_t id = 1; id <= 64; id++) /* arrival order = id order */
        for (int j = 0; j < njobs; j++)
            if (jobs[j].id == id)
                assert_int_equal(policy->arrive(&s, j), 0);
    policy->decide(&s);
    int n = 0;
    for (int32_t j = s.run_head; j >= 0; j = run[j].run_next)
        out[n++] = (started_job){jobs[j].id, s.allocs[run[j].alloc_off].node};
    lucid_sched_free(&s);
    return n;
}

/* The daemon's side: decide_main (or decide_profiling) on the same jobs,
 * given in any order; writes the jobs started in decision order. */
static int daemon_starts(int profiling, const decide_job *given, int njobs,
                         const int *free_gpus, int nnodes, int packing, started_job *out)
{
    decide_job jobs[SAME_MAX_JOBS];
    decide_result results[SAME_MAX_JOBS];
    decide_node nodes[4];
    assert_true(njobs <= SAME_MAX_JOBS && nnodes <= 4);
    memcpy(jobs, given, (size_t)njobs * sizeof *jobs);
    make_nodes(nodes, nnodes, free_gpus);
    decide_params params = {.packing = packing, .gpu_memory_mib = 24576, .score_sum = 2, .priority_ratio = 2};
    int started = profiling ? decide_profiling(jobs, njobs, LUCID_ORDER_FEWEST_GPUS, nodes, nnodes, results)
                            : decide_main(jobs, njobs, NULL, 0, nodes, nnodes, &params, results);
    int n = 0;
    for (int j = 0; j < njobs; j++)
        if (results[j].start)
            out[n++] = (started_job){results[j].id, results[j].nodes[1] - '1'};
    assert_int_equal(n, started);
    return n;
}

static void expect_starts(const char *who, const started_job *got, int ngot,
                          const started_job *want, int nwant)
{
    int same = ngot == nwant;
    for (int k = 0; same && k < nwant; k++)
        same = got[k].id == want[k].id && got[k].node == want[k].node;
    if (!same) {
        char text[256];
        int used = 0;
        for (int k = 0; k < ngot && used < 200; k++)
            used += snprintf(text + used, sizeof text - (size_t)used, " %u@n%d", got[k].id,
                             got[k].node + 1);
        text[used] = '\0';
        fail_msg("%s started%s (%d jobs), not the %d expected", who, used ? text : " nothing",
                 ngot, nwant);
    }
}

/* Two 8-GPU nodes and a third, with 4, 2 and 1 GPUs free.  Priority order:
 * 2 and 3 (200, tie by id), 4 (250), 1 (300), 5 (400), 6 (500).  Best fit
 * puts 2 on n3, 3 on n2, 4 on n1; job 1 (2 GPUs) fits nowhere.  Packing
 * off: it blocks 5 and 6 although 6 would fit on n2.  Packing on: every
 * job is tried and 6 takes n2's last GPU. */
static void daemon_and_simulator_start_the_same_jobs(void **state)
{
    (void)state;
    const int free_gpus[] = {4, 2, 1};
    const decide_job jobs[] = { /* not in priority or id order: both sort */
        {.id = 6, .gpus = 1, .nodes = 1, .priority = 500, .sharing_score = 2},
        {.id = 1, .gpus = 2, .nodes = 1, .priority = 300, .sharing_score = 2},
        {.id = 4, .gpus = 4, .nodes = 1, .priority = 250, .sharing_score = 2},
        {.id = 3, .gpus = 1, .nodes = 1, .priority = 200, .sharing_score = 2},
        {.id = 5, .gpus = 8, .nodes = 1, .priority = 400, .sharing_score = 2},
        {.id = 2, .gpus = 1, .nodes = 1, .priority = 200, .sharing_score = 2},
    };
    const started_job head_of_line[] = {{2, 2}, {3, 1}, {4, 0}};
    const started_job every_job[] = {{2, 2}, {3, 1}, {4, 0}, {6, 1}};
    started_job got[SAME_MAX_JOBS];
    for (int packing = 0; packing <= 1; packing++) {
        const started_job *want = packing ? every_job : head_of_line;
        int nwant = packing ? 4 : 3;
        int n = daemon_starts(0, jobs, 6, free_gpus, 3, packing, got);
        expect_starts(packing ? "lucidd (packing on)" : "lucidd (packing off)", got, n, want,
                      nwant);
        n = simulator_starts(&lucid_policy_lucid, jobs, 6, free_gpus, 3, packing, got);
        expect_starts(packing ? "simulator (packing on)" : "simulator (packing off)", got, n,
                      want, nwant);
    }
}

/* The profilers: n1 with 8 free GPUs, n2 with 3.  Least GPUs first, ties by
 * id: 4 and 6 (1 GPU) on n2, 2 (2 GPUs) no longer fits n2 and goes to n1,
 * as does 5; 3 (6 GPUs) does not fit and blocks 1. */
static void daemon_and_simulator_profile_the_same_jobs(void **state)
{
    (void)state;
    const int free_gpus[] = {8, 3};
    const decide_job jobs[] = {
        {.id = 5, .gpus = 2, .nodes = 1}, {.id = 1, .gpus = 8, .nodes = 1},
        {.id = 6, .gpus = 1, .nodes = 1}, {.id = 3, .gpus = 6, .nodes = 1},
        {.id = 2, .gpus = 2, .nodes = 1}, {.id = 4, .gpus = 1, .nodes = 1},
    };
    const started_job want[] = {{4, 1}, {6, 1}, {2, 0}, {5, 0}};
    started_job got[SAME_MAX_JOBS];
    int n = daemon_starts(1, jobs, 6, free_gpus, 2, 0, got);
    expect_starts("lucidd's profiler", got, n, want, 4);
    n = simulator_starts(&lucid_policy_profiler, jobs, 6, free_gpus, 2, 0, got);
    expect_starts("the simulator's profiler", got, n, want, 4);
}

/* A job that fixed no node count (nodes <= 0, e.g. --gpus=16 without -N)
 * is placed as consolidation wants: whole nodes for 16 GPUs on 8-GPU nodes
 * (the emptiest, in node order), best fit for 2.  With nodes = 1 the same
 * 16 GPUs can never fit one node and wait. */
static void jobs_without_node_count_are_consolidated(void **state)
{
    (void)state;
    decide_node nodes[4];
    make_nodes(nodes, 4, (const int[]){8, 3, 8, 8});
    decide_job jobs[] = {
        {.id = 1, .gpus = 16, .nodes = 0, .priority = 100, .sharing_score = -1},
        {.id = 2, .gpus = 2, .nodes = -1, .priority = 200, .sharing_score = -1},
        {.id = 3, .gpus = 16, .nodes = 0, .priority = 300, .sharing_score = -1},
    };
    decide_result results[3];
    decide_params params = {.packing = 1, .gpu_memory_mib = 24576, .score_sum = 2,
                            .priority_ratio = 2};
    assert_int_equal(decide_main(jobs, 3, NULL, 0, nodes, 4, &params, results), 2);
    assert_string_equal(results[0].nodes, "n1,n3");
    assert_string_equal(results[1].nodes, "n2"); /* 3 free: the best fit for 2 */
    /* One whole node is left (n4): the second 16-GPU job waits. */
    assert_false(results[2].start);
    assert_string_equal(results[2].reason, "waiting for 16 free GPUs on any nodes (priority 300)");
    assert_int_equal(nodes[0].free_gpus + nodes[2].free_gpus, 0);
    assert_int_equal(nodes[1].free_gpus, 1);
    assert_int_equal(nodes[3].free_gpus, 8);
    /* The old reading (one node) never fits. */
    make_nodes(nodes, 4, (const int[]){8, 8, 8, 8});
    decide_job one_node = {.id = 4, .gpus = 16, .nodes = 1, .priority = 100, .sharing_score = -1};
    assert_int_equal(decide_main(&one_node, 1, NULL, 0, nodes, 4, &params, results), 0);
    /* 24 GPUs, no node count, on 8-GPU nodes: three whole nodes. */
    decide_job wide = {.id = 5, .gpus = 24, .nodes = 0, .priority = 100, .sharing_score = -1};
    assert_int_equal(decide_main(&wide, 1, NULL, 0, nodes, 4, &params, results), 1);
    assert_string_equal(results[0].nodes, "n1,n2,n3");
}

/* node_ok (-w, --exclude): placement uses only allowed nodes, for one node,
 * for -N spreading and in the profiler; a job with no allowed node waits
 * with a reason; the partner is the first running job on an allowed node. */
static void node_restrictions_are_honoured(void **state)
{
    (void)state;
    decide_node nodes[3];
    decide_result results[2];
    decide_params params = {.packing = 1, .gpu_memory_mib = 24576, .score_sum = 2,
                            .priority_ratio = 2};
    /* Best fit would be n2 (2 free); excluded, so n1 (8 free, lowest index). */
    make_nodes(nodes, 3, (const int[]){8, 2, 8});
    decide_job job = {.id = 1, .gpus = 2, .nodes = 1, .priority = 100, .sharing_score = -1,
                      .node_ok = (const unsigned char[]){1, 0, 1}};
    assert_int_equal(decide_main(&job, 1, NULL, 0, nodes, 3, &params, results), 1);
    assert_string_equal(results[0].nodes, "n1");
    assert_int_equal(nodes[1].free_gpus, 2);
    /* -w n3 only. */
    make_nodes(nodes, 3, (const int[]){8, 2, 8});
    job.node_ok = (const unsigned char[]){0, 0, 1};
    assert_int_equal(decide_main(&job, 1, NULL, 0, nodes, 3, &params, results), 1);
    assert_string_equal(results[0].nodes, "n3");
    /* -N 2 spread (4 + 4) over the emptiest allowed nodes: n1 is excluded,
     * so n3 (8 free) and n2 (4 free). */
    make_nodes(nodes, 3, (const int[]){8, 4, 8});
    decide_job spread = {.id = 2, .gpus = 8, .nodes = 2, .priority = 100, .sharing_score = -1,
                         .node_ok = (const unsigned char[]){0, 1, 1}};
    assert_int_equal(decide_main(&spread, 1, NULL, 0, nodes, 3, &params, results), 1);
    assert_string_equal(results[0].nodes, "n3,n2");
    /* No allowed node has room: it waits, and says so. */
    make_nodes(nodes, 3, (const int[]){8, 2, 8});
    decide_job stuck = {.id = 3, .gpus = 4, .nodes = 1, .priority = 100, .sharing_score = -1,
                        .node_ok = (const unsigned char[]){0, 1, 0}};
    assert_int_equal(decide_main(&stuck, 1, NULL, 0, nodes, 3, &params, results), 0);
    assert_string_equal(results[0].reason,
                        "waiting for 4 free GPUs on 1 node it may use (priority 100)");
    /* The profiler too: the 1-GPU job may not use p1. */
    make_nodes(nodes, 2, (const int[]){8, 8});
    decide_job profiled = {.id = 4, .gpus = 1, .nodes = 1, .priority = 100, .sharing_score = -1,
                           .node_ok = (const unsigned char[]){0, 1}};
    assert_int_equal(decide_profiling(&profiled, 1, LUCID_ORDER_FEWEST_GPUS, nodes, 2, results), 1);
    assert_string_equal(results[0].nodes, "n2");
    /* Partner choice: two equal hosts on n1 and n2, all GPUs busy.  Free
     * to choose, the newcomer packs onto the first (job 5 on n1); with n1
     * excluded, onto job 6 on n2. */
    make_nodes(nodes, 2, (const int[]){0, 0});
    decide_running hosts[2] = {host(5, 4, 0, 1000, 1000), host(6, 4, 0, 1000, 1000)};
    hosts[1].node = 1;
    decide_job newcomer = {.id = 7, .gpus = 4, .nodes = 1, .priority = 500, .sharing_score = 0,
                           .gmem_mib = 1000};
    assert_int_equal(decide_main(&newcomer, 1, hosts, 2, nodes, 2, &params, results), 1);
    assert_int_equal(results[0].partner, 5);
    newcomer.node_ok = (const unsigned char[]){0, 1};
    assert_int_equal(decide_main(&newcomer, 1, hosts, 2, nodes, 2, &params, results), 1);
    assert_int_equal(results[0].partner, 6);
    assert_string_equal(results[0].nodes, "n2");
    /* Neither allowed: no pair, and no free GPU either. */
    newcomer.node_ok = (const unsigned char[]){0, 0};
    assert_int_equal(decide_main(&newcomer, 1, hosts, 2, nodes, 2, &params, results), 0);
}

/* The partner is the first running job in running order that the pair
 * rule allows, also when the index skips buckets and blocks: 100 hosts of
 * 4 GPUs with scores 2, 1, 0 in turn and rising priorities; newcomers of
 * score 0 and priority 10 x k need a host with priority >= 5 x k, so each
 * takes the first untaken host at or after that point, whatever its score
 * (scores 0 + 2 <= 2). */
static void partner_is_first_allowed_in_running_order(void **state)
{
    (void)state;
    enum { HOSTS = 100 };
    decide_running hosts[HOSTS];
    decide_node nodes[1];
    make_nodes(nodes, 1, (const int[]){0});
    for (int i = 0; i < HOSTS; i++) {
        hosts[i] = host((uint32_t)(1000 + i), 4, 2 - i % 3, 1000, 100.0 * (i + 1));
        snprintf(hosts[i].gpu_list, sizeof hosts[i].gpu_list, "0-3");
    }
    decide_params params = {.packing = 1, .gpu_memory_mib = 24576, .score_sum = 2,
                            .priority_ratio = 2};
    /* Newcomer k (priority 1000 k) needs host priority >= 500 k: host index
     * 5k - 1 and later; ordered by priority, newcomer 1 goes first. */
    decide_job jobs[3] = {
        {.id = 1, .gpus = 4, .nodes = 1, .priority = 1000, .sharing_score = 0, .gmem_mib = 1000},
        {.id = 2, .gpus = 4, .nodes = 1, .priority = 1000, .sharing_score = 0, .gmem_mib = 1000},
        {.id = 3, .gpus = 4, .nodes = 1, .priority = 7000, .sharing_score = 0, .gmem_mib = 1000},
    };
    decide_result results[3];
    assert_int_equal(decide_main(jobs, 3, hosts, HOSTS, nodes, 1, &params, results), 3);
    assert_int_equal(results[0].partner, 1004); /* priority 500: index 4 */
    assert_int_equal(results[1].partner, 1005); /* 1004 taken: the next one */
    assert_int_equal(results[2].partner, 1034); /* 3500: index 34 */
    /* A newcomer of score 1 may not take score-2 hosts (1 + 2 > 2): with
     * index 4 (score 2 - 4 % 3 = 1) packed already, index 5 (score 0) is
     * next; index 6 (score 2) would not do. */
    decide_job medium = {.id = 4, .gpus = 4, .nodes = 1, .priority = 1000, .sharing_score = 1,
                         .gmem_mib = 1000};
    hosts[4].packed = 1;
    assert_int_equal(decide_main(&medium, 1, hosts, HOSTS, nodes, 1, &params, results), 1);
    assert_int_equal(results[0].partner, 1005);
    /* Memory: a newcomer of 23577 MiB fits only hosts under 999 MiB. */
    hosts[70].job.gmem_mib = 998;
    decide_job heavy = {.id = 5, .gpus = 4, .nodes = 1, .priority = 1000, .sharing_score = 0,
                        .gmem_mib = 23577};
    assert_int_equal(decide_main(&heavy, 1, hosts, HOSTS, nodes, 1, &params, results), 1);
    assert_int_equal(results[0].partner, 1070);
}

/* Start-time estimates on a hand-built schedule (the clock at 1000): one
 * 8-GPU node, held by job 10 (estimate 200 s, started at 960).  With no
 * ratio history the table answers its prior (0.25, 1, 4 at P10/P50/P90,
 * all above elapsed/estimate = 0.2), so job 10 ends at 960 + 200 x (0.25,
 * 1, 4) = 1010, 1160, 1760.  Job 1 (8 GPUs, estimate 300, first in
 * priority) starts then and runs 300 x (0.25, 1, 4); job 2 follows it:
 * 1010 + 75, 1160 + 300, 1760 + 1200.  With 30 ratios of 2 every quantile
 * is 2: job 10 ends at 1360, job 1 runs 600 s. */
static void predictions_on_a_hand_built_schedule(void **state)
{
    (void)state;
    decide_node nodes[1];
    make_nodes(nodes, 1, (const int[]){0});
    decide_busy busy = {.id = 10, .gpus = 8, .nnodes = 1, .node = {0}, .estimate_s = 200,
                        .start = 960};
    lucid_eta_table table = {0};
    decide_horizon horizon = {.now = 1000, .busy = &busy, .nbusy = 1, .table = &table};
    decide_params params = {.packing = 0};
    decide_job jobs[] = {
        {.id = 2, .gpus = 8, .priority = 8 * 50, .estimate_s = 50, .sharing_score = -1},
        {.id = 1, .gpus = 8, .priority = 8 * 30, .estimate_s = 300, .sharing_score = -1},
        {.id = 3, .gpus = 16, .priority = 1, .estimate_s = 10, .sharing_score = -1},
    };
    decide_eta eta[3];
    assert_int_equal(decide_predict(jobs, 3, 0, nodes, 1, &params, &horizon, eta), 0);
    /* Priority order: 3 (never fits one 8-GPU node), 1, 2. */
    assert_int_equal(eta[0].id, 3);
    assert_int_equal(eta[0].p50, -1);
    assert_int_equal(eta[1].id, 1);
    assert_int_equal(eta[1].p10, 1010);
    assert_int_equal(eta[1].p50, 1160);
    assert_int_equal(eta[1].p90, 1760);
    assert_int_equal(eta[2].id, 2);
    assert_int_equal(eta[2].p10, 1085);
    assert_int_equal(eta[2].p50, 1460);
    assert_int_equal(eta[2].p90, 2960);
    for (int i = 0; i < 30; i++)
        assert_int_equal(lucid_eta_table_add(&table, 2.0), 0);
    assert_int_equal(decide_predict(jobs, 3, 0, nodes, 1, &params, &horizon, eta), 0);
    assert_int_equal(eta[1].p10, 1360);
    assert_int_equal(eta[1].p90, 1360);
    assert_int_equal(eta[2].p50, 1960);
    lucid_eta_table_free(&table);
}

/* lucidd's predictions follow --backfill-min-gpus as its decisions do
 * (test_backfill's replay_follows_backfill_min_gpus, live): one 8-GPU node
 * busy with job 10 (8 GPUs, estimate 100, since now = 0); A (job 1, 4 GPUs,
 * 100 s, priority 400) then B (job 2, 8 GPUs, 100 s, 800) wait.  The prior
 * ratios 0.25 / 1 / 4: job 10 ends at 25 / 100 / 400, each waiting job runs
 * 25 / 100 / 400.  Without a minimum A comes first: 25 / 100 / 400, B after
 * it 50 / 200 / 800.  With 8, A holds no reservation and B, which does,
 * passes it: B 25 / 100 / 400, A 50 / 200 / 800.  A job that holds one
 * already (decide_job.holds) keeps its turn: as without the minimum. */
static void predictions_follow_backfill_min_gpus(void **state)
{
    (void)state;
    decide_node nodes[1];
    make_nodes(nodes, 1, (const int[]){0});
    decide_busy busy = {.id = 10, .gpus = 8, .nnodes = 1, .node = {0}, .estimate_s = 100,
                        .start = 0};
    lucid_eta_table table = {0};
    decide_horizon horizon = {.now = 0, .busy = &busy, .nbusy = 1, .table = &table};
    decide_params params = {.backfill = LUCID_BACKFILL_EASY, .backfill_margin = 1};
    decide_job jobs[] = {
        {.id = 1, .gpus = 4, .priority = 400, .estimate_s = 100, .sharing_score = -1},
        {.id = 2, .gpus = 8, .priority = 800, .estimate_s = 100, .sharing_score = -1},
    };
    decide_eta eta[2];
    const int64_t first[3] = {25, 100, 400}, second[3] = {50, 200, 800};
    for (int round = 0; round < 3; round++) {
        params.backfill_min_gpus = round == 0 ? 0 : 8;
        jobs[0].holds = round == 2;
        assert_int_equal(decide_predict(jobs, 2, 0, nodes, 1, &params, &horizon, eta), 0);
        const int64_t *a = round == 1 ? second : first, *b = round == 1 ? first : second;
        assert_int_equal(eta[0].id, 1);
        assert_int_equal(eta[0].p10, a[0]);
        assert_int_equal(eta[0].p50, a[1]);
        assert_int_equal(eta[0].p90, a[2]);
        assert_int_equal(eta[1].id, 2);
        assert_int_equal(eta[1].p10, b[0]);
        assert_int_equal(eta[1].p50, b[1]);
        assert_int_equal(eta[1].p90, b[2]);
    }
    lucid_eta_table_free(&table);
}

/* Lucid's packing replay live, with its arrivals to come: the simulator's
 * later_arrivals_overtake_in_the_p90 (tests/test_backfill.c) through
 * decide_predict.  One 8-GPU node, now 50: R (job 10, 8 GPUs, estimate
 * 100, priority 800, sharing score 2) runs since 0; W (job 2, 8 GPUs,
 * score 2: no partner) waits.  The prior ratios: R ran half its estimate,
 * so it ends at 100 x (0.5 x 1.1, 1, 4) = 55 / 100 / 400, and W starts
 * then.  With R's arrival at 0 noted (W's own at 50 is now, no arrival to
 * come), R's copy arrives at 2 x 50 - 0 = 100 in the P90 scenario: with W
 * estimated at 200 (priority 1600, behind R's 800) the copy goes first at
 * 400 and runs 100 x 4 = 400 s, so W starts at 800; with W at 50 (400,
 * ahead) W goes first at 400.  With packing off the replay is head of line
 * and reads no arrivals: 55 / 100 / 400 either way. */
static void packing_predictions_mirror_recent_arrivals(void **state)
{
    (void)state;
    decide_node nodes[1];
    make_nodes(nodes, 1, (const int[]){0});
    decide_busy busy = {.id = 10, .gpus = 8, .nnodes = 1, .node = {0}, .estimate_s = 100,
                        .start = 0, .priority = 800, .sharing_score = 2};
    lucid_eta_table table = {0};
    decide_arrival arrivals[2] = {
        {0, {.id = 10, .gpus = 8, .priority = 800, .estimate_s = 100, .sharing_score = 2}},
        {50, {.id = 2, .gpus = 8, .priority = 1600, .estimate_s = 200, .sharing_score = 2}}};
    decide_horizon horizon = {.now = 50, .busy = &busy, .nbusy = 1, .table = &table};
    decide_params params = {.packing = 1, .gpu_memory_mib = 24576, .score_sum = 2,
                            .priority_ratio = 2};
    for (int ahead = 0; ahead < 2; ahead++) {
        double est = ahead ? 50 : 200;
        decide_job w = {.id = 2, .gpus = 8, .priority = 8 * est, .estimate_s = est,
                        .sharing_score = 2};
        arrivals[1].job = w;
        decide_eta eta[1];
        horizon.arrivals = NULL;
        horizon.narrivals = 0;
        assert_int_equal(decide_predict(&w, 1, 0, nodes, 1, &params, &horizon, eta), 0);
        assert_int_equal(eta[0].p10, 55);
        assert_int_equal(eta[0].p50, 100);
        assert_int_equal(eta[0].p90, 400);
        horizon.arrivals = arrivals;
        horizon.narrivals = 2;
        assert_int_equal(decide_predict(&w, 1, 0, nodes, 1, &params, &horizon, eta), 0);
        assert_int_equal(eta[0].p10, 55);
        assert_int_equal(eta[0].p50, 100);
        assert_int_equal(eta[0].p90, ahead ? 400 : 800);
        params.packing = 0;
        assert_int_equal(decide_predict(&w, 1, 0, nodes, 1, &params, &horizon, eta), 0);
        assert_int_equal(eta[0].p90, 400);
        params.packing = 1;
    }
    lucid_eta_table_free(&table);
}

/* Reservations on a hand-built schedule (clock 0, margin 1): n1 is held by
 * job 10 until 1000 (estimate), n2 by job 11 (4 GPUs) until 100.  Job 1
 * (16 GPUs) is first and cannot start: reserved n1,n2 from 1000.  Job 2
 * (4 GPUs, 5000 s) would fit n2 now but runs into the reservation: it
 * waits.  Job 3 (4 GPUs, 500 s) ends before 1000: backfilled on n2.
 * Job 4 (4 GPUs, 100 s) would end before 1000 too, but no GPU is free
 * after job 3: its reason names the GPUs it waits for, not a delay of the
 * reservation (its estimate would not delay it).
 * Conservative: job 2 holds a reservation too, from 1100 (after job 1's
 * 100 s).  Without backfill the head of the line blocks all three. */
static void reservations_are_honoured(void **state)
{
    (void)state;
    decide_busy busy[] = {
        {.id = 10, .gpus = 8, .nnodes = 1, .node = {0}, .estimate_s = 1000, .start = 0},
        {.id = 11, .gpus = 4, .nnodes = 1, .node = {1}, .estimate_s = 100, .start = 0},
    };
    decide_horizon horizon = {.now = 0, .busy = busy, .nbusy = 2};
    int modes[] = {LUCID_BACKFILL_NONE, LUCID_BACKFILL_EASY, LUCID_BACKFILL_CONSERVATIVE};
    for (int m = 0; m < 3; m++) {
        decide_node nodes[2];
        make_nodes(nodes, 2, (const int[]){0, 4});
        decide_job jobs[] = {
            {.id = 1, .gpus = 16, .priority = 1, .estimate_s = 100, .sharing_score = -1},
            {.id = 2, .gpus = 4, .nodes = 1, .priority = 2, .estimate_s = 5000, .sharing_score = -1},
            {.id = 3, .gpus = 4, .nodes = 1, .priority = 3, .estimate_s = 500, .sharing_score = -1},
            {.id = 4, .gpus = 4, .nodes = 1, .priority = 4, .estimate_s = 100, .sharing_score = -1},
        };
        decide_params params = {.packing = 0, .gpu_memory_mib = 24576, .score_sum = 2,
                                .priority_ratio = 2, .backfill = modes[m],
                                .backfill_margin = 1, .horizon = &horizon};
        decide_result results[4];
        int started = decide_main(jobs, 4, NULL, 0, nodes, 2, &params, results);
        if (modes[m] == LUCID_BACKFILL_NONE) {
            assert_int_equal(started, 0);
            assert_int_equal(results[0].reserved_at, -1);
            continue;
        }
        assert_int_equal(started, 1);
        assert_int_equal(results[0].start, 0);
        assert_int_equal(results[0].reserved_at, 1000);
        assert_string_equal(results[0].reserved_nodes, "n1,n2");
        assert_int_equal(results[1].start, 0);
        assert_non_null(strstr(results[1].reason, "delay the reservation of job 1"));
        assert_int_equal(results[1].reserved_at, modes[m] == LUCID_BACKFILL_CONSERVATIVE ? 1100 : -1);
        assert_int_equal(results[2].start, 1);
        assert_string_equal(results[2].nodes, "n2");
        assert_int_equal(nodes[1].free_gpus, 0);
        assert_int_equal(results[3].start, 0);
        assert_string_equal(results[3].reason, "waiting for 4 free GPUs on 1 node (priority 4), behind the reservation of job 1");
    }
}


/* A head that can never fit (32 GPUs on 2 x 8) holds no reservation, so no
 * reason may name one it does not hold (they used to say "job 0"), and in
 * conservative the first job that does hold one is the one reasons name.
 * n1 busy until 1000, n2 4 GPUs free until 100 (job 11).  Job 2 (4 GPUs,
 * 500 s) starts on n2 in both modes.  EASY: job 3 (4 GPUs) waits for GPUs,
 * behind nobody's reservation.  Conservative: job 3 is reserved on n2 from
 * 100 (job 11's end) and job 4 waits behind job 3's reservation. */
static void unfit_head_names_no_reservation(void **state)
{
    (void)state;
    decide_busy busy[] = {
        {.id = 10, .gpus = 8, .nnodes = 1, .node = {0}, .estimate_s = 1000, .start = 0},
        {.id = 11, .gpus = 4, .nnodes = 1, .node = {1}, .estimate_s = 100, .start = 0},
    };
    decide_horizon horizon = {.now = 0, .busy = busy, .nbusy = 2};
    int modes[] = {LUCID_BACKFILL_EASY, LUCID_BACKFILL_CONSERVATIVE};
    for (int m = 0; m < 2; m++) {
        decide_node nodes[2];
        make_nodes(nodes, 2, (const int[]){0, 4});
        decide_job jobs[] = {
            {.id = 1, .gpus = 32, .priority = 1, .estimate_s = 100, .sharing_score = -1},
            {.id = 2, .gpus = 4, .nodes = 1, .priority = 2, .estimate_s = 500, .sharing_score = -1},
            {.id = 3, .gpus = 4, .nodes = 1, .priority = 3, .estimate_s = 300, .sharing_score = -1},
            {.id = 4, .gpus = 4, .nodes = 1, .priority = 4, .estimate_s = 300, .sharing_score = -1},
        };
        decide_params params = {.gpu_memory_mib = 24576, .score_sum = 2, .priority_ratio = 2,
                                .backfill = modes[m], .backfill_margin = 1, .horizon = &horizon};
        decide_result results[4];
        assert_int_equal(decide_main(jobs, 4, NULL, 0, nodes, 2, &params, results), 1);
        assert_int_equal(results[0].reserved_at, -1);
        assert_int_equal(results[1].start, 1);
        assert_string_equal(results[1].nodes, "n2");
        assert_string_equal(results[1].reason, "placed on n2 ahead of job 1, which can never fit the cluster");
        for (int j = 0; j < 4; j++)
            assert_null(strstr(results[j].reason, "job 0"));
        if (modes[m] == LUCID_BACKFILL_EASY) {
            assert_int_equal(results[2].reserved_at, -1);
            assert_string_equal(results[2].reason, "waiting for 4 free GPUs on 1 node (priority 3)");
        } else {
            assert_int_equal(results[2].reserved_at, 100);
            assert_string_equal(results[2].reserved_nodes, "n2");
            assert_non_null(strstr(results[3].reason, "behind the reservation of job 3"));
        }
    }
}

/* One decision of the schedule above (n1 busy until `busy_end`, n2 with
 * 4 GPUs free until 100; clock 0, margin 1, EASY) for job 1 (16 GPUs,
 * priority 1) and job 2 (4 GPUs, 5000 s, priority 2); `holds`: job 1 held
 * a reservation after the last decision.  results[0] is job 1's. */
static int window_decision(double busy_end, int64_t window, int min_gpus, int job1_gpus,
                           int holds, decide_node *nodes, decide_result *results)
{
    decide_busy busy[] = {
        {.id = 10, .gpus = 8, .nnodes = 1, .node = {0}, .estimate_s = busy_end, .start = 0},
        {.id = 11, .gpus = 4, .nnodes = 1, .node = {1}, .estimate_s = 100, .start = 0},
    };
    decide_horizon horizon = {.now = 0, .busy = busy, .nbusy = 2};
    make_nodes(nodes, 2, (const int[]){0, 4});
    decide_job jobs[] = {
        {.id = 1, .gpus = job1_gpus, .nodes = job1_gpus > 8 ? 0 : 1, .priority = 1,
         .estimate_s = 100, .sharing_score = -1, .holds = holds},
        {.id = 2, .gpus = 4, .nodes = 1, .priority = 2, .estimate_s = 5000, .sharing_score = -1},
    };
    decide_params params = {.gpu_memory_mib = 24576, .score_sum = 2, .priority_ratio = 2,
                            .backfill = LUCID_BACKFILL_EASY, .backfill_margin = 1,
                            .backfill_window = window, .backfill_min_gpus = min_gpus,
                            .horizon = &horizon};
    return decide_main(jobs, 2, NULL, 0, nodes, 2, &params, results);
}

/* Job 1 (results[0]) reserved n1,n2 from `at`; job 2 waits behind it. */
static void assert_job1_reserved(const decide_result *results, int64_t at)
{
    assert_int_equal(results[0].id, 1);
    assert_int_equal(results[0].start, 0);
    assert_int_equal(results[0].reserved_at, at);
    assert_string_equal(results[0].reserved_nodes, "n1,n2");
    assert_int_equal(results[0].holds, 1);
    assert_int_equal(results[1].start, 0);
    assert_non_null(strstr(results[1].reason, "delay the reservation of job 1"));
}

/* backfill_window, worked out by hand: job 1's earliest start is 1000
 * (n1's end).  With a window of 500 it gets no reservation and says why;
 * job 2, which would delay a reservation at 1000 (5000 s on n2), starts
 * now, ahead of it.  With a window of 1000 job 1 is reserved n1,n2 from
 * 1000 and job 2 waits. */
static void reservations_only_within_the_window(void **state)
{
    (void)state;
    decide_node nodes[2];
    decide_result results[2];
    assert_int_equal(window_decision(1000, 500, 0, 16, 0, nodes, results), 1);
    assert_int_equal(results[0].id, 1);
    assert_int_equal(results[0].start, 0);
    assert_int_equal(results[0].reserved_at, -1);
    assert_int_equal(results[0].holds, 0);
    assert_string_equal(results[0].reason,
                        "waiting for 16 free GPUs on any nodes (priority 1); no reservation: its "
                        "earliest start, in ~1000 s, is past the backfill window (500 s)");
    assert_int_equal(results[1].start, 1);
    assert_string_equal(results[1].nodes, "n2");
    assert_string_equal(results[1].reason, "placed on n2 ahead of job 1, which holds no reservation");

    assert_int_equal(window_decision(1000, 1000, 0, 16, 0, nodes, results), 0);
    assert_job1_reserved(results, 1000);
}

/* Once given, kept: at the next decision n1's job is expected to end at
 * 3000 (outside the window of 1000).  Job 1, which holds a reservation
 * (holds = 1, as the caller passes it back), is reserved again, from 3000,
 * and job 2 still waits; a job 1 that held none gets none and job 2
 * starts.  When its turn comes (both nodes free at 3000) it starts, before
 * a newcomer (job 0, 16 GPUs) of better priority, which then gets the
 * reservation, from 3100 (job 1's 100 s). */
static void a_reservation_once_given_is_kept(void **state)
{
    (void)state;
    decide_node nodes[2];
    decide_result results[3];
    assert_int_equal(window_decision(3000, 1000, 0, 16, 1, nodes, results), 0);
    assert_job1_reserved(results, 3000);
    /* Without the memory the window would drop it. */
    assert_int_equal(window_decision(3000, 1000, 0, 16, 0, nodes, results), 1);
    assert_int_equal(results[0].reserved_at, -1);
    assert_int_equal(results[0].holds, 0);
    assert_int_equal(results[1].start, 1);

    /* Its turn: both nodes free.  Job 0 comes first in priority order. */
    make_nodes(nodes, 2, (const int[]){8, 8});
    decide_horizon horizon = {.now = 3000, .busy = NULL, .nbusy = 0};
    decide_job jobs[] = {
        {.id = 1, .gpus = 16, .priority = 5, .estimate_s = 100, .sharing_score = -1, .holds = 1},
        {.id = 0, .gpus = 16, .priority = 1, .estimate_s = 100, .sharing_score = -1},
    };
    decide_params params = {.gpu_memory_mib = 24576, .score_sum = 2, .priority_ratio = 2,
                            .backfill = LUCID_BACKFILL_EASY, .backfill_margin = 1,
                            .backfill_window = 1000, .horizon = &horizon};
    assert_int_equal(decide_main(jobs, 2, NULL, 0, nodes, 2, &params, results), 1);
    assert_int_equal(results[0].id, 0);
    assert_int_equal(results[0].start, 0);
    /* The one reservation EASY gives is free again: job 0's, after job 1. */
    assert_int_equal(results[0].reserved_at, 3100);
    assert_int_equal(results[0].holds, 1);
    assert_int_equal(results[1].id, 1);
    assert_int_equal(results[1].start, 1);
    assert_string_equal(results[1].nodes, "n1,n2");
    assert_string_equal(results[1].reason, "its reservation is due; placed on n1,n2");
    assert_int_equal(results[1].holds, 0);
}

/* backfill_min_gpus: job 1 with 8 GPUs (earliest start 100, on n2) holds
 * no reservation under a minimum of 9, at either decision, and job 2
 * starts on n2 ahead of it; with a minimum of 8 it is reserved n2 from 100
 * and job 2 (5000 s there) waits. */
static void small_jobs_never_hold_a_reservation(void **state)
{
    (void)state;
    decide_node nodes[2];
    decide_result results[2];
    for (int tick = 0; tick < 2; tick++) {
        assert_int_equal(window_decision(1000, 0, 9, 8, results[0].holds * tick, nodes, results),
                         1);
        assert_int_equal(results[0].id, 1);
        assert_int_equal(results[0].reserved_at, -1);
        assert_int_equal(results[0].holds, 0);
        assert_non_null(strstr(results[0].reason,
                               "; no reservation: only jobs of 9 GPUs or more hold one"));
        assert_int_equal(results[1].start, 1);
        assert_string_equal(results[1].nodes, "n2");
    }
    assert_int_equal(window_decision(1000, 0, 8, 8, 0, nodes, results), 0);
    assert_int_equal(results[0].reserved_at, 100);
    assert_string_equal(results[0].reserved_nodes, "n2");
    assert_int_equal(results[0].holds, 1);
    assert_int_equal(results[1].start, 0);
}

/* The site's rules (fit.h) in one decision: best fit is n1 (2 GPUs free)
 * but it has 6 CPUs free.  Job 1 asks 8 CPUs: n1 is found short and job 1
 * goes to n2; job 2 asks 4 CPUs and still gets n1 (a node short for one job
 * is not hidden from a smaller one); job 3 asks 4 more and n1 has 2 left:
 * n2.  A whole-node job (--exclusive) needs a node with nothing in use:
 * none is left. */
static void site_rooms_add_up_within_a_decision(void **state)
{
    (void)state;
    decide_node nodes[2];
    make_nodes(nodes, 2, (const int[]){2, 8});
    nodes[0].room = (fit_room){.cpus_free = 6, .cpus_total = 32, .mem_free_mib = -1};
    nodes[1].room = (fit_room){.cpus_free = 32, .cpus_total = 32, .mem_free_mib = -1};
    fit_request eight = {.cpus_node = 8}, four = {.cpus_node = 4}, whole = {.whole = 1};
    decide_job jobs[] = {
        {.id = 1, .gpus = 1, .nodes = 1, .priority = 100, .sharing_score = -1, .fit = &eight},
        {.id = 2, .gpus = 1, .nodes = 1, .priority = 200, .sharing_score = -1, .fit = &four},
        {.id = 3, .gpus = 1, .nodes = 1, .priority = 300, .sharing_score = -1, .fit = &four},
        {.id = 4, .gpus = 1, .nodes = 1, .priority = 400, .sharing_score = -1, .fit = &whole},
    };
    decide_result results[4];
    decide_params params = {.packing = 1, .gpu_memory_mib = 24576, .score_sum = 2, .priority_ratio = 2};
    assert_int_equal(decide_main(jobs, 4, NULL, 0, nodes, 2, &params, results), 3);
    assert_string_equal(results[0].nodes, "n2");
    assert_string_equal(results[1].nodes, "n1");
    assert_string_equal(results[2].nodes, "n2");
    assert_false(results[3].start);
    assert_int_equal(nodes[0].room.cpus_free, 2);
    assert_int_equal(nodes[1].room.cpus_free, 20);
}

/* The site's GPU limits (fit.h): a job whose user is at a limit, counting
 * the jobs placed before it in the same decision, is passed over and
 * blocks nobody, also with packing off; each start counts against it.
 * lucidlab1 runs 2 GPUs under a per-user limit of 4. */
static void a_job_at_its_limit_is_passed_over(void **state)
{
    (void)state;
    decide_node nodes[2];
    make_nodes(nodes, 2, (const int[]){8, 8});
    fit_limit user = {.name = "QOS normal MaxTRESPerUser gres/gpu=4", .whose = "user lucidlab1",
                      .gpus = 4, .used = 2};
    fit_limits mine = {.limit = {&user}, .count = 1};
    decide_job jobs[] = {
        {.id = 1, .gpus = 2, .nodes = 1, .priority = 100, .sharing_score = -1, .limits = &mine},
        {.id = 2, .gpus = 2, .nodes = 1, .priority = 200, .sharing_score = -1, .limits = &mine},
        {.id = 3, .gpus = 4, .nodes = 1, .priority = 300, .sharing_score = -1},
        {.id = 4, .gpus = 16, .nodes = 2, .priority = 400, .sharing_score = -1},
        {.id = 5, .gpus = 1, .nodes = 1, .priority = 500, .sharing_score = -1},
    };
    decide_result results[5];
    decide_params params = {.packing = 0, .gpu_memory_mib = 24576, .score_sum = 2, .priority_ratio = 2};
    /* 1 starts (2 + 2 = 4), 2 would make 6: passed over; 3 starts on n1's
     * (best fit: n1, 6 free); 4 (16) does not fit and
     * blocks 5 (head of line, packing off). */
    assert_int_equal(decide_main(jobs, 5, NULL, 0, nodes, 2, &params, results), 2);
    assert_true(results[0].start);
    assert_string_equal(results[0].nodes, "n1");
    assert_false(results[1].start);
    assert_string_equal(results[1].reason, "QOS normal MaxTRESPerUser gres/gpu=4: user lucidlab1 "
                                           "runs 4; it needs 2 more");
    assert_true(results[2].start);
    assert_string_equal(results[2].nodes, "n1");
    assert_false(results[3].start);
    assert_false(results[4].start);
    assert_string_equal(results[4].reason, "waiting behind job 4 (higher priority, does not fit yet)");
    assert_int_equal(user.used, 4);
    assert_int_equal(nodes[0].free_gpus, 2);

    /* The profiler passes it over too and profiles the next job. */
    decide_node prof[1];
    make_nodes(prof, 1, (const int[]){4});
    user.used = 3;
    decide_job queue[] = {
        {.id = 10, .gpus = 1, .nodes = 1, .limits = &mine}, /* 3 + 1 = 4: profiled */
        {.id = 11, .gpus = 1, .nodes = 1, .limits = &mine}, /* 4 + 1: passed over */
        {.id = 12, .gpus = 2, .nodes = 1},                  /* another user's: profiled */
        {.id = 13, .gpus = 2, .nodes = 1},                  /* 1 GPU left: waits */
    };
    decide_result profiled[4];
    assert_int_equal(decide_profiling(queue, 4, LUCID_ORDER_FEWEST_GPUS, prof, 1, profiled), 2);
    assert_true(profiled[0].start);
    assert_false(profiled[1].start);
    assert_string_equal(profiled[1].reason, "QOS normal MaxTRESPerUser gres/gpu=4: user lucidlab1 "
                                            "runs 4; it needs 1 more");
    assert_true(profiled[2].start);
    assert_false(profiled[3].start);
    assert_string_equal(profiled[3].reason, "waiting for 2 free GPUs on the profiling partition");
    assert_int_equal(user.used, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(placement_is_best_fit_then_whole_nodes),
        cmocka_unit_test(priority_order_stops_at_first_failure),
        cmocka_unit_test(profiler_takes_least_gpus_first),
        cmocka_unit_test(packing_follows_lucid_rules),
        cmocka_unit_test(packed_nodes_stay_apart_from_new_placements),
        cmocka_unit_test(site_rooms_add_up_within_a_decision),
        cmocka_unit_test(a_job_at_its_limit_is_passed_over),
        cmocka_unit_test(a_pair_forms_only_where_slurm_starts_the_packed_job),
        cmocka_unit_test(daemon_and_simulator_start_the_same_jobs),
        cmocka_unit_test(daemon_and_simulator_profile_the_same_jobs),
        cmocka_unit_test(jobs_without_node_count_are_consolidated),
        cmocka_unit_test(node_restrictions_are_honoured),
        cmocka_unit_test(partner_is_first_allowed_in_running_order),
        cmocka_unit_test(predictions_on_a_hand_built_schedule),
        cmocka_unit_test(predictions_follow_backfill_min_gpus),
        cmocka_unit_test(packing_predictions_mirror_recent_arrivals),
        cmocka_unit_test(reservations_are_honoured),
        cmocka_unit_test(unfit_head_names_no_reservation),
        cmocka_unit_test(reservations_only_within_the_window),
        cmocka_unit_test(a_reservation_once_given_is_kept),
        cmocka_unit_test(small_jobs_never_hold_a_reservation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
