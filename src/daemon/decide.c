/* decide.c — lucidd's decision step (decide.h) on plain arrays of live
 * jobs.  The rules are the shared scheduling core's (lucid/sched.h), the
 * ones the simulator runs: the queue orders (lucid_queue_sort: priority for
 * the main queue, least GPUs first for the profiler), the decision pass
 * (lucid_start_in_order: head of line while packing is off, every job tried
 * with partners first while it is on), the pair rule (lucid_pair_allowed)
 * and consolidated placement (the "consolidate" placer on a lucid_cluster
 * mirroring the free GPUs of this decision).  This file supplies what only
 * Slurm needs, as the pass's hooks: jobs with a fixed node count (-N) are
 * spread, no pair forms on a node with a released job not started yet, a
 * node with a packed job takes no new job, unprofiled jobs (score -1) are
 * never packed; and a reason for every job. */
#include "decide.h"

#include "lucid/sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Puts jobs in one of the core's queue orders; ties by Slurm job id (ids
 * grow with submission: the simulator's arrival order). */
static void order_jobs(decide_job *jobs, int njobs, lucid_queue_order order)
{
    lucid_queued *keys = malloc((size_t)(njobs > 0 ? njobs : 1) * sizeof *keys);
    decide_job *copy = malloc((size_t)(njobs > 0 ? njobs : 1) * sizeof *copy);
    if (!keys || !copy) {
        free(keys);
        free(copy);
        return; /* out of memory: decide in the given order */
    }
    for (int j = 0; j < njobs; j++)
        keys[j] = lucid_queued_make(order, jobs[j].priority, jobs[j].gpus, jobs[j].id,
                                    (uint32_t)j);
    lucid_queue_sort(keys, (size_t)njobs);
    memcpy(copy, jobs, (size_t)njobs * sizeof *copy);
    for (int j = 0; j < njobs; j++)
        jobs[j] = copy[keys[j].index];
    free(keys);
    free(copy);
}

/* The reasons of waiting jobs are written for every job at every decision:
 * plain appends instead of snprintf keep that cheap. */
static char *append_text(char *p, const char *end, const char *text)
{
    while (*text && p < end)
        *p++ = *text++;
    return p;
}

static char *append_number(char *p, const char *end, long long value)
{
    char digits[24];
    int n = 0;
    unsigned long long v = value < 0 ? (unsigned long long)-value : (unsigned long long)value;
    do
        digits[n++] = (char)('0' + v % 10);
    while ((v /= 10) > 0);
    if (value < 0 && p < end)
        *p++ = '-';
    while (n > 0 && p < end)
        *p++ = digits[--n];
    return p;
}

static void reason_blocked(decide_result *result, uint32_t blocked_by)
{
    char *p = result->reason, *end = result->reason + sizeof result->reason - 1;
    p = append_text(p, end, "waiting behind job ");
    p = append_number(p, end, blocked_by);
    p = append_text(p, end, " (higher priority, does not fit yet)");
    *p = '\0';
}

static void reason_waiting(decide_result *result, const decide_job *job)
{
    char *p = result->reason, *end = result->reason + sizeof result->reason - 1;
    p = append_text(p, end, "waiting for ");
    p = append_number(p, end, job->gpus);
    if (job->nodes > 0) {
        p = append_text(p, end, " free GPUs on ");
        p = append_number(p, end, job->nodes);
        p = append_text(p, end, job->nodes > 1 ? " nodes" : " node");
    } else {
        p = append_text(p, end, " free GPUs on any nodes");
    }
    p = append_text(p, end, job->node_ok ? " it may use (priority " : " (priority ");
    p = append_number(p, end, (long long)job->priority);
    p = append_text(p, end, ")");
    *p = '\0';
}

/* ---- placement through the shared core's consolidated placer ----
 * A lucid_cluster mirrors the free GPUs of the nodes for one decision; the
 * core's "consolidate" placer (src/sched/cluster.c, spec §4.1) chooses, so
 * simulation and the live scheduler place jobs with one implementation.
 * Slurm fixes a job's node count (-N); a request whose count is not the one
 * consolidated placement gives (e.g. 4 GPUs on 2 nodes) is spread instead:
 * the emptiest nodes, each holding its share. */
typedef struct placement {
    lucid_cluster cluster;
    const lucid_placer_ops *placer;
    int ready;
} placement;


