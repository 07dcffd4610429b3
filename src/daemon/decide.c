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

#include "lucid/backfill.h"
#include "lucid/eta.h"
#include "lucid/sched.h"
#include "lucid/util.h"

#include <math.h>
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
    /* Nodes found short of CPUs or memory for some job in this decision
     * (fit.h; rooms only shrink within a decision): hidden from the placer
     * for every later job they are short for, so a busy node is not chosen
     * and refused again for each of 10,000 waiting jobs. */
    int *short_nodes;
    int nshort;
    size_t short_cap, hidden_cap, shown_cap;
    lucid_alloc *hidden;  /* per short node: its free GPUs now out of the placer's view */
    unsigned char *shown; /* per short node: given back for the job being placed */
} placement;


/* The cluster's node size: the largest node's GPUs (smaller nodes are
 * nodes of that size with GPUs that are never free). */
static int per_node_of(const decide_node *nodes, int nnodes)
{
    int per_node = 1;
    for (int i = 0; i < nnodes; i++)
        if (nodes[i].total_gpus > per_node)
            per_node = nodes[i].total_gpus;
    return per_node > LUCID_MAX_GPUS_PER_NODE ? LUCID_MAX_GPUS_PER_NODE : per_node;
}

/* A core cluster whose free GPUs are the nodes' free counts. */
static int mirror_cluster(lucid_cluster *c, const decide_node *nodes, int nnodes)
{
    int per_node = per_node_of(nodes, nnodes);
    lucid_error err = {{0}};
    if (nnodes <= 0 || lucid_cluster_init(c, nnodes, per_node, &err) < 0)
        return -1;
    for (int i = 0; i < nnodes; i++) {
        int free_gpus = nodes[i].free_gpus < per_node ? nodes[i].free_gpus : per_node;
        int used = per_node - (free_gpus > 0 ? free_gpus : 0);
        if (used > 0) {
            lucid_alloc busy = {.node = i, .gpus = used,
                                .mask = lucid_mask_lowest(c->nodes[i].free_mask, used)};
            lucid_cluster_take(c, &busy, 1);
        }
    }
    return 0;
}

static void placement_init(placement *p, const decide_node *nodes, int nnodes)
{
    memset(p, 0, sizeof *p);
    p->placer = lucid_placer_find("consolidate");
    if (!p->placer || mirror_cluster(&p->cluster, nodes, nnodes) < 0)
        return;
    p->ready = 1;
}

static void placement_free(placement *p)
{
    if (p->ready)
        lucid_cluster_free(&p->cluster);
    p->ready = 0;
    free(p->short_nodes);
    free(p->hidden);
    free(p->shown);
    p->short_nodes = NULL;
    p->hidden = NULL;
    p->shown = NULL;
    p->nshort = 0;
    p->short_cap = p->hidden_cap = p->shown_cap = 0;
}

static int short_index(const placement *p, int node)
{
    for (int k = 0; k < p->nshort; k++)
        if (p->short_nodes[k] == node)
            return k;
    return -1;
}

/* Takes the node's free GPUs out of the placer's view (short node k). */
static void hide_short(placement *p, int k)
{
    int node = p->short_nodes[k];
    p->hidden[k] = (lucid_alloc){.node = node, .gpus = p->cluster.nodes[node].free,
                                 .mask = p->cluster.nodes[node].free_mask};
    if (p->hidden[k].gpus > 0)
        lucid_cluster_take(&p->cluster, &p->hidden[k], 1);
    p->shown[k] = 0;
}

/* `node` lacked room for a job: hidden from now on (0, or -1 out of memory). */
static int note_short(placement *p, int node)
{
    int k = short_index(p, node);
    if (k >= 0) {
        if (p->shown[k])
            hide_short(p, k);
        return 0;
    }
    size_t need = (size_t)p->nshort + 1;
    if (LUCID_GROW(p->short_nodes, p->short_cap, need) < 0 ||
        LUCID_GROW(p->hidden, p->hidden_cap, need) < 0 || LUCID_GROW(p->shown, p->shown_cap, need) < 0)
        return -1;
    p->short_nodes[p->nshort] = node;
    hide_short(p, p->nshort++);
    return 0;
}

/* Gives the placer back the short nodes that have room for this job. */
static void show_fitting(placement *p, const decide_job *job, const decide_node *nodes)
{
    int here = job->gpus < p->cluster.gpus_per_node ? job->gpus : p->cluster.gpus_per_node;
    for (int k = 0; k < p->nshort; k++) {
        int node = p->short_nodes[k];
        if (p->hidden[k].gpus == 0 ||
            (job->fit && !fit_room_ok(job->fit, here, nodes[node].free_gpus,
                                      nodes[node].total_gpus, &nodes[node].room)))
            continue;
        lucid_cluster_give(&p->cluster, &p->hidden[k], 1);
        p->hidden[k].gpus = 0;
        p->shown[k] = 1;
    }
}

/* After the job: the short nodes shown for it are hidden again. */
static void hide_shown(placement *p)
{
    for (int k = 0; k < p->nshort; k++)
        if (p->shown[k])
            hide_short(p, k);
}

/* A node that now carries a packed job takes no new unpacked job: once the
 * partner ends Slurm believes those GPUs free and could hand them out. */
static void placement_block_node(placement *p, decide_node *nodes, int node)
{
    nodes[node].free_gpus = 0;
    int k = short_index(p, node);
    if (k >= 0)
        p->hidden[k].gpus = 0; /* hidden stays taken: blocked */
    if (!p->ready || p->cluster.nodes[node].free == 0)
        return;
    lucid_alloc rest = {.node = node, .gpus = p->cluster.nodes[node].free,
                        .mask = p->cluster.nodes[node].free_mask};
    lucid_cluster_take(&p->cluster, &rest, 1);
}

