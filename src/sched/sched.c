/* sched.c — state of one virtual cluster under a policy: queue, running
 * list, GPU holdings, completion events and packed pairs (sched.h).
 *
 * Work is tracked lazily: a running job stores the work left after step
 * `base` and its rate, so nothing is touched per simulated second.  The
 * reference simulator subtracts the rate once per second in double
 * precision; for rate 1 that is exact arithmetic, for a co-located speed we
 * repeat the subtraction so the last second comes out the same. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/sched.h"
#include "lucid/backfill.h"
#include "lucid/fairshare.h"
#include "ordset.h"

lucid_semantics lucid_semantics_reference(void)
{
    return (lucid_semantics){.end_lag = 1,
                             .partner_lookup_bug = 1,
                             .profiled_rejoin_at_submit = 1,
                             .queue_double_count = 1,
                             .borrow_lost = 1,
                             .queue_waits_only = 1};
}

lucid_semantics lucid_semantics_fixed(void) { return (lucid_semantics){0}; }

int lucid_semantics_fix(lucid_semantics *sem, const char *list, lucid_error *err)
{
    static const struct {
        const char *name;
        size_t offset;
    } defects[] = {
        {"end_lag", offsetof(lucid_semantics, end_lag)},
        {"partner_lookup", offsetof(lucid_semantics, partner_lookup_bug)},
        {"profiled_rejoin", offsetof(lucid_semantics, profiled_rejoin_at_submit)},
        {"queue_double_count", offsetof(lucid_semantics, queue_double_count)},
        {"borrow_lost", offsetof(lucid_semantics, borrow_lost)},
        {"queue_waits_only", offsetof(lucid_semantics, queue_waits_only)},
    };
    const char *p = list;
    while (*p) {
        while (*p == ',' || *p == ' ')
            p++;
        size_t n = strcspn(p, ", ");
        if (n == 0)
            break;
        size_t k = 0;
        while (k < sizeof defects / sizeof defects[0] &&
               !(strlen(defects[k].name) == n && strncmp(defects[k].name, p, n) == 0))
            k++;
        if (k == sizeof defects / sizeof defects[0])
            return lucid_error_set(err, "unknown defect '%.*s' (end_lag, partner_lookup, "
                                        "profiled_rejoin, queue_double_count, borrow_lost, "
                                        "queue_waits_only)",
                                   (int)n, p);
        *(int *)(void *)((char *)sem + defects[k].offset) = 0;
        p += n;
    }
    return 0;
}

int lucid_sched_init(lucid_sched *s, const lucid_job *jobs, lucid_jobrun *run, int32_t vc,
                     int32_t nodes, int32_t gpus_per_node, const lucid_placer_ops *placer,
                     const lucid_policy_ops *policy, lucid_semantics sem, uint64_t seed,
                     lucid_error *err)
{
    memset(s, 0, sizeof *s);
    s->jobs = jobs;
    s->run = run;
    s->vc = vc;
    s->placer = placer;
    s->policy = policy;
    s->sem = sem;
    s->run_head = s->run_tail = -1;
    s->arrivals_step = -1;
    if (policy && (policy->flags & LUCID_POLICY_LUCID)) {
        s->cand = calloc(LUCID_PACK_MAX_GPUS + 1, sizeof *s->cand);
        if (!s->cand)
            return lucid_error_set(err, "out of memory");
        for (int g = 0; g <= LUCID_PACK_MAX_GPUS; g++)
            lucid_ordset_init(&s->cand[g]);
    }
    lucid_rng_seed(&s->rng, seed ^ ((uint64_t)(uint32_t)vc * 0x9e3779b97f4a7c15ULL));
    /* The caller sets priorities and Lucid's inputs, then runs policy->init. */
    return lucid_cluster_init(&s->cluster, nodes, gpus_per_node, err);
}

void lucid_sched_free(lucid_sched *s)
{
    if (s->policy && s->policy->destroy)
        s->policy->destroy(s);
    lucid_cluster_free(&s->cluster);
    for (int g = 0; s->cand && g <= LUCID_PACK_MAX_GPUS; g++)
        lucid_ordset_free(&s->cand[g]);
    free(s->cand);
    free(s->qbuf);
    free(s->allocs);
    free(s->heap);
    free(s->scratch);
    free(s->fair_order);
    free(s->slurm_fs);
    free(s->slurm_ft);
    memset(s, 0, sizeof *s);
}

