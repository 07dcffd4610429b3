/* test_capacity.c — lucid_profiler_take (src/sim/capacity.c): the VCs
 * that give Lucid's profiler its nodes, worked out by hand. */
#include "testutil.h"

#include "lucid/sim.h"

static void takes_from_the_most_nodes_left(void **state)
{
    (void)state;
    /* VCs of 10, 6, 6 nodes; the first must keep 9 (a 72-GPU job).  Four
     * nodes: 10 -> 9 left (keeps 9: no more after that), then the two of 6
     * nodes in turn (ties: the first): taken 1, 2, 1. */
    const int32_t nodes[] = {10, 6, 6}, keep[] = {9, 1, 1};
    int32_t taken[3] = {0, 0, 0};
    assert_int_equal(lucid_profiler_take(nodes, keep, 3, 4, taken), 0);
    assert_int_equal(taken[0], 1);
    assert_int_equal(taken[1], 2);
    assert_int_equal(taken[2], 1);
    /* Back to two: each node fewer goes back to the VC that gave most
     * (ties: the last): 1, 2, 1 -> 1, 1, 1 -> 1, 1, 0. */
    assert_int_equal(lucid_profiler_take(nodes, keep, 3, 2, taken), 0);
    assert_int_equal(taken[0], 1);
    assert_int_equal(taken[1], 1);
    assert_int_equal(taken[2], 0);
}

static void refuses_what_no_vc_can_give(void **state)
{
    (void)state;
    /* Each VC must keep all but one node: two nodes at most; a VC without
     * jobs (0 nodes) never gives. */
    const int32_t nodes[] = {4, 0, 3}, keep[] = {3, 0, 2};
    int32_t taken[3] = {0, 0, 0};
    assert_int_equal(lucid_profiler_take(nodes, keep, 3, 2, taken), 0);
    assert_true(taken[0] == 1 && taken[1] == 0 && taken[2] == 1);
    assert_int_equal(lucid_profiler_take(nodes, keep, 3, 3, taken), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(takes_from_the_most_nodes_left),
        cmocka_unit_test(refuses_what_no_vc_can_give),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