static int spread(const placement *p, int gpus, int nodes_asked, const unsigned char *node_ok,
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
            if (!used && nodes[i].free_gpus >= per_node && p->cluster.nodes[i].free >= per_node &&
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

/* The core placer's (or spread's) choice for `gpus` on the nodes `mask`
 * allows, not yet taken.  Count of allocations, 0 when it does not fit. */
static int placement_choose(placement *p, int gpus, int nodes_asked, const unsigned char *mask,
                            const decide_node *nodes, int nnodes, lucid_alloc *allocs)
{
    int per_node = p->cluster.gpus_per_node;
    int core_nodes = (gpus + per_node - 1) / per_node;
    int want = nodes_needed(gpus, nodes_asked, per_node);
    if (want > 64)
        return 0;
    if (want == core_nodes) {
        lucid_alloc *hidden;
        int nhidden = hide_nodes(p, mask, nnodes, &hidden);
        if (nhidden < 0)
            return 0; /* out of memory: wait */
        int n = p->placer->select(&p->cluster, gpus, NULL, allocs, 64);
        if (nhidden > 0)
            lucid_cluster_give(&p->cluster, hidden, nhidden);
        free(hidden);
        return n;
    }
    int chosen[64];
    int n = spread(p, gpus, want, mask, nodes, nnodes, chosen);
    int share = (gpus + want - 1) / want;
    for (int k = 0; k < n; k++)
        allocs[k] = (lucid_alloc){.node = chosen[k], .gpus = share,
                                  .mask = lucid_mask_lowest(p->cluster.nodes[chosen[k]].free_mask,
                                                            share)};
    return n;
}

/* The first allocation whose node has no room for the job's CPUs and
 * memory (fit.h: the site's rules; jobs placed earlier in this decision
 * counted), or -1 when all have. */
static int first_without_room(const decide_job *job, const decide_node *nodes,
                              const lucid_alloc *allocs, int n)
{
    if (!job->fit)
        return -1;
    for (int k = 0; k < n; k++) {
        const decide_node *node = &nodes[allocs[k].node];
        if (!fit_room_ok(job->fit, allocs[k].gpus, node->free_gpus, node->total_gpus, &node->room))
            return k;
    }
    return -1;
}

/* A node refused for room is hidden and the placer asked again, a few
 * times: nodes short of CPUs or memory are rare, and each try is one
 * placer call. */
#define ROOM_TRIES 8

static int placement_place(placement *p, const decide_job *job, decide_node *nodes, int nnodes,
                           int *chosen)
{
    int gpus = job->gpus;
    if (!p->ready)
        return 0;
    if (gpus <= 0) { /* no GPU asked: any usable node it may use */
        for (int k = 0; k < nnodes; k++)
            if ((!job->node_ok || job->node_ok[k]) &&
                (!job->fit || fit_room_ok(job->fit, 0, nodes[k].free_gpus, nodes[k].total_gpus,
                                          &nodes[k].room))) {
                chosen[0] = k;
                if (job->fit)
                    fit_room_take(job->fit, 0, &nodes[k].room);
                return 1;
            }
        return 0;
    }
    lucid_alloc allocs[64];
    unsigned char *veto = NULL; /* node_ok less the nodes refused for room (spread) */
    const unsigned char *mask = job->node_ok;
    int n = 0;
    show_fitting(p, job, nodes);
    for (int tries = 0;; tries++) {
        n = placement_choose(p, gpus, job->nodes, mask, nodes, nnodes, allocs);
        int bad = n > 0 ? first_without_room(job, nodes, allocs, n) : -1;
        if (bad < 0)
            break;
        if (tries + 1 >= ROOM_TRIES || note_short(p, allocs[bad].node) < 0 ||
            (!veto && !(veto = malloc((size_t)nnodes)))) {
            n = 0;
            break;
        }
        if (mask != veto) {
            for (int k = 0; k < nnodes; k++)
                veto[k] = !job->node_ok || job->node_ok[k];
            mask = veto;
        }
        veto[allocs[bad].node] = 0;
    }
    free(veto);
    if (n <= 0) {
        hide_shown(p);
        return 0;
    }
    lucid_cluster_take(&p->cluster, allocs, n);
    for (int k = 0; k < n; k++) {
        chosen[k] = allocs[k].node;
        decide_node *node = &nodes[chosen[k]];
        if (job->fit) {
            fit_room_take(job->fit, allocs[k].gpus, &node->room);
            if (job->fit->whole) { /* Slurm gives it the whole node */
                lucid_alloc rest = {.node = chosen[k], .gpus = p->cluster.nodes[chosen[k]].free,
                                    .mask = p->cluster.nodes[chosen[k]].free_mask};
                if (rest.gpus > 0)
                    lucid_cluster_take(&p->cluster, &rest, 1);
                node->free_gpus = allocs[k].gpus;
            }
        }
        node->free_gpus -= allocs[k].gpus;
        node->slurm_free -= allocs[k].gpus;
        node->settling++; /* released, not started yet */
    }
    hide_shown(p);
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

/* ---- the core's picture of this decision, for the availability profile ----
 * Start-time estimates (eta.h) and reservations (backfill.h) are the shared
 * core's, and they read a lucid_sched: this one mirrors the nodes' free
 * GPUs now, the busy jobs (running, holding GPUs on their nodes since their
 * start) and the waiting jobs (queued in order).  It is only looked at,
 * never run: no policy, no event. */
typedef struct mirror {
    lucid_sched s;
    lucid_job *jobs;
    lucid_jobrun *run;
    double *estimate; /* per mirror job, what lucid_backfill_job_estimate returns */
    lucid_backfill bf;
    int ready;
    double *priority;          /* Lucid's packing replay only (mirror_lucid) */
    lucid_lucid_inputs inputs; /* ... its pair rule, the switch on */
} mirror;

static void mirror_free(mirror *m)
{
    if (m->ready)
        lucid_sched_free(&m->s);
    lucid_backfill_free(&m->bf);
    free(m->jobs);
    free(m->run);
    free(m->estimate);
    free(m->priority);
    memset(m, 0, sizeof *m);
}

/* A node with a packed job takes no new unpacked job (placement_block_node). */
static void mirror_block_node(mirror *m, int node)
{
    lucid_node *n = &m->s.cluster.nodes[node];
    if (!n->alive || n->free == 0)
        return;
    lucid_alloc rest = {.node = node, .gpus = n->free, .mask = n->free_mask};
    lucid_cluster_take(&m->s.cluster, &rest, 1);
}

static double estimate_of(const decide_job *job)
{
    if (job->estimate_s > 0)
        return job->estimate_s;
    return job->gpus > 0 && job->priority > 0 ? job->priority / job->gpus : -1;
}

typedef struct id_index {
    uint32_t id;
    int32_t index;
} id_index;

static int by_job_id(const void *a, const void *b)
{
    uint32_t x = ((const id_index *)a)->id, y = ((const id_index *)b)->id;
    return x < y ? -1 : x > y;
}

/* Busy job `j` of the mirror holds its GPUs from b->start on; a packed pair
 * is linked, so that its GPUs come back when the later of the two ends. */
static int mirror_busy(mirror *m, int32_t j, const decide_busy *b)
{
    lucid_sched *s = &m->s;
    m->jobs[j].gpu_num = b->gpus;
    m->jobs[j].time_limit = -1;
    m->estimate[j] = b->estimate_s;
    lucid_jobrun *r = &m->run[j];
    r->status = LUCID_DONE; /* on none of these nodes: not in the picture */
    r->partner = -1;
    r->run_prev = r->run_next = -1;
    if (b->nnodes <= 0 || b->gpus <= 0)
        return 0;
    int nn = b->nnodes < DECIDE_BUSY_NODES ? b->nnodes : DECIDE_BUSY_NODES;
    int share = (b->gpus + nn - 1) / nn;
    if (share > s->cluster.gpus_per_node)
        share = s->cluster.gpus_per_node;
    if (LUCID_GROW(s->allocs, s->cap_allocs, s->nallocs + (size_t)nn) < 0)
        return -1;
    r->alloc_off = (int32_t)s->nallocs;
    uint64_t all = s->cluster.gpus_per_node >= 64
                       ? ~(uint64_t)0
                       : ((uint64_t)1 << s->cluster.gpus_per_node) - 1;
    for (int k = 0; k < nn; k++) {
        if (b->node[k] < 0 || b->node[k] >= s->cluster.nslots)
            continue;
        s->allocs[s->nallocs++] =
            (lucid_alloc){.node = b->node[k], .gpus = share, .mask = lucid_mask_lowest(all, share)};
    }
    r->alloc_n = (int32_t)(s->nallocs - (size_t)r->alloc_off);
    r->status = LUCID_RUNNING;
    r->start_time = b->start < s->now ? b->start : s->now;
    r->run_prev = s->run_tail;
    if (s->run_tail >= 0)
        m->run[s->run_tail].run_next = j;
    else
        s->run_head = j;
    s->run_tail = j;
    s->nrunning++;
    return 0;
}

/* Builds the picture: `busy` and then `more` (both may be empty) hold GPUs,
 * `waiting` is the queue in order, and `extra` job slots follow them
 * unused (mirror_lucid's arrivals).  `mode`/`margin`: backfill's. */
static int mirror_build(mirror *m, const decide_node *nodes, int nnodes, int64_t now,
                        const decide_busy *busy, int nbusy, const decide_busy *more, int nmore,
                        const decide_job *waiting, int nwaiting, int extra, int mode,
                        double margin)
{
    memset(m, 0, sizeof *m);
    size_t nall = (size_t)nbusy + (size_t)nmore,
           total = nall + (size_t)nwaiting + (size_t)(extra > 0 ? extra : 0) + 1;
    m->jobs = calloc(total, sizeof *m->jobs);
    m->run = calloc(total, sizeof *m->run);
    m->estimate = calloc(total, sizeof *m->estimate);
    id_index *ids = malloc((nall + 1) * sizeof *ids);
    lucid_error err = {{0}};
    int per_node = per_node_of(nodes, nnodes);
    if (!m->jobs || !m->run || !m->estimate || !ids || nnodes <= 0 ||
        lucid_sched_init(&m->s, m->jobs, m->run, 0, nnodes, per_node,
                         lucid_placer_find("consolidate"), NULL, lucid_semantics_fixed(), 1,
                         &err) < 0) {
        free(ids);
        return -1;
    }
    m->ready = 1;
    lucid_sched *s = &m->s;
    s->now = now;
    lucid_cluster_free(&s->cluster);
    if (mirror_cluster(&s->cluster, nodes, nnodes) < 0) {
        memset(&s->cluster, 0, sizeof s->cluster);
        free(ids);
        return -1;
    }
    for (size_t j = 0; j < nall; j++) {
        const decide_busy *b = j < (size_t)nbusy ? &busy[j] : &more[j - (size_t)nbusy];
        ids[j] = (id_index){b->id, (int32_t)j};
        if (mirror_busy(m, (int32_t)j, b) < 0) {
            free(ids);
            return -1;
        }
    }
    qsort(ids, nall, sizeof *ids, by_job_id);
    for (size_t j = 0; j < nall; j++) {
        const decide_busy *b = j < (size_t)nbusy ? &busy[j] : &more[j - (size_t)nbusy];
        id_index key = {b->partner, 0};
        const id_index *hit = b->partner ? bsearch(&key, ids, nall, sizeof *ids, by_job_id) : NULL;
        if (hit && m->run[j].status == LUCID_RUNNING &&
            m->run[hit->index].status == LUCID_RUNNING)
            m->run[j].partner = hit->index;
    }
    free(ids);
    if (LUCID_GROW(s->qbuf, s->qcap, (size_t)nwaiting + 1) < 0)
        return -1;
    s->queue = s->qbuf;
    for (int k = 0; k < nwaiting; k++) {
        int32_t j = (int32_t)nall + k;
        m->jobs[j].gpu_num = waiting[k].gpus;
        m->jobs[j].time_limit = -1;
        m->estimate[j] = estimate_of(&waiting[k]);
        m->run[j] = (lucid_jobrun){.status = LUCID_PENDING, .start_time = -1, .end_time = -1,
                                   .partner = -1, .run_prev = -1, .run_next = -1};
        s->queue[k] = j;
    }
    s->qlen = (size_t)nwaiting;
    m->bf.cfg = (lucid_backfill_config){.mode = mode, .estimate = LUCID_BACKFILL_EST_MODEL,
                                        .margin = margin >= 1 ? margin : 1};
    m->bf.estimate = m->estimate;
    return 0;
}

/* A mirror job's side of the pair rule: sharing score (-1 unknown, or a
 * job on several nodes: never a partner, as decide_main has it), memory,
 * priority. */
static void mirror_pair_side(mirror *m, int32_t j, int score, double gmem_mib, double priority,
                             int nodes)
{
    m->run[j].share_score = score < 0 || nodes > 1 ? 1000 : score;
    m->jobs[j].gmem = gmem_mib == gmem_mib && gmem_mib > 0 ? gmem_mib : 0;
    m->priority[j] = priority;
}

/* Lucid while its packing is on, as the simulator replays it (eta.h,
 * REPLAY_GREEDY): the mirror gets priorities, the pair rule's inputs with
 * the switch on, each job's side of the rule, and the horizon's recent
 * arrivals as jobs of their own after the queue, noted into `arrivals`
 * (mirror indices, oldest first) for the replay's arrivals to come.  The
 * estimates stay the mirror's (priority / GPUs is lucidd's estimate).
 * Returns how many arrivals, or -1 (out of memory). */
static int mirror_lucid(mirror *m, const decide_horizon *h, const decide_job *waiting,
                        int nwaiting, const decide_params *params, lucid_eta_arrival *arrivals)
{
    int nbusy = h ? h->nbusy : 0, narr = h ? h->narrivals : 0;
    size_t total = (size_t)nbusy + (size_t)nwaiting + (size_t)narr + 1;
    if (!(m->priority = calloc(total, sizeof *m->priority)))
        return -1;
    m->inputs = (lucid_lucid_inputs){.gmem_limit = params->gpu_memory_mib,
                                     .priority_ratio = params->priority_ratio,
                                     .score_sum = params->score_sum, .switch_initial = 1};
    for (int j = 0; j < nbusy; j++) {
        const decide_busy *b = &h->busy[j];
        double priority = b->priority > 0 ? b->priority : b->estimate_s * (b->gpus > 0 ? b->gpus : 1);
        mirror_pair_side(m, j, b->sharing_score, b->gmem_mib, priority, b->nnodes);
    }
    for (int k = 0; k < nwaiting; k++)
        mirror_pair_side(m, m->s.queue[k], waiting[k].sharing_score, waiting[k].gmem_mib,
                         waiting[k].priority, waiting[k].nodes);
    for (int a = 0; a < narr; a++) {
        const decide_job *job = &h->arrivals[a].job;
        int32_t j = (int32_t)((size_t)nbusy + (size_t)nwaiting + (size_t)a);
        m->jobs[j].gpu_num = job->gpus;
        m->jobs[j].time_limit = -1;
        m->estimate[j] = estimate_of(job);
        m->run[j] = (lucid_jobrun){.status = LUCID_DONE, .start_time = -1, .end_time = -1,
                                   .partner = -1, .run_prev = -1, .run_next = -1};
        mirror_pair_side(m, j, job->sharing_score, job->gmem_mib, job->priority, job->nodes);
        arrivals[a] = (lucid_eta_arrival){h->arrivals[a].time, j};
    }
    m->s.priority = m->priority;
    m->s.lucid = &m->inputs;
    return narr;
}

int decide_predict(decide_job *jobs, int njobs, int order, const decide_node *nodes, int nnodes,
                   const decide_params *params, const decide_horizon *horizon, decide_eta *out)
{
    order_jobs(jobs, njobs, order ? LUCID_ORDER_FEWEST_GPUS : LUCID_ORDER_PRIORITY);
    for (int k = 0; k < njobs; k++)
        out[k] = (decide_eta){jobs[k].id, -1, -1, -1};
    if (njobs <= 0 || nnodes <= 0)
        return 0;
    mirror m = {0};
    int rc = -1;
    lucid_eta_table none = {0};
    lucid_eta_table *table = horizon && horizon->table ? horizon->table : &none;
    lucid_eta_plan plan = {0};
    lucid_eta *eta = malloc((size_t)njobs * sizeof *eta);
    int64_t *reserved_at = NULL;
    /* Lucid's main queue while packing is on: the simulator's packing
     * replay, with its arrivals to come (not with backfill: its replay
     * then is backfill's, as the simulator's). */
    int greedy = params && params->packing && !params->backfill && order == 0;
    int narr = greedy && horizon && horizon->narrivals > 0 ? horizon->narrivals : 0;
    lucid_eta_arrival *arrivals = malloc((size_t)(narr + 1) * sizeof *arrivals);
    lucid_eta_table view;
    int built = eta && arrivals &&
                mirror_build(&m, nodes, nnodes, horizon ? horizon->now : 0,
                             horizon ? horizon->busy : NULL, horizon ? horizon->nbusy : 0, NULL, 0,
                             jobs, njobs, narr, params ? params->backfill : LUCID_BACKFILL_NONE,
                             params ? params->backfill_margin : 1) == 0;
    if (built && greedy) {
        built = mirror_lucid(&m, horizon, jobs, njobs, params, arrivals) >= 0;
        /* The table as it is, its arrivals those of this mirror (the
         * replay reads them by mirror index; it writes nothing to it). */
        view = *table;
        view.arrivals = arrivals;
        view.arr_head = 0;
        view.narr = view.cap_arr = (size_t)narr;
        table = &view;
    }
    if (built && params && params->backfill) {
        /* Who gets a reservation, as decide_main's pass has it: the replay
         * places the jobs that hold one first and lets later holders pass
         * a job the window or the size class refuses one (eta.c). */
        m.bf.cfg.window = params->backfill_window > 0 ? params->backfill_window : 0;
        m.bf.cfg.min_gpus =
            params->backfill_min_gpus > 0 ? (int32_t)params->backfill_min_gpus : 0;
        size_t nmirror = (size_t)m.s.qlen + (size_t)(horizon ? horizon->nbusy : 0) + 1;
        reserved_at = malloc(nmirror * sizeof *reserved_at);
        built = reserved_at != NULL;
        for (size_t j = 0; built && j < nmirror; j++)
            reserved_at[j] = -1;
        for (int k = 0; built && k < njobs; k++)
            if (jobs[k].holds)
                reserved_at[m.s.queue[k]] = horizon ? horizon->now : 0;
        m.bf.reserved_at = reserved_at;
    }
    if (built && lucid_eta_predict(&m.s, &m.bf, table, &plan, 0, (size_t)njobs, -1, eta) == 0) {
        for (int k = 0; k < njobs; k++)
            out[k] = (decide_eta){jobs[k].id, eta[k].p10, eta[k].p50, eta[k].p90};
        rc = 0;
    }
    mirror_free(&m);
    free(arrivals);
    free(reserved_at);
    lucid_eta_plan_free(&plan);
    lucid_eta_table_free(&none);
    free(eta);
    return rc;
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
        /* Slurm would not start the packed job there (fit_pack_ok): dead for
         * good too, as every newcomer of this bucket asks the same GPUs and
         * a node's free GPUs and share units only shrink within a decision. */
        if (params->slurm_packing && !fit_pack_ok(job->gpus, nodes[other->node].slurm_free,
                                                  nodes[other->node].share_free, NULL, 0)) {
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
    int njobs;
    decide_result *results;
    const decide_running *running;
    decide_node *nodes;
    int nnodes;
    const decide_params *params;
    placement place;
    partner_index ix;
    char *taken; /* running jobs that took a partner in this decision */
    int most_free, whole_nodes;
    /* Backfill (params->backfill): the profile of the core's picture, made
     * when the first job does not fit, and what it must know of this pass. */
    mirror mir;
    int built;
    size_t held;            /* reservations given in this pass */
    uint32_t first_holder;  /* the first job that holds one */
    uint32_t unfit;         /* the first job that never fits the profile (holds none) */
    lucid_backfill_config bf; /* the rules a new reservation must pass (window, size) */
    int keeping;            /* placing the jobs that already hold one (decide_main) */
    uint32_t passed_over;   /* the first job that does not fit and got none, or 0 */
    decide_busy *started;   /* jobs placed on free GPUs in this pass, busy from now */
    int nstarted;
} main_pass;

/* The pass's pack hook: onto the first running job the pair rule allows. */
static int pack_job(void *ctx, size_t position)
{
    main_pass *m = ctx;
    if (!m->params->packing)
        return 0; /* the pass tries every job only for backfill */
    const decide_job *job = &m->jobs[position];
    if (m->params->backfill && job->holds)
        return 0; /* placed before the pass, on its reservation (decide_main) */
    decide_result *result = &m->results[position];
    int partner =
        m->taken ? find_partner(job, m->running, m->nodes, &m->ix, m->taken, m->params) : -1;
    if (partner < 0)
        return 0;
    const decide_running *other = &m->running[partner];
    decide_node *host = &m->nodes[other->node];
    /* The packed job still needs CPUs and memory of its partner's node
     * (fit.h); a whole-node job shares nothing. */
    if (job->fit && (job->fit->whole || !fit_room_ok(job->fit, job->gpus, job->gpus, job->gpus,
                                                      &host->room)))
        return 0;
    if (job->fit)
        fit_room_take(job->fit, job->gpus, &host->room);
    if (m->params->slurm_packing && host->share_free >= 0) {
        fit_share_take(&host->share_free, job->gpus);
        result->share_gpus = job->gpus;
    }
    fit_limits_take(job->limits, job->gpus);
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
    if (m->built) /* nor may backfill use that node's free GPUs */
        mirror_block_node(&m->mir, other->node);
    if (had >= 8)
        m->whole_nodes--;
    if (had > 0 && had == m->most_free)
        m->most_free = max_free(m->nodes, m->nnodes);
    return 1;
}

static int backfill_job(main_pass *m, size_t position);
static void reserve_job(main_pass *m, size_t position);
static void note_started(main_pass *m, const decide_job *job, const int *chosen, int count);

/* The pass's place hook: consolidated placement (or spread for -N). */
static int place_job(void *ctx, size_t position)
{
    main_pass *m = ctx;
    if (m->params->backfill && m->jobs[position].holds && !m->keeping)
        return m->results[position].start; /* decided before the pass (decide_main) */
    if (m->params->backfill && m->held > 0)
        return backfill_job(m, position);
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
        if (m->params->backfill)
            reserve_job(m, position);
        return 0;
    }
    result->start = 1;
    write_nodes(result, m->nodes, chosen, count);
    if (m->passed_over)
        snprintf(result->reason, sizeof result->reason,
                 "placed on %.120s ahead of job %u, which holds no reservation", result->nodes,
                 m->passed_over);
    else
        snprintf(result->reason, sizeof result->reason,
                 "priority %.0f is the highest waiting; placed on %.120s", job->priority,
                 result->nodes);
    if (m->params->backfill)
        note_started(m, job, chosen, count);
    m->most_free = max_free(m->nodes, m->nnodes);
    m->whole_nodes = nodes_with(m->nodes, m->nnodes, 8);
    return 1;
}

/* The job's user (account, QOS) is at a limit of the site, counting the
 * jobs placed before it in this decision: it waits, saying which. */
static int over_limit(const decide_job *job, decide_result *result)
{
    if (!job->limits || fit_limits_now(job->limits, job->gpus, result->reason, sizeof result->reason))
        return 0;
    return 1;
}

static int skip_main(void *ctx, size_t position)
{
    main_pass *m = ctx;
    if (m->params->backfill && m->jobs[position].holds && !m->keeping)
        return 0; /* decided before the pass (decide_main) */
    return over_limit(&m->jobs[position], &m->results[position]);
}

/* place_job, and a start counted against the job's limits (not one
 * decided before the pass: keep_reservations counted it). */
static int place_counted(void *ctx, size_t position)
{
    main_pass *m = ctx;
    const decide_job *job = &m->jobs[position];
    int decided = m->params->backfill && job->holds && !m->keeping;
    int started = place_job(ctx, position);
    if (started && !decided)
        fit_limits_take(job->limits, job->gpus);
    return started;
}

static void clear_results(decide_result *results, const decide_job *jobs, int njobs)
{
    for (int j = 0; j < njobs; j++) {
        results[j].id = jobs[j].id;
        results[j].start = 0;
        results[j].partner = 0;
        results[j].share_gpus = 0;
        results[j].nodes[0] = results[j].gpu_list[0] = results[j].reason[0] = '\0';
        results[j].reserved_at = -1;
        results[j].reserved_nodes[0] = '\0';
        results[j].holds = 0;
    }
}

/* ---- backfill through the pass's hooks ----
 * Until a job does not fit, the pass is the policy's own.  That job holds a
 * reservation on the availability profile (the core's, backfill.h: free
 * GPUs over future time as the busy jobs end by their estimates); from then
 * on a job starts only where the profile has room for its whole estimated
 * run x margin now, i.e. on GPUs no reservation needs meanwhile, and on
 * exactly those GPUs' nodes. */
static int64_t planned_s(const main_pass *m, const decide_job *job)
{
    double est = estimate_of(job);
    if (!(est > 0))
        est = 1000.0; /* lucid_backfill_job_estimate's default */
    double margin = m->params->backfill_margin >= 1 ? m->params->backfill_margin : 1;
    double d = ceil(est * margin);
    return d < 1 ? 1 : (int64_t)d;
}

static void note_started(main_pass *m, const decide_job *job, const int *chosen, int count)
{
    if (m->built || count <= 0)
        return; /* after the profile is made, backfill_job reserves its own starts */
    decide_busy *b = &m->started[m->nstarted++];
    *b = (decide_busy){.id = job->id, .gpus = job->gpus,
                       .estimate_s = (double)planned_s(m, job),
                       .start = m->params->horizon->now};
    for (int k = 0; k < count && k < DECIDE_BUSY_NODES; k++)
        b->node[b->nnodes++] = chosen[k];
}

static int ensure_profile(main_pass *m)
{
    if (m->built)
        return m->built > 0 ? 0 : -1;
    const decide_horizon *h = m->params->horizon;
    m->built = -1;
    if (mirror_build(&m->mir, m->nodes, m->nnodes, h->now, h->busy, h->nbusy, m->started,
                     m->nstarted, NULL, 0, 0, m->params->backfill, m->params->backfill_margin) < 0 ||
        lucid_profile_build(&m->mir.bf.prof, &m->mir.s, lucid_backfill_remaining, &m->mir.bf) < 0)
        return -1;
    m->built = 1;
    return 0;
}

static void write_alloc_nodes(char *out, size_t size, const decide_node *nodes,
                              const lucid_alloc *alloc, int n)
{
    size_t used = 0;
    out[0] = '\0';
    for (int a = 0; a < n && used < size; a++) {
        int w = snprintf(out + used, size - used, "%s%s", a ? "," : "", nodes[alloc[a].node].name);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

/* A job the head of the pass leaves waiting without a reservation: later
 * jobs start as if it were not there, and its reason says why it has none
 * (so that neither it nor they claim a reservation it does not hold). */
static void pass_over(main_pass *m, size_t position, const char *why)
{
    decide_result *result = &m->results[position];
    size_t used = strlen(result->reason);
    snprintf(result->reason + used, sizeof result->reason - used, "; no reservation: %s", why);
    if (!m->passed_over)
        m->passed_over = m->jobs[position].id;
}

/* A job that does not fit now holds a reservation (the first one in EASY,
 * every one in conservative) if the shared rules allow it a new one
 * (lucid_backfill_reservable: its size, and while packing only a job too
 * large to share GPUs; lucid_backfill_in_window: its earliest start).
 * While m->keeping (a job that already holds one) none of that is asked:
 * it is reserved wherever it fits now. */
static void reserve_job(main_pass *m, size_t position)
{
    const decide_job *job = &m->jobs[position];
    decide_result *result = &m->results[position];
    /* Conservative live: the first DECIDE_RESERVATIONS jobs that do not fit
     * hold one (each is a search of the profile's whole future; a queue of
     * 10,000 would take seconds); deeper jobs start only where they delay
     * none of those. */
    size_t depth = m->params->backfill == LUCID_BACKFILL_CONSERVATIVE ? DECIDE_RESERVATIONS : 1;
    if (!m->keeping) {
        if (!lucid_backfill_reservable(&m->bf, job->gpus, m->params->packing)) {
            if (m->held == 0 && job->gpus < m->bf.min_gpus) {
                char why[80];
                snprintf(why, sizeof why, "only jobs of %d GPUs or more hold one",
                         (int)m->bf.min_gpus);
                pass_over(m, position, why);
            }
            return;
        }
        if (m->held >= depth)
            return;
    }
    if (ensure_profile(m) < 0)
        return;
    lucid_profile *p = &m->mir.bf.prof;
    int64_t dur = planned_s(m, job);
    int nalloc = 0;
    int64_t now = m->params->horizon->now;
    long k = lucid_profile_fit(p, &m->mir.s, job->gpus, dur, now, &nalloc);
    if (k < 0) {
        if (m->held == 0 && !m->keeping) {
            m->held++; /* never fits on this profile: nothing to protect, but the
                        * pass goes on by the profile (as backfill.c does) */
            m->unfit = job->id;
        }
        return;
    }
    if (!m->keeping && !lucid_backfill_in_window(&m->bf, now, p->times[k])) {
        if (m->held == 0) {
            char why[120];
            snprintf(why, sizeof why,
                     "its earliest start, in ~%lld s, is past the backfill window (%lld s)",
                     (long long)(p->times[k] - now), (long long)m->bf.window);
            pass_over(m, position, why);
        }
        return;
    }
    if (lucid_profile_reserve(p, k, dur, nalloc) < 0)
        return;
    /* Not "held == 0": a head that never fits counts in held but holds
     * nothing, and later reasons must name a job that does. */
    if (!m->first_holder)
        m->first_holder = job->id;
    m->held++;
    result->holds = 1;
    result->reserved_at = p->times[k];
    write_alloc_nodes(result->reserved_nodes, sizeof result->reserved_nodes, m->nodes, p->alloc,
                      nalloc);
}

/* After a reservation: start now only where the profile has room for the
 * job's whole estimated run (then it delays no reservation). */
static int backfill_job(main_pass *m, size_t position)
{
    const decide_job *job = &m->jobs[position];
    decide_result *result = &m->results[position];
    char *p = result->reason, *end = result->reason + sizeof result->reason - 1;
    if (m->first_holder) {
        p = append_text(p, end, "waiting: starting it now would delay the reservation of job ");
        p = append_number(p, end, m->first_holder);
        *p = '\0';
    } else {
        /* The jobs ahead never fit the cluster: no reservation to delay. */
        reason_waiting(result, job);
    }
    int per_node = m->place.ready ? m->place.cluster.gpus_per_node : 8;
    int core_nodes = job->gpus > 0 ? (job->gpus + per_node - 1) / per_node : 1;
    if (job->node_ok || nodes_needed(job->gpus, job->nodes, per_node) != core_nodes ||
        job->gpus <= 0 || ensure_profile(m) < 0 || !m->place.ready) {
        /* Its own node choice or count is not what the profile places: it
         * waits until no reservation stands in the way. */
        reserve_job(m, position);
        return 0;
    }
    if (job->gpus > m->mir.s.cluster.free_gpus) {
        /* Too few GPUs are free at all: "would delay the reservation"
         * would blame its estimate, wrongly for a short job that starts as
         * soon as GPUs free up; it waits for GPUs, and behind the holder. */
        reason_waiting(result, job);
        if (m->first_holder) {
            p = result->reason + strlen(result->reason);
            p = append_text(p, end, ", behind the reservation of job ");
            p = append_number(p, end, m->first_holder);
            *p = '\0';
        }
        reserve_job(m, position);
        return 0;
    }
    lucid_profile *prof = &m->mir.bf.prof;
    int64_t dur = planned_s(m, job);
    int nalloc = 0;
    /* Only a start now matters here (a later one is a reservation's
     * question). */
    int fits = lucid_profile_fits_now(prof, &m->mir.s, job->gpus, dur, &nalloc) > 0;
    if (!fits || nalloc > 64) {
        reserve_job(m, position);
        return 0;
    }
    lucid_alloc allocs[64];
    for (int a = 0; a < nalloc; a++) {
        int node = prof->alloc[a].node, g = __builtin_popcountll(prof->alloc[a].mask);
        if (m->nodes[node].free_gpus < g || m->place.cluster.nodes[node].free < g)
            return 0; /* taken meanwhile (a packed node): not on the profile's GPUs */
        allocs[a] = (lucid_alloc){.node = node, .gpus = g,
                                  .mask = lucid_mask_lowest(m->place.cluster.nodes[node].free_mask, g)};
    }
    if (lucid_profile_reserve(prof, 0, dur, nalloc) < 0)
        return 0;
    lucid_cluster_take(&m->mir.s.cluster, prof->alloc, nalloc);
    lucid_cluster_take(&m->place.cluster, allocs, nalloc);
    int chosen[64];
    for (int a = 0; a < nalloc; a++) {
        chosen[a] = allocs[a].node;
        m->nodes[chosen[a]].free_gpus -= allocs[a].gpus;
        m->nodes[chosen[a]].settling++;
    }
    result->start = 1;
    write_nodes(result, m->nodes, chosen, nalloc);
    if (m->first_holder)
        snprintf(result->reason, sizeof result->reason,
                 "backfilled on %.100s: its estimated run ends before it could delay job %u's "
                 "reservation", result->nodes, m->first_holder);
    else
        snprintf(result->reason, sizeof result->reason,
                 "placed on %.100s ahead of job %u, which can never fit the cluster", result->nodes,
                 m->unfit);
    m->most_free = max_free(m->nodes, m->nnodes);
    m->whole_nodes = nodes_with(m->nodes, m->nnodes, 8);
    return 1;
}

/* A reservation, once given, is kept until its job starts (backfill.c's
 * rule): the jobs that hold one are placed before the pass, in queue
 * order, so that no job — not one that the window or the size class would
 * now refuse a reservation, nor a newcomer of better priority — takes it.
 * Each starts if its turn has come (on GPUs no earlier one of them needs
 * meanwhile), else is reserved wherever it fits now; either way it holds
 * until it starts. */
static void keep_reservations(main_pass *m)
{
    m->keeping = 1;
    for (size_t i = 0; i < (size_t)m->njobs; i++) {
        if (!m->jobs[i].holds)
            continue;
        decide_result *result = &m->results[i];
        if (over_limit(&m->jobs[i], result) || !place_counted(m, i)) {
            result->holds = 1; /* kept, also when it fits nowhere now */
            continue;
        }
        snprintf(result->reason, sizeof result->reason,
                 "its reservation is due; placed on %.120s", result->nodes);
    }
    m->keeping = 0;
}

int decide_main(decide_job *jobs, int njobs, const decide_running *running, int nrunning,
                decide_node *nodes, int nnodes, const decide_params *params,
                decide_result *results)
{
    order_jobs(jobs, njobs, LUCID_ORDER_PRIORITY);
    clear_results(results, jobs, njobs);
    main_pass m = {.jobs = jobs, .njobs = njobs, .results = results, .running = running, .nodes = nodes,
                   .nnodes = nnodes, .params = params,
                   .taken = calloc((size_t)(nrunning > 0 ? nrunning : 1), 1),
                   .most_free = max_free(nodes, nnodes),
                   .whole_nodes = nodes_with(nodes, nnodes, 8)}; /* for multi-node jobs */
    if (index_partners(&m.ix, running, nrunning) < 0) { /* out of memory: no packing */
        free(m.taken);
        m.taken = NULL;
    }
    placement_init(&m.place, nodes, nnodes);
    decide_params own = *params;
    if (!own.horizon || own.backfill < 0 || own.backfill > LUCID_BACKFILL_CONSERVATIVE)
        own.backfill = LUCID_BACKFILL_NONE; /* no clock or busy jobs: no profile */
    m.params = &own;
    if (own.backfill && !(m.started = malloc((size_t)(njobs > 0 ? njobs : 1) * sizeof *m.started)))
        own.backfill = LUCID_BACKFILL_NONE; /* out of memory: the plain pass */
    m.bf = (lucid_backfill_config){.mode = own.backfill, .estimate = LUCID_BACKFILL_EST_MODEL,
                                   .margin = own.backfill_margin,
                                   .window = own.backfill_window > 0 ? own.backfill_window : 0,
                                   .min_gpus = own.backfill_min_gpus > 0
                                                   ? (int32_t)own.backfill_min_gpus : 0};
    if (own.backfill)
        keep_reservations(&m);
    lucid_start_hooks hooks = {.ctx = &m, .pack = pack_job, .place = place_counted,
                               .skip = skip_main};
    size_t stopped_at;
    /* With backfill every job is tried (the hooks decide who may pass). */
    size_t started = lucid_start_in_order((size_t)njobs, own.packing || own.backfill, &hooks,
                                          &stopped_at);
    for (size_t j = stopped_at + 1; j < (size_t)njobs; j++)
        reason_blocked(&results[j], jobs[stopped_at].id);
    if (params->backfill && !own.backfill)
        for (int j = 0; j < njobs; j++) /* no profile this time: reservations still held */
            results[j].holds = jobs[j].holds && !results[j].start;
    placement_free(&m.place);
    mirror_free(&m.mir);
    free(m.started);
    free_partners(&m.ix);
    free(m.taken);
    return (int)started;
}

/* The state of one profiling pass, for its place hook. */
typedef struct profile_pass {
    const decide_job *jobs; /* in the profiler's order */
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
    fit_limits_take(job->limits, job->gpus); /* a profiling run counts against them too */
    return 1;
}

/* A job whose user is at a limit is passed over: the profiler takes the
 * next one (Slurm would refuse the run anyway). */
static int skip_profiling(void *ctx, size_t position)
{
    profile_pass *p = ctx;
    return over_limit(&p->jobs[position], &p->results[position]);
}

int decide_profiling(decide_job *jobs, int njobs, lucid_queue_order order, decide_node *nodes,
                     int nnodes, decide_result *results)
{
    order_jobs(jobs, njobs, order);
    clear_results(results, jobs, njobs);
    profile_pass p = {.jobs = jobs, .results = results, .nodes = nodes, .nnodes = nnodes};
    placement_init(&p.place, nodes, nnodes);
    lucid_start_hooks hooks = {.ctx = &p, .place = profile_job, .skip = skip_profiling};
    size_t stopped_at;
    size_t started = lucid_start_in_order((size_t)njobs, 0, &hooks, &stopped_at);
    for (size_t j = stopped_at + 1; j < (size_t)njobs; j++)
        snprintf(results[j].reason, sizeof results[j].reason,
                 "waiting for the profiler behind job %u (%s)", jobs[stopped_at].id,
                 order == LUCID_ORDER_FEWEST_GPUS ? "fewer GPUs first" : "in priority order");
    placement_free(&p.place);
    return (int)started;
}