/* ---------------- queue ---------------- */

/* Makes room for one more queued job at the end. */
static int queue_reserve(lucid_sched *s)
{
    size_t off = s->queue ? (size_t)(s->queue - s->qbuf) : 0;
    if (off + s->qlen + 1 <= s->qcap)
        return 0;
    if (off > 0 && off >= s->qlen) { /* slide the live part back to the front */
        memmove(s->qbuf, s->queue, s->qlen * sizeof *s->qbuf);
        s->queue = s->qbuf;
        return 0;
    }
    if (LUCID_GROW(s->qbuf, s->qcap, off + s->qlen + 1) < 0)
        return -1;
    s->queue = s->qbuf + off;
    return 0;
}

int lucid_sched_enqueue(lucid_sched *s, int32_t job)
{
    if (queue_reserve(s) < 0)
        return -1;
    s->queue[s->qlen++] = job;
    return 0;
}

int lucid_sched_enqueue_sorted(lucid_sched *s, int32_t job,
                               int (*less)(const lucid_sched *s, int32_t a, int32_t b))
{
    if (queue_reserve(s) < 0)
        return -1;
    /* Upper bound: after every job that is not greater than `job`. */
    size_t lo = 0, hi = s->qlen;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (less(s, job, s->queue[mid]))
            hi = mid;
        else
            lo = mid + 1;
    }
    memmove(s->queue + lo + 1, s->queue + lo, (s->qlen - lo) * sizeof *s->queue);
    s->queue[lo] = job;
    s->qlen++;
    return 0;
}

/* Drops the first k queued jobs (they started) in O(1). */
static void queue_drop_front(lucid_sched *s, size_t k)
{
    s->queue += k;
    s->qlen -= k;
    if (s->qlen == 0)
        s->queue = s->qbuf;
}

void lucid_sched_compact_queue(lucid_sched *s)
{
    size_t first = 0;
    while (first < s->qlen && s->run[s->queue[first]].status != LUCID_PENDING)
        first++;
    queue_drop_front(s, first);
    size_t kept = 0;
    while (kept < s->qlen && s->run[s->queue[kept]].status == LUCID_PENDING)
        kept++;
    for (size_t i = kept; i < s->qlen; i++)
        if (s->run[s->queue[i]].status == LUCID_PENDING)
            s->queue[kept++] = s->queue[i];
    s->qlen = kept;
}

/* ---------------- completion events (binary min-heap) ---------------- */

static int event_before(const lucid_event *a, const lucid_event *b)
{
    if (a->time != b->time)
        return a->time < b->time;
    return a->run_seq < b->run_seq;
}

static int heap_push(lucid_sched *s, lucid_event ev)
{
    if (LUCID_GROW(s->heap, s->cap_heap, s->nheap + 1) < 0)
        return -1;
    size_t i = s->nheap++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!event_before(&ev, &s->heap[parent]))
            break;
        s->heap[i] = s->heap[parent];
        i = parent;
    }
    s->heap[i] = ev;
    return 0;
}

static void heap_pop(lucid_sched *s)
{
    lucid_event last = s->heap[--s->nheap];
    size_t i = 0, n = s->nheap;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= n)
            break;
        if (child + 1 < n && event_before(&s->heap[child + 1], &s->heap[child]))
            child++;
        if (!event_before(&s->heap[child], &last))
            break;
        s->heap[i] = s->heap[child];
        i = child;
    }
    if (n > 0)
        s->heap[i] = last;
}

static int event_valid(const lucid_sched *s, const lucid_event *ev)
{
    const lucid_jobrun *r = &s->run[ev->job];
    return r->status == LUCID_RUNNING && r->gen == ev->gen;
}

int64_t lucid_sched_next_end(lucid_sched *s)
{
    while (s->nheap > 0 && !event_valid(s, &s->heap[0]))
        heap_pop(s);
    return s->nheap > 0 ? s->heap[0].time : LUCID_NEVER;
}

/* ---------------- work accounting ---------------- */

