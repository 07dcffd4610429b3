/* cluster.c — the nodes and GPUs of one virtual cluster, and the placers
 * that choose GPUs for a job (sched.h).
 *
 * Nodes stay in list order (slot order); a removed node leaves a dead slot so
 * that slots, and so the list order, never shift.  Alive nodes are indexed by
 * their free-GPU count in one bitset per count, which answers the
 * consolidated placer's questions ("first node in list order with exactly f
 * free GPUs") without sorting the node list at every placement. */
#include <stdlib.h>
#include <string.h>

#include "lucid/sched.h"

static uint64_t *bucket_words(const lucid_cluster *c, int32_t f)
{
    return c->buckets + (size_t)f * (size_t)c->words;
}

static uint64_t *nonzero_words(const lucid_cluster *c, int32_t f)
{
    return c->nonzero + (size_t)f * (size_t)c->words2;
}

static void bucket_set(lucid_cluster *c, int32_t slot, int32_t f)
{
    int32_t w = slot >> 6;
    bucket_words(c, f)[w] |= (uint64_t)1 << (slot & 63);
    nonzero_words(c, f)[w >> 6] |= (uint64_t)1 << (w & 63);
    c->bucket_count[f]++;
}

static void bucket_clear(lucid_cluster *c, int32_t slot, int32_t f)
{
    int32_t w = slot >> 6;
    uint64_t *word = &bucket_words(c, f)[w];
    *word &= ~((uint64_t)1 << (slot & 63));
    if (*word == 0)
        nonzero_words(c, f)[w >> 6] &= ~((uint64_t)1 << (w & 63));
    c->bucket_count[f]--;
}

static uint64_t full_mask(int32_t gpus)
{
    return gpus >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << gpus) - 1);
}

/* Grows slot storage (nodes and bitsets) to hold `need` slots. */
static int reserve_slots(lucid_cluster *c, int32_t need)
{
    if (need <= c->cap_slots)
        return 0;
    int32_t cap = c->cap_slots ? c->cap_slots : 8;
    while (cap < need)
        cap *= 2;
    lucid_node *nodes = realloc(c->nodes, (size_t)cap * sizeof *nodes);
    if (!nodes)
        return -1;
    c->nodes = nodes;
    int32_t words = (cap + 63) / 64, words2 = (words + 63) / 64;
    if (words != c->words) {
        size_t buckets = (size_t)c->gpus_per_node + 1;
        uint64_t *bits = calloc(buckets * (size_t)words, sizeof *bits);
        uint64_t *nonzero = calloc(buckets * (size_t)words2, sizeof *nonzero);
        if (!bits || !nonzero) {
            free(bits);
            free(nonzero);
            return -1;
        }
        for (size_t f = 0; f < buckets && c->buckets; f++) {
            memcpy(bits + f * (size_t)words, c->buckets + f * (size_t)c->words,
                   (size_t)c->words * sizeof *bits);
            memcpy(nonzero + f * (size_t)words2, c->nonzero + f * (size_t)c->words2,
                   (size_t)c->words2 * sizeof *nonzero);
        }
        free(c->buckets);
        free(c->nonzero);
        c->buckets = bits;
        c->nonzero = nonzero;
        c->words = words;
        c->words2 = words2;
    }
    c->cap_slots = cap;
    return 0;
}

int lucid_cluster_init(lucid_cluster *c, int32_t nodes, int32_t gpus_per_node, lucid_error *err)
{
    memset(c, 0, sizeof *c);
    if (gpus_per_node < 1 || gpus_per_node > LUCID_MAX_GPUS_PER_NODE)
        return lucid_error_set(err, "gpus per node must be 1..%d, not %d", LUCID_MAX_GPUS_PER_NODE,
                               gpus_per_node);
    c->gpus_per_node = gpus_per_node;
    c->bucket_count = calloc((size_t)gpus_per_node + 1, sizeof *c->bucket_count);
    if (!c->bucket_count || reserve_slots(c, nodes > 0 ? nodes : 1) < 0) {
        lucid_cluster_free(c);
        return lucid_error_set(err, "out of memory for %d nodes", nodes);
    }
    for (int32_t i = 0; i < nodes; i++)
        lucid_cluster_add_node(c, i);
    return 0;
}

void lucid_cluster_free(lucid_cluster *c)
{
    free(c->nodes);
    free(c->buckets);
    free(c->nonzero);
    free(c->bucket_count);
    memset(c, 0, sizeof *c);
}

