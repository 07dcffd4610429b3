/* test_decide.c — lucidd's decision step without Slurm: consolidated
 * placement (best fit, whole nodes), strict priority order with head-of-line
 * stop, the profiler's least-GPU-first order, and each of Lucid's packing
 * conditions (spec lucid.md §4.1, §4.5).  Temporary with decide.c: when the
 * shared scheduling core replaces it, its own tests take over. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "../src/daemon/decide.h"

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
    decide_params params = {.packing = 0, .gpu_memory_mib = 24576, .stop_at_first_fail = 1};
    /* Job 2 (best priority) does not fit: nothing behind it starts. */
    assert_int_equal(decide_main(jobs, 4, NULL, 0, nodes, 2, &params, results), 0);
    assert_int_equal(results[0].id, 2);
    assert_string_equal(results[0].reason, "waiting for 8 free GPUs on 1 node (priority 100)");
    assert_int_equal(results[1].id, 3); /* ties by id */
    assert_string_equal(results[1].reason,
                        "waiting behind job 2 (higher priority, does not fit yet)");
    /* Without the stop, the others start in order, best fit each. */
    params.stop_at_first_fail = 0;
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
    assert_int_equal(decide_profiling(jobs, 4, nodes, 1, results), 3);
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

/* One newcomer against one running job: 1 if it is packed onto it. */
static int packs(decide_job newcomer, decide_running running)
{
    decide_node nodes[1];
    make_nodes(nodes, 1, (const int[]){0});
    decide_result result;
    decide_params params = {.packing = 1, .gpu_memory_mib = 24576};
    decide_main(&newcomer, 1, &running, 1, nodes, 1, &params, &result);
    return result.start && result.partner == running.job.id;
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
    decide_params params = {.packing = 1, .gpu_memory_mib = 24576};
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
    decide_params params = {.packing = 1, .gpu_memory_mib = 24576};
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(placement_is_best_fit_then_whole_nodes),
        cmocka_unit_test(priority_order_stops_at_first_failure),
        cmocka_unit_test(profiler_takes_least_gpus_first),
        cmocka_unit_test(packing_follows_lucid_rules),
        cmocka_unit_test(packed_nodes_stay_apart_from_new_placements),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
