/* test_placer.c — the placers on hand-built clusters: which nodes and GPUs
 * (spec §4.1 worked through by hand), and the seeded random placer's
 * determinism. */
#include "lucid/sched.h"
#include "testutil.h"

static lucid_alloc out[16];

/* Takes `gpus` lowest-index GPUs of node `slot` directly. */
static void occupy(lucid_cluster *c, int32_t slot, int32_t gpus)
{
    lucid_alloc a = {.node = slot, .gpus = gpus, .mask = 0};
    uint64_t free_mask = c->nodes[slot].free_mask;
    for (int32_t k = 0; k < gpus; k++) {
        uint64_t low = free_mask & (~free_mask + 1);
        a.mask |= low;
        free_mask &= ~low;
    }
    lucid_cluster_take(c, &a, 1);
}

static void consolidate_best_fit_and_whole_nodes(void **state)
{
    (void)state;
    const lucid_placer_ops *p = lucid_placer_find("consolidate");
    lucid_cluster c;
    assert_int_equal(lucid_cluster_init(&c, 4, 8, NULL), 0);
    occupy(&c, 0, 6); /* free: 2, 8, 8, 8 */
    occupy(&c, 1, 3); /* free: 2, 5, 8, 8 */
    /* 2 GPUs: best fit is node 0 (2 free), GPUs 6 and 7. */
    assert_int_equal(p->select(&c, 2, NULL, out, 16), 1);
    assert_int_equal(out[0].node, 0);
    assert_true(out[0].mask == 0xC0);
    /* 4 GPUs: node 1 (5 free) beats the whole nodes; GPUs 3..6. */
    assert_int_equal(p->select(&c, 4, NULL, out, 16), 1);
    assert_int_equal(out[0].node, 1);
    assert_true(out[0].mask == 0x78);
    /* 16 GPUs: the two whole nodes 2 and 3. */
    assert_int_equal(p->select(&c, 16, NULL, out, 16), 2);
    assert_int_equal(out[0].node, 2);
    assert_int_equal(out[1].node, 3);
    /* 12 GPUs: whole node 2, then 4 of the next whole node (3). */
    assert_int_equal(p->select(&c, 12, NULL, out, 16), 2);
    assert_int_equal(out[0].node, 2);
    assert_int_equal(out[1].node, 3);
    assert_int_equal(out[1].gpus, 4);
    occupy(&c, 3, 4); /* free: 2, 5, 8, 4 */
    /* 12 GPUs: whole node 2, then the freest partial node is 1 (5 >= 4). */
    assert_int_equal(p->select(&c, 12, NULL, out, 16), 2);
    assert_int_equal(out[1].node, 1);
    assert_true(out[1].mask == 0x78);
    /* 14 GPUs: whole node 2 + 6 from node 1 (5 free): fails, although 19 are free. */
    assert_int_equal(p->select(&c, 14, NULL, out, 16), 0);
    /* 16 GPUs: only one whole node: fails. */
    assert_int_equal(p->select(&c, 16, NULL, out, 16), 0);
    /* consolidate-first spreads instead: node 2 (8), node 1 (5), node 3 (1 of 4). */
    const lucid_placer_ops *cf = lucid_placer_find("consolidate-first");
    assert_int_equal(cf->select(&c, 14, NULL, out, 16), 3);
    assert_int_equal(out[0].node, 2);
    assert_int_equal(out[1].node, 1);
    assert_int_equal(out[2].node, 3);
    assert_int_equal(out[2].gpus, 1);
    /* Nothing fits beyond the free total. */
    assert_int_equal(cf->select(&c, 20, NULL, out, 16), 0);
    /* Removing and re-adding nodes keeps list order by slot. */
    lucid_cluster_remove_node(&c, 2);
    assert_int_equal(c.total_gpus, 24);
    assert_int_equal(c.free_gpus, 11);
    assert_int_equal(lucid_cluster_add_node(&c, 9999), 4);
    assert_int_equal(p->select(&c, 8, NULL, out, 16), 1);
    assert_int_equal(out[0].node, 4);
    lucid_cluster_free(&c);
}

static void random_placer_is_seeded(void **state)
{
    (void)state;
    const lucid_placer_ops *p = lucid_placer_find("random");
    lucid_cluster c;
    assert_int_equal(lucid_cluster_init(&c, 16, 8, NULL), 0);
    lucid_rng a, b;
    lucid_rng_seed(&a, 42);
    lucid_rng_seed(&b, 42);
    int differs_from_first_fit = 0;
    for (int k = 0; k < 20; k++) {
        lucid_alloc x[16], y[16];
        int n = p->select(&c, 12, &a, x, 16), m = p->select(&c, 12, &b, y, 16);
        assert_int_equal(n, m);
        assert_true(n >= 2);
        int total = 0;
        for (int i = 0; i < n; i++) {
            assert_int_equal(x[i].node, y[i].node);
            assert_true(x[i].mask == y[i].mask);
            total += x[i].gpus;
        }
        assert_int_equal(total, 12);
        differs_from_first_fit |= x[0].node != 0;
    }
    assert_true(differs_from_first_fit);
    lucid_cluster_free(&c);
}

/* The free-count index against a plain scan of the nodes: on a cluster
 * grown node by node past several second-level words (9,000 slots: 141
 * bitset words, 3 words over them), with GPUs taken and given back and
 * nodes removed at random, the first slot of each free count from each
 * starting point is the first alive node at or after it with exactly
 * that many free GPUs. */
static void free_count_index_matches_a_scan(void **state)
{
    (void)state;
    lucid_cluster c;
    lucid_error err;
    assert_int_equal(lucid_cluster_init(&c, 100, 8, &err), 0);
    for (int32_t i = 100; i < 9000; i++)
        assert_int_equal(lucid_cluster_add_node(&c, i), i);
    uint64_t x = 12345;
    for (int round = 0; round < 60; round++) {
        for (int k = 0; k < 4000; k++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            int32_t slot = (int32_t)((x >> 33) % 9000);
            lucid_node *n = &c.nodes[slot];
            if (!n->alive)
                continue;
            if ((x >> 20) % 997 == 0) {
                lucid_cluster_remove_node(&c, slot);
            } else if ((x >> 12) % 2 == 0 && n->free > 0) {
                occupy(&c, slot, 1 + (int32_t)((x >> 40) % (uint64_t)n->free));
            } else if (n->free < 8) {
                lucid_alloc a = {.node = slot, .gpus = 8 - n->free, .mask = ~n->free_mask & 0xff};
                lucid_cluster_give(&c, &a, 1);
            }
        }
        for (int32_t f = 0; f <= 8; f++)
            for (int q = 0; q < 40; q++) {
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
                int32_t from = q == 0 ? 0 : (int32_t)((x >> 33) % 9100);
                int32_t want = -1;
                for (int32_t s = from; s < c.nslots && want < 0; s++)
                    if (c.nodes[s].alive && c.nodes[s].free == f)
                        want = s;
                assert_int_equal(lucid_cluster_first_in_bucket(&c, f, from), want);
            }
    }
    lucid_cluster_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(consolidate_best_fit_and_whole_nodes),
        cmocka_unit_test(random_placer_is_seeded),
        cmocka_unit_test(free_count_index_matches_a_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