static void placement_init(placement *p, const decide_node *nodes, int nnodes)
{
    memset(p, 0, sizeof *p);
    int per_node = 1;
    for (int i = 0; i < nnodes; i++)
        if (nodes[i].total_gpus > per_node)
            per_node = nodes[i].total_gpus;
    if (per_node > LUCID_MAX_GPUS_PER_NODE)
        per_node = LUCID_MAX_GPUS_PER_NODE;
    lucid_error err = {{0}};
    p->placer = lucid_placer_find("consolidate");
    if (!p->placer || nnodes <= 0 || lucid_cluster_init(&p->cluster, nnodes, per_node, &err) < 0)
        return;
    for (int i = 0; i < nnodes; i++) {
        int free_gpus = nodes[i].free_gpus < per_node ? nodes[i].free_gpus : per_node;
        int used = per_node - (free_gpus > 0 ? free_gpus : 0);
        if (used > 0) {
            lucid_alloc busy = {.node = i, .gpus = used,
                                .mask = lucid_mask_lowest(p->cluster.nodes[i].free_mask, used)};
            lucid_cluster_take(&p->cluster, &busy, 1);
        }
    }
    p->ready = 1;
}

static void placement_free(placement *p)
{
    if (p->ready)
        lucid_cluster_free(&p->cluster);
    p->ready = 0;
}

/* A node that now carries a packed job takes no new unpacked job: once the
 * partner ends Slurm believes those GPUs free and could hand them out. */
static void placement_block_node(placement *p, decide_node *nodes, int node)
{
    nodes[node].free_gpus = 0;
    if (!p->ready || p->cluster.nodes[node].free == 0)
        return;
    lucid_alloc rest = {.node = node, .gpus = p->cluster.nodes[node].free,
                        .mask = p->cluster.nodes[node].free_mask};
    lucid_cluster_take(&p->cluster, &rest, 1);
}

static int spread(int gpus, int nodes_asked, const unsigned char *node_ok,
                  const decide_node *nodes, int nnodes, int *chosen)
{
    int per_node = (gpus + nodes_asked - 1) / nodes_asked;
    int taken = 0;
    for (int round = 0; round < nodes_asked; round++) {
        int best = -1;
        for (int i = 0; i < nnodes; i++) {
            int used = node_ok && !node_ok[i];
            for (int k = 0; k < taken; k++)
                used |= chosen[k] == i;
            if (!used && nodes[i].free_gpus >= per_node &&
                (best < 0 || nodes[i].free_gpus > nodes[best].free_gpus))
                best = i;
        }
        if (best < 0)
            return 0;
        chosen[taken++] = best;
    }
    return taken;
}

/* Nodes a job may not use (node_ok) are taken from the placer's view for
 * one call and given back after: the core's placer stays unchanged. */
static int hide_nodes(placement *p, const unsigned char *node_ok, int nnodes, lucid_alloc **hidden)
{
    *hidden = NULL;
    if (!node_ok)
        return 0;
    int n = 0;
    for (int k = 0; k < nnodes; k++)
        n += !node_ok[k] && p->cluster.nodes[k].free > 0;
    if (n == 0 || !(*hidden = malloc((size_t)n * sizeof **hidden)))
        return n ? -1 : 0;
    n = 0;
    for (int k = 0; k < nnodes; k++)
        if (!node_ok[k] && p->cluster.nodes[k].free > 0)
            (*hidden)[n++] = (lucid_alloc){.node = k, .gpus = p->cluster.nodes[k].free,
                                           .mask = p->cluster.nodes[k].free_mask};
    lucid_cluster_take(&p->cluster, *hidden, n);
    return n;
}

/* How many nodes a job occupies: its -N, or what consolidation needs. */
static int nodes_needed(int gpus, int nodes_asked, int gpus_per_node)
{
    if (nodes_asked > 0)
        return nodes_asked;
    int needed = (gpus + gpus_per_node - 1) / gpus_per_node;
    return needed > 1 ? needed : 1;
}