/* x -= rate, repeated up to `budget` times (stopping once x <= 0 if
 * `until_done`), with the result the reference's one-per-second double
 * subtraction would give.  Inside one binade [lo, 2 lo) every step rounds
 * the same way (to the nearest multiple of that binade's ulp u), so a run of
 * steps that keeps the exact result >= lo is done at once in integer units
 * of u; only steps near binade edges, and exact ties, are done one by one. */
int64_t lucid_subtract_repeatedly(double *value, double rate, int64_t budget, int until_done)
{
    double x = *value;
    int64_t done = 0;
    while (done < budget && !(until_done && x <= 0)) {
        if (x > 0 && rate > 0 && x < 0x1p60) {
            int e;
            frexp(x, &e);
            double u = ldexp(1.0, e - 53), lo = ldexp(1.0, e - 1);
            double q = floor(rate / u), rho = rate - q * u;
            if (rho != u / 2 && q < 0x1p52) {
                uint64_t units = (uint64_t)(x / u), low = (uint64_t)(lo / u);
                uint64_t step = (uint64_t)q + (rho > u / 2 ? 1 : 0), margin = (uint64_t)q + 1;
                if (step > 0 && units >= low + margin) {
                    uint64_t k = (units - low - margin) / step + 1;
                    if (k > (uint64_t)(budget - done))
                        k = (uint64_t)(budget - done);
                    x = (double)(units - k * step) * u;
                    done += (int64_t)k;
                    continue;
                }
            }
        }
        x -= rate;
        done++;
    }
    *value = x;
    return done;
}

static int64_t subtractions_to_finish(double remain, double rate)
{
    if (remain <= 0)
        return 0;
    if (rate == 1.0)
        return (int64_t)ceil(remain);
    return lucid_subtract_repeatedly(&remain, rate, INT64_MAX, 1);
}

double lucid_sched_remain_at(const lucid_sched *s, int32_t job, int64_t t)
{
    const lucid_jobrun *r = &s->run[job];
    if (t <= r->base)
        return r->remain;
    if (r->rate == 1.0)
        return r->remain - (double)(t - r->base);
    double x = r->remain;
    lucid_subtract_repeatedly(&x, r->rate, t - r->base, 0);
    return x;
}

int64_t lucid_sched_attained_at(const lucid_sched *s, int32_t job, int64_t t)
{
    const lucid_jobrun *r = &s->run[job];
    return r->attained + (t > r->base ? (t - r->base) * s->jobs[job].gpu_num : 0);
}

static void schedule_end(lucid_sched *s, int32_t job)
{
    lucid_jobrun *r = &s->run[job];
    int lag = (s->policy->flags & LUCID_POLICY_REMAIN_BASED) && s->sem.end_lag ? 1 : 0;
    int64_t end = r->base + subtractions_to_finish(r->remain, r->rate) + lag;
    if (end <= s->now)
        end = s->now + 1; /* a job never ends in the step it (re)starts */
    r->gen++;
    heap_push(s, (lucid_event){.time = end, .run_seq = r->run_seq, .gen = r->gen, .job = job});
}

static void materialize(lucid_sched *s, int32_t job)
{
    lucid_jobrun *r = &s->run[job];
    r->remain = lucid_sched_remain_at(s, job, s->now);
    r->attained = lucid_sched_attained_at(s, job, s->now);
    r->base = s->now;
}

void lucid_sched_set_rate(lucid_sched *s, int32_t job, double rate)
{
    materialize(s, job);
    s->run[job].rate = rate;
    schedule_end(s, job);
}

/* ---------------- partner candidates ---------------- */

static int cand_eligible(const lucid_sched *s, int32_t job)
{
    int32_t g = s->jobs[job].gpu_num;
    return s->cand && g >= 1 && g <= LUCID_PACK_MAX_GPUS;
}

/* A running exclusive job becomes a candidate, keyed by its start order. */
static void cand_insert(lucid_sched *s, int32_t job)
{
    lucid_jobrun *r = &s->run[job];
    if (r->in_cand || !cand_eligible(s, job))
        return;
    const lucid_job *j = &s->jobs[job];
    if (lucid_ordset_insert_pair(&s->cand[j->gpu_num], (double)r->run_seq, r->run_seq, job,
                                 j->gpu_num, j->gmem, r->share_score,
                                 s->priority ? s->priority[job] : 0) == 0)
        r->in_cand = 1;
}