int32_t lucid_cluster_add_node(lucid_cluster *c, int32_t label)
{
    if (reserve_slots(c, c->nslots + 1) < 0)
        return -1;
    int32_t slot = c->nslots++;
    lucid_node *n = &c->nodes[slot];
    n->label = label;
    n->alive = 1;
    n->free = c->gpus_per_node;
    n->jobs = 0;
    n->free_mask = full_mask(c->gpus_per_node);
    bucket_set(c, slot, n->free);
    c->alive_nodes++;
    c->total_gpus += c->gpus_per_node;
    c->free_gpus += c->gpus_per_node;
    return slot;
}

void lucid_cluster_remove_node(lucid_cluster *c, int32_t slot)
{
    lucid_node *n = &c->nodes[slot];
    bucket_clear(c, slot, n->free);
    n->alive = 0;
    c->alive_nodes--;
    c->total_gpus -= c->gpus_per_node;
    c->free_gpus -= n->free;
}

static void set_free(lucid_cluster *c, int32_t slot, uint64_t mask)
{
    lucid_node *n = &c->nodes[slot];
    int32_t f = lucid_bits_set(mask); /* (inline: util.h) */
    if (f != n->free) {
        bucket_clear(c, slot, n->free);
        bucket_set(c, slot, f);
        c->free_gpus += f - n->free;
    }
    n->free = f;
    n->free_mask = mask;
}

void lucid_cluster_take(lucid_cluster *c, const lucid_alloc *a, int n)
{
    for (int i = 0; i < n; i++) {
        set_free(c, a[i].node, c->nodes[a[i].node].free_mask & ~a[i].mask);
        c->nodes[a[i].node].jobs++;
    }
}

void lucid_cluster_give(lucid_cluster *c, const lucid_alloc *a, int n)
{
    for (int i = 0; i < n; i++) {
        set_free(c, a[i].node, c->nodes[a[i].node].free_mask | a[i].mask);
        c->nodes[a[i].node].jobs--;
    }
}

int32_t lucid_cluster_first_in_bucket(const lucid_cluster *c, int32_t f, int32_t from)
{
    if (f < 0 || f > c->gpus_per_node || c->bucket_count[f] == 0 || from >= c->nslots)
        return -1;
    if (from < 0)
        from = 0;
    const uint64_t *bits = bucket_words(c, f);
    int32_t w = from >> 6;
    uint64_t word = bits[w] & (~(uint64_t)0 << (from & 63));
    if (word)
        return w * 64 + __builtin_ctzll(word);
    /* The next word not zero, from the second level. */
    const uint64_t *nonzero = nonzero_words(c, f);
    int32_t next = w + 1, w2 = next >> 6;
    if (w2 >= c->words2)
        return -1;
    uint64_t summary = nonzero[w2] & (~(uint64_t)0 << (next & 63));
    for (;;) {
        if (summary) {
            w = w2 * 64 + __builtin_ctzll(summary);
            return w * 64 + __builtin_ctzll(bits[w]);
        }
        if (++w2 >= c->words2)
            return -1;
        summary = nonzero[w2];
    }
}

uint64_t lucid_mask_lowest(uint64_t mask, int32_t count)
{
    /* Clear the lowest `count` bits of a copy; what was cleared is taken
     * (one operation per GPU: this runs for every placement and plan). */
    uint64_t rest = mask;
    for (int32_t k = 0; k < count && rest; k++)
        rest &= rest - 1;
    return mask & ~rest;
}

/* The `count` lowest free GPUs of a node. */
static lucid_alloc take_lowest(const lucid_cluster *c, int32_t slot, int32_t count)
{
    return (lucid_alloc){
        .node = slot, .gpus = count, .mask = lucid_mask_lowest(c->nodes[slot].free_mask, count)};
}

/* ---------------- consolidated placement (spec §4.1) ---------------- */