static int placement_place(placement *p, const decide_job *job, decide_node *nodes, int nnodes,
                           int *chosen)
{
    int gpus = job->gpus;
    if (!p->ready)
        return 0;
    if (gpus <= 0) { /* no GPU asked: any usable node it may use */
        for (int k = 0; k < nnodes; k++)
            if (!job->node_ok || job->node_ok[k]) {
                chosen[0] = k;
                return 1;
            }
        return 0;
    }
    int per_node = p->cluster.gpus_per_node;
    int core_nodes = (gpus + per_node - 1) / per_node;
    int want = nodes_needed(gpus, job->nodes, per_node);
    if (want > 64)
        return 0;
    lucid_alloc allocs[64];
    int n;
    if (want == core_nodes) {
        lucid_alloc *hidden;
        int nhidden = hide_nodes(p, job->node_ok, nnodes, &hidden);
        if (nhidden < 0)
            return 0; /* out of memory: wait */
        n = p->placer->select(&p->cluster, gpus, NULL, allocs, 64);
        if (nhidden > 0)
            lucid_cluster_give(&p->cluster, hidden, nhidden);
        free(hidden);
    } else {
        n = spread(gpus, want, job->node_ok, nodes, nnodes, chosen);
        for (int k = 0; k < n; k++) {
            int share = (gpus + want - 1) / want;
            allocs[k] = (lucid_alloc){.node = chosen[k], .gpus = share,
                                      .mask = lucid_mask_lowest(
                                          p->cluster.nodes[chosen[k]].free_mask, share)};
        }
    }
    if (n <= 0)
        return 0;
    lucid_cluster_take(&p->cluster, allocs, n);
    for (int k = 0; k < n; k++) {
        chosen[k] = allocs[k].node;
        nodes[chosen[k]].free_gpus -= allocs[k].gpus;
        nodes[chosen[k]].settling++; /* released, not started yet */
    }
    return n;
}

int decide_place(int gpus, int nodes_asked, decide_node *nodes, int nnodes, int *chosen)
{
    placement p;
    placement_init(&p, nodes, nnodes);
    decide_job job = {.gpus = gpus, .nodes = nodes_asked};
    int n = placement_place(&p, &job, nodes, nnodes, chosen);
    placement_free(&p);
    return n;
}