static void cand_remove(lucid_sched *s, int32_t job)
{
    lucid_jobrun *r = &s->run[job];
    if (!r->in_cand)
        return;
    lucid_ordset_remove(&s->cand[s->jobs[job].gpu_num], (double)r->run_seq, r->run_seq);
    r->in_cand = 0;
}

/* ---------------- running list ---------------- */

static void run_append(lucid_sched *s, int32_t job)
{
    lucid_jobrun *r = &s->run[job];
    r->run_seq = s->next_run_seq++;
    r->run_prev = s->run_tail;
    r->run_next = -1;
    if (s->run_tail >= 0)
        s->run[s->run_tail].run_next = job;
    else
        s->run_head = job;
    s->run_tail = job;
    s->nrunning++;
}

static void run_unlink(lucid_sched *s, int32_t job)
{
    lucid_jobrun *r = &s->run[job];
    if (r->run_prev >= 0)
        s->run[r->run_prev].run_next = r->run_next;
    else
        s->run_head = r->run_next;
    if (r->run_next >= 0)
        s->run[r->run_next].run_prev = r->run_prev;
    else
        s->run_tail = r->run_prev;
    r->run_prev = r->run_next = -1;
    s->nrunning--;
}

static int store_allocs(lucid_sched *s, int32_t job, const lucid_alloc *a, int n)
{
    if (LUCID_GROW(s->allocs, s->cap_allocs, s->nallocs + (size_t)n) < 0)
        return -1;
    memcpy(s->allocs + s->nallocs, a, (size_t)n * sizeof *a);
    s->run[job].alloc_off = (int32_t)s->nallocs;
    s->run[job].alloc_n = n;
    s->nallocs += (size_t)n;
    return 0;
}

static int32_t fair_user(const lucid_sched *s, int32_t job)
{
    return lucid_fairshare_slot(s->jobs[job].user, s->fairshare->nusers);
}

/* A job starts (sign 1) or stops (-1) holding its GPUs: its user's usage
 * grows by them from now on, or no longer.  A packed job is charged its
 * GPUs like its partner: both are allocated them. */
static void fair_charge(lucid_sched *s, int32_t job, int sign)
{
    if (!s->fairshare)
        return;
    int64_t units = s->jobs[job].gpu_num;
    if (s->slurm_priority) {
        /* The slurm policy: Slurm's billing, in thousandths (the factors
         * are ratios of usage, so the unit does not matter). */
        const lucid_job *j = &s->jobs[job];
        double cpus = j->cpu_num > 0 ? (double)j->cpu_num : (double)j->gpu_num;
        double bill = s->slurm_priority->bill_cpu * cpus + s->slurm_priority->bill_gpu * j->gpu_num;
        units = (int64_t)llround(1000.0 * bill);
    }
    lucid_fairshare_run(s->fairshare, fair_user(s, job), sign * units, s->now);
}

/* The slurm policy's start latency ([slurm] start_latency): whole seconds
 * from the decision to the start, the fraction carried to the next start
 * (so a 0.5-s latency starts every other job a second later). */
static int64_t start_latency(lucid_sched *s)
{
    if (!s->slurm_priority || !(s->slurm_priority->start_latency > 0))
        return 0;
    s->slurm_latency_carry += s->slurm_priority->start_latency;
    double whole = floor(s->slurm_latency_carry + 1e-9);
    s->slurm_latency_carry -= whole;
    return (int64_t)whole;
}

static void begin_running(lucid_sched *s, int32_t job, double rate)
{
    lucid_jobrun *r = &s->run[job];
    /* Its GPUs are taken now; it runs from `at` on. */
    int64_t at = s->now + start_latency(s);
    r->status = LUCID_RUNNING;
    r->base = at;
    r->rate = rate;
    if (r->start_time < 0)
        r->start_time = at;
    r->queue += (double)(at - r->waiting_since);
    run_append(s, job);
    fair_charge(s, job, 1);
    if (s->on_change)
        s->on_change(s->on_change_ctx, s, job, LUCID_SCHED_STARTED);
    if (r->exclusive)
        cand_insert(s, job);
    schedule_end(s, job);
    s->changed = 1;
}