static int select_consolidate(const lucid_cluster *c, int32_t gpus, lucid_rng *rng,
                              lucid_alloc *out, int max_out)
{
    (void)rng;
    const int32_t g = c->gpus_per_node;
    if (c->free_gpus < gpus || gpus <= 0)
        return 0;
    if (gpus <= g) {
        /* Best fit: fewest free GPUs that still fit, first in list order. */
        for (int32_t f = gpus; f <= g; f++) {
            int32_t slot = lucid_cluster_first_in_bucket(c, f, 0);
            if (slot >= 0) {
                out[0] = take_lowest(c, slot, gpus);
                return 1;
            }
        }
        return 0;
    }
    int32_t whole = gpus / g, rest = gpus % g;
    if (c->bucket_count[g] < whole || whole + (rest ? 1 : 0) > max_out)
        return 0;
    int n = 0;
    int32_t slot = -1;
    for (int32_t k = 0; k < whole; k++) {
        slot = lucid_cluster_first_in_bucket(c, g, slot + 1);
        out[n++] = take_lowest(c, slot, g);
    }
    if (rest == 0)
        return n;
    /* The next node in descending-free order: another whole node if any,
     * else the first node with the most free GPUs below a whole node. */
    int32_t next = lucid_cluster_first_in_bucket(c, g, slot + 1);
    if (next < 0)
        for (int32_t f = g - 1; f >= 1 && next < 0; f--)
            next = lucid_cluster_first_in_bucket(c, f, 0);
    if (next < 0 || c->nodes[next].free < rest)
        return 0;
    out[n++] = take_lowest(c, next, rest);
    return n;
}

/* Greedy spread over nodes in descending free order (list order on ties). */
static int spread_descending(const lucid_cluster *c, int32_t gpus, lucid_alloc *out, int max_out)
{
    int n = 0;
    for (int32_t f = c->gpus_per_node; f >= 1 && gpus > 0; f--)
        for (int32_t slot = lucid_cluster_first_in_bucket(c, f, 0); slot >= 0 && gpus > 0;
             slot = lucid_cluster_first_in_bucket(c, f, slot + 1)) {
            if (n == max_out)
                return 0;
            int32_t take = f < gpus ? f : gpus;
            out[n++] = take_lowest(c, slot, take);
            gpus -= take;
        }
    return gpus == 0 ? n : 0;
}

static int select_consolidate_first(const lucid_cluster *c, int32_t gpus, lucid_rng *rng,
                                    lucid_alloc *out, int max_out)
{
    int n = select_consolidate(c, gpus, rng, out, max_out);
    if (n > 0 || c->free_gpus < gpus)
        return n;
    return spread_descending(c, gpus, out, max_out);
}

/* Seeded random spread: a random order of the nodes with free GPUs, filled greedily. */
static int select_random(const lucid_cluster *c, int32_t gpus, lucid_rng *rng, lucid_alloc *out,
                         int max_out)
{
    if (c->free_gpus < gpus || gpus <= 0)
        return 0;
    int32_t candidates[4096];
    int32_t count = 0;
    int n = 0;
    /* Reservoir of up to 4096 candidate nodes keeps this allocation-free; a
     * VC with more partially free nodes than that is sampled uniformly. */
    int64_t seen = 0;
    for (int32_t slot = 0; slot < c->nslots; slot++) {
        if (!c->nodes[slot].alive || c->nodes[slot].free == 0)
            continue;
        seen++;
        if (count < 4096)
            candidates[count++] = slot;
        else {
            uint64_t r = lucid_rng_below(rng, (uint64_t)seen);
            if (r < 4096)
                candidates[r] = slot;
        }
    }
    for (int32_t i = count - 1; i > 0; i--) {
        int32_t j = (int32_t)lucid_rng_below(rng, (uint64_t)i + 1);
        int32_t tmp = candidates[i];
        candidates[i] = candidates[j];
        candidates[j] = tmp;
    }
    for (int32_t i = 0; i < count && gpus > 0; i++) {
        if (n == max_out)
            return 0;
        int32_t f = c->nodes[candidates[i]].free;
        int32_t take = f < gpus ? f : gpus;
        out[n++] = take_lowest(c, candidates[i], take);
        gpus -= take;
    }
    return gpus == 0 ? n : 0;
}

static const lucid_placer_ops placer_consolidate = {
    "consolidate", "best-fit on one node; whole free nodes for multi-node jobs (reference)",
    select_consolidate};
static const lucid_placer_ops placer_consolidate_first = {
    "consolidate-first", "consolidated if possible, else spread over the freest nodes",
    select_consolidate_first};
static const lucid_placer_ops placer_random = {
    "random", "spread over nodes in a seeded random order", select_random};

static const lucid_placer_ops *const placers[] = {&placer_consolidate, &placer_consolidate_first,
                                                  &placer_random, NULL};

const lucid_placer_ops *const *lucid_placer_list(void) { return placers; }

const lucid_placer_ops *lucid_placer_find(const char *name)
{
    for (int i = 0; placers[i]; i++)
        if (strcmp(placers[i]->name, name) == 0)
            return placers[i];
    if (strcmp(name, "consolidateFirst") == 0) /* the reference's spelling */
        return &placer_consolidate_first;
    return NULL;
}