static void write_nodes(decide_result *result, const decide_node *nodes, const int *chosen,
                        int count)
{
    size_t used = 0;
    result->nodes[0] = '\0';
    for (int k = 0; k < count && used < sizeof result->nodes; k++) {
        int n = snprintf(result->nodes + used, sizeof result->nodes - used, "%s%s",
                         k ? "," : "", nodes[chosen[k]].name);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* Running jobs that may take a partner, in buckets by GPU count (1..8) and
 * sharing score (0, 1, 2 and above), each in running order, with bounds
 * over the bucket and over blocks of PARTNER_BLOCK entries: the largest
 * priority, the smallest memory, the smallest score.  The pair rule is
 * monotone in each, so a bucket or block whose bounds fail holds no partner
 * and is skipped; the first partner in running order is still the one taken
 * (the bounds only skip, the rule itself decides), but a job that has no
 * partner (the common case) no longer looks at every running job. */
#define PARTNER_BLOCK 32
#define PARTNER_SCORES 3

typedef struct partner_bounds {
    double max_priority, min_gmem;
    int min_score;
} partner_bounds;

typedef struct partner_bucket {
    int *items;             /* running indices, ascending */
    int count;
    int *next;              /* next[k]: toward the next entry not known dead (taken,
                             * or on a node that settles); next[count] = count */
    partner_bounds all;
    partner_bounds *blocks; /* one per PARTNER_BLOCK items */
} partner_bucket;

typedef struct partner_index {
    partner_bucket bucket[LUCID_PACK_MAX_GPUS + 1][PARTNER_SCORES];
    int *items, *next;
    partner_bounds *blocks;
} partner_index;

static double gmem_or_zero(double gmem)
{
    return gmem == gmem ? gmem : 0; /* NaN counts as 0, as in lucid_pair_allowed */
}

static int may_take_partner(const decide_running *r)
{
    return r->job.gpus >= 1 && r->job.gpus <= LUCID_PACK_MAX_GPUS && !r->packed &&
           r->job.sharing_score >= 0 && r->gpu_list[0] && r->node >= 0;
}

static partner_bucket *bucket_of(partner_index *ix, const decide_job *job)
{
    int score = job->sharing_score < PARTNER_SCORES ? job->sharing_score : PARTNER_SCORES - 1;
    return &ix->bucket[job->gpus][score];
}

static void bounds_add(partner_bounds *b, const decide_job *job, int first)
{
    double gmem = gmem_or_zero(job->gmem_mib);
    if (first) {
        *b = (partner_bounds){job->priority == job->priority ? job->priority : -1e308, gmem,
                              job->sharing_score};
        return;
    }
    if (job->priority > b->max_priority)
        b->max_priority = job->priority;
    if (gmem < b->min_gmem)
        b->min_gmem = gmem;
    if (job->sharing_score < b->min_score)
        b->min_score = job->sharing_score;
}

/* Could a running job within these bounds be `job`'s partner? */
static int bounds_allow(const partner_bounds *b, const decide_job *job, const decide_params *params)
{
    return job->sharing_score + b->min_score <= params->score_sum &&
           gmem_or_zero(b->min_gmem) < params->gpu_memory_mib - gmem_or_zero(job->gmem_mib) &&
           (params->priority_ratio < 0 || /* a negative ratio reverses the order: no skipping */
            job->priority <= b->max_priority * params->priority_ratio);
}

static int index_partners(partner_index *ix, const decide_running *running, int nrunning)
{
    memset(ix, 0, sizeof *ix);
    int eligible = 0;
    for (int i = 0; i < nrunning; i++)
        if (may_take_partner(&running[i])) {
            bucket_of(ix, &running[i].job)->count++;
            eligible++;
        }
    size_t buckets = (size_t)(LUCID_PACK_MAX_GPUS + 1) * PARTNER_SCORES;
    ix->items = malloc((size_t)(eligible ? eligible : 1) * sizeof *ix->items);
    ix->next = malloc(((size_t)eligible + buckets) * sizeof *ix->next);
    ix->blocks = malloc((size_t)(eligible ? eligible : 1) * sizeof *ix->blocks);
    if (!ix->items || !ix->next || !ix->blocks)
        return -1;
    int used = 0, sentinels = 0;
    for (int g = 1; g <= LUCID_PACK_MAX_GPUS; g++)
        for (int sc = 0; sc < PARTNER_SCORES; sc++) {
            partner_bucket *b = &ix->bucket[g][sc];
            b->items = ix->items + used;
            b->blocks = ix->blocks + used; /* at most one block per item */
            b->next = ix->next + used + sentinels++;
            for (int k = 0; k <= b->count; k++)
                b->next[k] = k;
            used += b->count;
            b->count = 0;
        }
    for (int i = 0; i < nrunning; i++) {
        if (!may_take_partner(&running[i]))
            continue;
        partner_bucket *b = bucket_of(ix, &running[i].job);
        int k = b->count++;
        b->items[k] = i;
        bounds_add(&b->all, &running[i].job, k == 0);
        bounds_add(&b->blocks[k / PARTNER_BLOCK], &running[i].job, k % PARTNER_BLOCK == 0);
    }
    return 0;
}

static void free_partners(partner_index *ix)
{
    free(ix->items);
    free(ix->next);
    free(ix->blocks);
}

/* The first entry at or after k not known dead (path-halving, so a run of
 * dead entries is crossed once, not once per waiting job). */
static int alive_from(partner_bucket *b, int k)
{
    while (b->next[k] != k) {
        b->next[k] = b->next[b->next[k]];
        k = b->next[k];
    }
    return k;
}

/* The first candidate of bucket `b` (in running order, before `before`)
 * that the pair rule and the Slurm rules allow, or -1. */
static int first_in_bucket(const decide_job *job, partner_bucket *b, const decide_running *running,
                           const decide_node *nodes, const char *taken, int before,
                           const decide_params *params)
{
    lucid_pair_side newcomer = {job->gpus, job->gmem_mib, job->sharing_score, job->priority};
    int block = -1;
    for (int k = alive_from(b, 0); k < b->count; k = alive_from(b, k + 1)) {
        if (k / PARTNER_BLOCK != block) {
            block = k / PARTNER_BLOCK;
            if (!bounds_allow(&b->blocks[block], job, params)) {
                k = (block + 1) * PARTNER_BLOCK - 1; /* on to the next block */
                if (k >= b->count)
                    break;
                continue;
            }
        }
        int i = b->items[k];
        if (before >= 0 && i > before)
            return -1;
        const decide_running *other = &running[i];
        /* Taken in this decision, or on a node where a released job has not
         * started (Slurm could still hand it the GPUs of a partner that ends
         * meanwhile; settling only grows within a decision): dead for good. */
        if (taken[i] || nodes[other->node].settling > 0) {
            b->next[k] = k + 1;
            continue;
        }
        if (job->node_ok && !job->node_ok[other->node])
            continue; /* a node the newcomer may not use (-w, --exclude) */
        /* The pair rule itself is the core's (the simulator's Lucid uses it too). */
        lucid_pair_side partner = {other->job.gpus, other->job.gmem_mib,
                                   other->job.sharing_score, other->job.priority};
        if (lucid_pair_allowed(&newcomer, &partner, params->gpu_memory_mib, params->score_sum,
                               params->priority_ratio))
            return i;
    }
    return -1;
}

/* Lucid's affine pair: same GPU count (<= 8), scores sum <= score_sum,
 * memory fits in one GPU, and the newcomer's priority at most
 * priority_ratio times the partner's; the first such running job. */
static int find_partner(const decide_job *job, const decide_running *running,
                        const decide_node *nodes, partner_index *ix, const char *taken,
                        const decide_params *params)
{
    int g = job->gpus;
    if (g < 1 || g > LUCID_PACK_MAX_GPUS || job->nodes > 1 || job->sharing_score < 0)
        return -1;
    int best = -1;
    for (int sc = 0; sc < PARTNER_SCORES; sc++) {
        partner_bucket *b = &ix->bucket[g][sc];
        if (b->count == 0 || !bounds_allow(&b->all, job, params))
            continue;
        int i = first_in_bucket(job, b, running, nodes, taken, best, params);
        if (i >= 0 && (best < 0 || i < best))
            best = i;
    }
    return best;
}

/* The most free GPUs on one node, and how many nodes have at least `need`:
 * a job that cannot fit is refused without scanning the nodes. */
static int max_free(const decide_node *nodes, int nnodes)
{
    int best = 0;
    for (int i = 0; i < nnodes; i++)
        if (nodes[i].free_gpus > best)
            best = nodes[i].free_gpus;
    return best;
}

static int nodes_with(const decide_node *nodes, int nnodes, int need)
{
    int count = 0;
    for (int i = 0; i < nnodes; i++)
        count += nodes[i].free_gpus >= need;
    return count;
}

/* The state of one main-queue pass, shared by its two hooks. */
typedef struct main_pass {
    const decide_job *jobs; /* in queue order */
    decide_result *results;
    const decide_running *running;
    decide_node *nodes;
    int nnodes;
    const decide_params *params;
    placement place;
    partner_index ix;
    char *taken; /* running jobs that took a partner in this decision */
    int most_free, whole_nodes;
} main_pass;

/* The pass's pack hook: onto the first running job the pair rule allows. */
static int pack_job(void *ctx, size_t position)
{
    main_pass *m = ctx;
    const decide_job *job = &m->jobs[position];
    decide_result *result = &m->results[position];
    int partner =
        m->taken ? find_partner(job, m->running, m->nodes, &m->ix, m->taken, m->params) : -1;
    if (partner < 0)
        return 0;
    const decide_running *other = &m->running[partner];
    m->taken[partner] = 1;
    result->start = 1;
    result->partner = other->job.id;
    snprintf(result->nodes, sizeof result->nodes, "%s", m->nodes[other->node].name);
    snprintf(result->gpu_list, sizeof result->gpu_list, "%s", other->gpu_list);
    snprintf(result->reason, sizeof result->reason,
             "packed with job %u (scores %d+%d, %.0f+%.0f MiB, priority %.0f <= %g x %.0f)",
             other->job.id, job->sharing_score, other->job.sharing_score, job->gmem_mib,
             other->job.gmem_mib, job->priority, m->params->priority_ratio, other->job.priority);
    int had = m->nodes[other->node].free_gpus;
    placement_block_node(&m->place, m->nodes, other->node);
    if (had >= 8)
        m->whole_nodes--;
    if (had > 0 && had == m->most_free)
        m->most_free = max_free(m->nodes, m->nnodes);
    return 1;
}

/* The pass's place hook: consolidated placement (or spread for -N). */
static int place_job(void *ctx, size_t position)
{
    main_pass *m = ctx;
    const decide_job *job = &m->jobs[position];
    decide_result *result = &m->results[position];
    int want = nodes_needed(job->gpus, job->nodes,
                            m->place.ready ? m->place.cluster.gpus_per_node : 8);
    int per_node = want > 1 ? (job->gpus + want - 1) / want : job->gpus;
    int may_fit = want <= 64 && per_node <= m->most_free &&
                  (want <= 1 || per_node < 8 || m->whole_nodes >= want);
    int chosen[64];
    int count = may_fit ? placement_place(&m->place, job, m->nodes, m->nnodes, chosen) : 0;
    if (count <= 0) {
        reason_waiting(result, job);
        return 0;
    }
    result->start = 1;
    write_nodes(result, m->nodes, chosen, count);
    snprintf(result->reason, sizeof result->reason,
             "priority %.0f is the highest waiting; placed on %.120s", job->priority,
             result->nodes);
    m->most_free = max_free(m->nodes, m->nnodes);
    m->whole_nodes = nodes_with(m->nodes, m->nnodes, 8);
    return 1;
}

static void clear_results(decide_result *results, const decide_job *jobs, int njobs)
{
    for (int j = 0; j < njobs; j++) {
        results[j].id = jobs[j].id;
        results[j].start = 0;
        results[j].partner = 0;
        results[j].nodes[0] = results[j].gpu_list[0] = results[j].reason[0] = '\0';
    }
}

int decide_main(decide_job *jobs, int njobs, const decide_running *running, int nrunning,
                decide_node *nodes, int nnodes, const decide_params *params,
                decide_result *results)
{
    order_jobs(jobs, njobs, LUCID_ORDER_PRIORITY);
    clear_results(results, jobs, njobs);
    main_pass m = {.jobs = jobs, .results = results, .running = running, .nodes = nodes,
                   .nnodes = nnodes, .params = params,
                   .taken = calloc((size_t)(nrunning > 0 ? nrunning : 1), 1),
                   .most_free = max_free(nodes, nnodes),
                   .whole_nodes = nodes_with(nodes, nnodes, 8)}; /* for multi-node jobs */
    if (index_partners(&m.ix, running, nrunning) < 0) { /* out of memory: no packing */
        free(m.taken);
        m.taken = NULL;
    }
    placement_init(&m.place, nodes, nnodes);
    lucid_start_hooks hooks = {.ctx = &m, .pack = pack_job, .place = place_job};
    size_t stopped_at;
    size_t started = lucid_start_in_order((size_t)njobs, params->packing, &hooks, &stopped_at);
    for (size_t j = stopped_at + 1; j < (size_t)njobs; j++)
        reason_blocked(&results[j], jobs[stopped_at].id);
    placement_free(&m.place);
    free_partners(&m.ix);
    free(m.taken);
    return (int)started;
}

/* The state of one profiling pass, for its place hook. */
typedef struct profile_pass {
    const decide_job *jobs; /* least GPUs first */
    decide_result *results;
    decide_node *nodes;
    int nnodes;
    placement place;
} profile_pass;

static int profile_job(void *ctx, size_t position)
{
    profile_pass *p = ctx;
    const decide_job *job = &p->jobs[position];
    decide_result *result = &p->results[position];
    int chosen[64];
    int count = placement_place(&p->place, job, p->nodes, p->nnodes, chosen);
    if (count <= 0) {
        snprintf(result->reason, sizeof result->reason,
                 "waiting for %d free GPUs on the profiling partition", job->gpus);
        return 0;
    }
    result->start = 1;
    write_nodes(result, p->nodes, chosen, count);
    snprintf(result->reason, sizeof result->reason, "profiling on %.120s", result->nodes);
    return 1;
}

int decide_profiling(decide_job *jobs, int njobs, decide_node *nodes, int nnodes,
                     decide_result *results)
{
    order_jobs(jobs, njobs, LUCID_ORDER_FEWEST_GPUS);
    clear_results(results, jobs, njobs);
    profile_pass p = {.jobs = jobs, .results = results, .nodes = nodes, .nnodes = nnodes};
    placement_init(&p.place, nodes, nnodes);
    lucid_start_hooks hooks = {.ctx = &p, .place = profile_job};
    size_t stopped_at;
    size_t started = lucid_start_in_order((size_t)njobs, 0, &hooks, &stopped_at);
    for (size_t j = stopped_at + 1; j < (size_t)njobs; j++)
        snprintf(results[j].reason, sizeof results[j].reason,
                 "waiting for the profiler behind job %u (fewer GPUs first)", jobs[stopped_at].id);
    placement_free(&p.place);
    return (int)started;
}