int lucid_sched_try_start(lucid_sched *s, int32_t job)
{
    int32_t gpus = s->jobs[job].gpu_num;
    int need = gpus < s->cluster.nslots ? gpus : s->cluster.nslots;
    if (need < 1)
        need = 1;
    if (s->scratch_cap < need) {
        lucid_alloc *grown = realloc(s->scratch, (size_t)need * sizeof *grown);
        if (!grown)
            return 0;
        s->scratch = grown;
        s->scratch_cap = need;
    }
    int n = s->placer->select(&s->cluster, gpus, &s->rng, s->scratch, s->scratch_cap);
    return n > 0 ? lucid_sched_start_on(s, job, s->scratch, n) : 0;
}

int lucid_sched_start_on(lucid_sched *s, int32_t job, const lucid_alloc *a, int n)
{
    if (store_allocs(s, job, a, n) < 0)
        return 0;
    lucid_cluster_take(&s->cluster, a, n);
    begin_running(s, job, 1.0);
    return 1;
}

void lucid_sched_start_packed(lucid_sched *s, int32_t job, int32_t target, double job_speed,
                              double target_speed)
{
    lucid_jobrun *t = &s->run[target];
    /* The newcomer holds exactly the target's GPUs; the cluster's free
     * counts do not change.  Grow the arena first: the source lives in it. */
    if (LUCID_GROW(s->allocs, s->cap_allocs, s->nallocs + (size_t)t->alloc_n) < 0 ||
        store_allocs(s, job, s->allocs + t->alloc_off, t->alloc_n) < 0)
        return;
    for (int i = 0; i < t->alloc_n; i++)
        s->cluster.nodes[s->allocs[t->alloc_off + i].node].jobs++;
    lucid_jobrun *r = &s->run[job];
    r->partner = target;
    r->packed_with = target;
    r->packed_onto = target;
    r->exclusive = 0;
    t->partner = job;
    t->packed_with = job;
    t->exclusive = 0;
    cand_remove(s, target);
    s->packed_gpus += s->jobs[job].gpu_num;
    lucid_sched_set_rate(s, target, target_speed);
    begin_running(s, job, job_speed);
}

static void release_gpus(lucid_sched *s, int32_t job)
{
    lucid_jobrun *r = &s->run[job];
    const lucid_alloc *a = s->allocs + r->alloc_off;
    if (r->partner >= 0 && s->run[r->partner].partner == job) {
        /* The partner (running on, or ending later in this step) keeps the
         * GPUs and gives them back when it ends: only the pair ends here. */
        for (int i = 0; i < r->alloc_n; i++)
            s->cluster.nodes[a[i].node].jobs--;
        s->run[r->partner].partner = -1;
        s->packed_gpus -= s->jobs[job].gpu_num;
    } else {
        lucid_cluster_give(&s->cluster, a, r->alloc_n);
    }
    r->partner = -1;
    r->alloc_n = 0;
}

void lucid_sched_preempt(lucid_sched *s, int32_t job)
{
    lucid_jobrun *r = &s->run[job];
    materialize(s, job);
    release_gpus(s, job);
    cand_remove(s, job);
    run_unlink(s, job);
    fair_charge(s, job, -1);
    r->status = LUCID_PENDING;
    r->gen++;
    r->waiting_since = s->now;
    r->ckpt_times++;
    if (s->on_change)
        s->on_change(s->on_change_ctx, s, job, LUCID_SCHED_REQUEUED);
    s->changed = 1;
}

/* The partner of an ending packed job goes back to exclusive speed —
 * except, in the reference, when the ending job was the pair's first: the
 * reference looks the partner up as the first job on those GPUs, finds the
 * ending job itself and "recovers" that (`partner_lookup_bug`).  The ending
 * job stays marked packed only if it really handed its partner back. */
static void recover_partner(lucid_sched *s, int32_t job)
{
    lucid_jobrun *r = &s->run[job];
    int32_t partner = r->partner;
    if (partner < 0 || s->run[partner].status != LUCID_RUNNING ||
        (s->sem.partner_lookup_bug && r->run_seq < s->run[partner].run_seq)) {
        r->exclusive = 1;
        return;
    }
    s->run[partner].exclusive = 1;
    cand_insert(s, partner);
    if (s->run[partner].rate != 1.0)
        lucid_sched_set_rate(s, partner, 1.0);
}

int lucid_sched_finish_due(lucid_sched *s, int64_t now)
{
    s->now = now;
    int32_t due_small[64];
    int32_t *due = due_small;
    size_t ndue = 0, cap = 64;
    while (lucid_sched_next_end(s) == now) {
        if (ndue == cap) {
            int32_t *grown = malloc(cap * 2 * sizeof *grown);
            if (!grown)
                break;
            memcpy(grown, due, ndue * sizeof *due);
            if (due != due_small)
                free(due);
            due = grown;
            cap *= 2;
        }
        due[ndue++] = s->heap[0].job;
        s->run[s->heap[0].job].status = LUCID_DONE; /* so partners see it ending */
        heap_pop(s);
    }
    /* The heap pops equal times in start order already (ties by run_seq). */
    for (size_t i = 0; i < ndue; i++) {
        int32_t job = due[i];
        lucid_jobrun *r = &s->run[job];
        r->status = LUCID_RUNNING;
        if (s->policy->job_ending)
            s->policy->job_ending(s, job);
        recover_partner(s, job);
        r->status = LUCID_DONE;
        r->end_time = now;
        r->remain = 0;
        release_gpus(s, job);
        cand_remove(s, job);
        run_unlink(s, job);
        fair_charge(s, job, -1);
        if (s->on_change)
            s->on_change(s->on_change_ctx, s, job, LUCID_SCHED_ENDED);
    }
    if (due != due_small)
        free(due);
    return (int)ndue;
}

void lucid_sched_mark_arrival(lucid_sched *s, int32_t job)
{
    lucid_jobrun *r = &s->run[job];
    r->status = LUCID_PENDING;
    r->waiting_since = s->now;
    r->arrival_seq = s->next_arrival_seq++;
    if (s->arrivals_step != s->now) {
        s->arrivals_step = s->now;
        s->arrivals_now = 0;
    }
    s->arrivals_now++;
}

/* The decision pass (decision.c) on jobs of this VC: positions index `jobs`. */
typedef struct sched_pass {
    lucid_sched *s;
    const int32_t *jobs;
    int (*pack)(lucid_sched *s, int32_t job);
} sched_pass;

static int pass_pack(void *ctx, size_t position)
{
    sched_pass *pass = ctx;
    return pass->pack(pass->s, pass->jobs[position]);
}

static int pass_place(void *ctx, size_t position)
{
    sched_pass *pass = ctx;
    return lucid_sched_try_start(pass->s, pass->jobs[position]);
}

size_t lucid_sched_start_in_order(lucid_sched *s, const int32_t *jobs, size_t n, int packing,
                                  int (*pack)(lucid_sched *s, int32_t job), size_t *stopped_at)
{
    if (s->backfill)
        return lucid_backfill_pass(s, jobs, n, packing ? pack : NULL, stopped_at);
    sched_pass pass = {s, jobs, pack};
    lucid_start_hooks hooks = {.ctx = &pass, .pack = pack ? pass_pack : NULL, .place = pass_place};
    return lucid_start_in_order(n, packing, &hooks, stopped_at);
}

void lucid_sched_start_queue(lucid_sched *s, int packing, int (*pack)(lucid_sched *s, int32_t job))
{
    size_t stopped_at;
    size_t started = lucid_sched_start_in_order(s, s->queue, s->qlen, packing, pack, &stopped_at);
    if (started == stopped_at)
        queue_drop_front(s, started); /* every tried job started: a prefix */
    else if (started)
        lucid_sched_compact_queue(s);
}

void lucid_sched_place_in_order(lucid_sched *s, int stop_at_failure)
{
    lucid_sched_start_queue(s, !stop_at_failure, NULL);
}

static int compare_in(lucid_queue_order order, const lucid_sched *s, int32_t a, int32_t b)
{
    lucid_queued x = lucid_queued_make(order, s->priority ? s->priority[a] : 0,
                                       s->jobs[a].gpu_num, s->run[a].arrival_seq, (uint32_t)a);
    lucid_queued y = lucid_queued_make(order, s->priority ? s->priority[b] : 0,
                                       s->jobs[b].gpu_num, s->run[b].arrival_seq, (uint32_t)b);
    return lucid_queue_compare(&x, &y);
}

/* Jobs compared here are queued, or arriving with the latest arrival_seq:
 * ties in arrival order keep enqueue_sorted's "after every equal job". */
int lucid_sched_less_priority(const lucid_sched *s, int32_t a, int32_t b)
{
    return compare_in(LUCID_ORDER_PRIORITY, s, a, b) < 0;
}

int lucid_sched_less_gpus(const lucid_sched *s, int32_t a, int32_t b)
{
    return compare_in(LUCID_ORDER_FEWEST_GPUS, s, a, b) < 0;
}

int lucid_sched_arrive_ordered(lucid_sched *s, int32_t job)
{
    lucid_sched_mark_arrival(s, job);
    return lucid_sched_enqueue_sorted(s, job, s->policy->order);
}

void lucid_decide_head_of_line(lucid_sched *s) { lucid_sched_place_in_order(s, 1); }

int64_t lucid_no_timed_decisions(const lucid_sched *s)
{
    (void)s;
    return LUCID_NEVER;
}

/* Re-sorts the queue by the fair-share order value at s->now. */
static void fair_sort(lucid_sched *s)
{
    if (s->qlen < 2 || LUCID_GROW(s->fair_order, s->fair_cap, s->qlen) < 0)
        return;
    for (size_t i = 0; i < s->qlen; i++) {
        int32_t job = s->queue[i];
        double factor = lucid_fairshare_factor(s->fairshare, fair_user(s, job), s->now);
        double key = lucid_order_value(s->policy->fair_priority(s, job), s->fairshare_weight,
                                       factor, 0, 0);
        s->fair_order[i] = (lucid_queued){.key = key, .seq = s->run[job].arrival_seq,
                                          .index = (uint32_t)job};
    }
    lucid_queue_sort(s->fair_order, s->qlen);
    for (size_t i = 0; i < s->qlen; i++)
        s->queue[i] = (int32_t)s->fair_order[i].index;
}

static int fair_order_on(const lucid_sched *s)
{
    return s->fairshare && s->policy->fair_priority;
}

void lucid_sched_decide(lucid_sched *s)
{
    if (fair_order_on(s))
        fair_sort(s);
    s->policy->decide(s);
}

int64_t lucid_sched_next_decision(const lucid_sched *s)
{
    int64_t next = s->policy->next_decision(s);
    /* Nothing running: every usage only decays, all at one rate, and the
     * order stays; one waiting job has no order to change. */
    if (fair_order_on(s) && s->qlen > 1 && s->nrunning > 0) {
        int64_t period = LUCID_FAIRSHARE_PERIOD;
        int64_t at = s->now - ((s->now % period) + period) % period + period;
        if (at < next)
            next = at;
    }
    return next;
}

int64_t lucid_preempt_overhead(const lucid_job *job) { return job->gpu_num <= 8 ? 40 : 60; }

void lucid_sched_held_jobs(const lucid_sched *s, lucid_job_visit visit, void *ctx)
{
    for (size_t i = 0; i < s->qlen; i++)
        visit(ctx, s->queue[i]);
    for (int32_t j = s->run_head; j >= 0; j = s->run[j].run_next) {
        visit(ctx, j);
        if (s->run[j].partner >= 0)
            visit(ctx, s->run[j].partner);
    }
    for (size_t i = 0; i < s->nheap; i++)
        visit(ctx, s->heap[i].job);
    for (int g = 0; s->cand && g <= LUCID_PACK_MAX_GPUS; g++)
        lucid_ordset_visit_jobs(&s->cand[g], visit, ctx);
    if (s->policy && s->policy->held_jobs)
        s->policy->held_jobs(s, visit, ctx);
}

void lucid_job_visit_min(void *ctx, int32_t job)
{
    int32_t *low = ctx;
    if (job < *low)
        *low = job;
}

int32_t lucid_sched_oldest_job(const lucid_sched *s)
{
    int32_t low = INT32_MAX;
    lucid_sched_held_jobs(s, lucid_job_visit_min, &low);
    return low;
}
