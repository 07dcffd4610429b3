/* policy_slurm.c — Slurm's own scheduling as a baseline (issue 26): the
 * queue in priority/multifactor order, started by sched/builtin's rule
 * (in priority order; the first job that does not fit blocks the rest) or,
 * with [slurm] backfill, by sched/backfill's reservations (backfill.c),
 * every bf_interval seconds as Slurm runs it.
 *
 * The priority of a pending job, as slurm.conf's weights make it
 * (docs/slurm-policy.md):
 *
 *   P = trunc(W_age x min(1, age / PriorityMaxAge) + W_fairshare x F
 *             + W_jobsize x size)
 *
 * higher first, ties in submission order.  Slurm recalculates priorities
 * every PriorityCalcPeriod: a job's age counts up to the last multiple of
 * the period at or before now (a job submitted since has age 0, as Slurm
 * gives a new job its priority at submission).  F is the user's fair-share
 * factor from the VC's ledger of decayed usage in Slurm's billing units
 * (fairshare.h; the job's CPUs unless TRESBillingWeights says otherwise):
 * Fair Tree's rank (Slurm's default; below) or, with PriorityFlags=
 * NO_FAIR_TREE, the classic 2^(-U/S).  size is Slurm 22.05's job-size
 * factor (priority_multifactor.c): the mean of the job's share of the
 * cluster's nodes and of its CPUs, or of what is left of them with
 * PriorityFavorSmall.  Not in the simulator: partition and QOS factors
 * (one partition per VC, no QOS in a trace), shares other than equal. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/fairshare.h"
#include "lucid/sched.h"
#include "lucid/util.h"

lucid_slurm_priority lucid_slurm_priority_default(void)
{
    /* slurm.conf's defaults: every weight 0 (all jobs equal: submission
     * order), PriorityMaxAge 7-0, PriorityCalcPeriod 5, FavorSmall no. */
    return (lucid_slurm_priority)LUCID_SLURM_PRIORITY_DEFAULT;
}

static const lucid_slurm_priority *weights(const lucid_sched *s)
{
    static const lucid_slurm_priority none = LUCID_SLURM_PRIORITY_DEFAULT;
    return s->slurm_priority ? s->slurm_priority : &none;
}

/* The last multiple of `period` at or before now. */
static int64_t last_multiple(int64_t period, int64_t now)
{
    int64_t p = period > 0 ? period : 1;
    return now - (((now % p) + p) % p);
}

/* The last priority recalculation at or before now. */
static int64_t last_calc(const lucid_slurm_priority *w, int64_t now)
{
    return last_multiple(w->calc_period, now);
}

/* ---- Fair Tree (Slurm's fair_tree.c, 22.05) ----
 * The associations form a tree: the root's children are the accounts and
 * the users directly under it, an account's children its users, every
 * child an equal share of its parent.  At each level a child's level fair
 * share is LF = S / U, S its share of its siblings' and U its usage over
 * its parent's (0: LF infinite); siblings go in LF order, highest first,
 * a user before an account at equal LF.  Walking the tree so (an account's
 * users where the account falls), the users are ranked from N (the
 * number of users) down, one rank per user, equal LF sharing the rank of
 * the first of them (an account's first user tied with what came before
 * the account, if the account was); a user's factor is rank / N. */
typedef struct ft_node {
    int32_t slot;    /* a user's ledger slot, or -1 for an account */
    int32_t account; /* an account's index */
    double usage;
    double lf;
} ft_node;

static int by_level_fs(const void *a, const void *b)
{
    const ft_node *x = a, *y = b;
    if (x->lf != y->lf)
        return x->lf < y->lf ? 1 : -1;
    if ((x->slot >= 0) != (y->slot >= 0))
        return x->slot >= 0 ? -1 : 1; /* users before accounts */
    /* Slurm's qsort leaves equal ones in no set order; ours: by slot or
     * account, so a run is the same on every machine. */
    if (x->slot != y->slot)
        return x->slot < y->slot ? -1 : 1;
    return x->account < y->account ? -1 : x->account > y->account;
}

static void level_fs(ft_node *n, int count, double parent_usage)
{
    double share = 1.0 / count;
    for (int i = 0; i < count; i++) {
        double u = parent_usage > 0 ? n[i].usage / parent_usage : 0;
        n[i].lf = u > 0 ? share / u : INFINITY;
    }
    qsort(n, (size_t)count, sizeof *n, by_level_fs);
}

/* Ranks one level (see above); `tied` carries a tie into it. */
static void rank_level(const lucid_fairshare *f, const int32_t *account, const double *use,
                       ft_node *n, int count, double parent_usage, int tied_in, int32_t *rank,
                       int32_t *rnt, int32_t nusers, double *fs, ft_node *scratch)
{
    level_fs(n, count, parent_usage);
    for (int i = 0; i < count; i++) {
        int tied = i == 0 ? tied_in : n[i].lf == n[i - 1].lf;
        if (n[i].slot >= 0) {
            if (!tied)
                *rank = *rnt;
            fs[n[i].slot] = (double)*rank / nusers;
            (*rnt)--;
            continue;
        }
        int k = 0;
        for (int32_t slot = 0; slot < f->nusers; slot++)
            if (f->member[slot] && account[slot] == n[i].account)
                scratch[k++] = (ft_node){.slot = slot, .usage = use[slot]};
        rank_level(f, account, use, scratch, k, n[i].usage, tied, rank, rnt, nusers, fs,
                   scratch + k);
    }
}

/* Every member's factor into fs[slot] (others left alone), at `now`.
 * Its working memory is `*buf` (`*cap` doubles), grown as needed and kept
 * by the caller, so a recalculation allocates nothing once it has run. */
static int fair_tree(const lucid_fairshare *f, const int32_t *account, int64_t now, double *fs,
                     double **buf, size_t *cap)
{
    int32_t nusers = 0, naccounts = 0;
    for (int32_t slot = 0; slot < f->nusers; slot++) {
        if (!f->member[slot])
            continue;
        nusers++;
        if (account && account[slot] + 1 > naccounts)
            naccounts = account[slot] + 1;
    }
    if (nusers == 0)
        return 0;
    /* In doubles: each slot's usage, each account's usage and members,
     * then the tree's nodes (the root's children, then scratch for an
     * account's users). */
    size_t per_node = (sizeof(ft_node) + sizeof(double) - 1) / sizeof(double);
    size_t nslots = (size_t)f->nusers + 1, nacc = (size_t)naccounts + 1;
    size_t need = nslots + 2 * nacc + ((size_t)nusers * 2 + nacc) * per_node;
    if (LUCID_GROW(*buf, *cap, need) < 0)
        return -1;
    double *use = *buf, *acct_usage = use + nslots, *acct_members = acct_usage + nacc;
    ft_node *n = (ft_node *)(void *)(acct_members + nacc);
    for (size_t a = 0; a < nacc; a++)
        acct_usage[a] = acct_members[a] = 0;
    int count = 0;
    double total = 0;
    for (int32_t slot = 0; slot < f->nusers; slot++) {
        if (!f->member[slot])
            continue;
        /* At `now`, or at the user's last change if that came later (the
         * ledger does not go back; the policy decides at every
         * recalculation while jobs run, so that is rare). */
        int64_t at = now > f->user[slot].as_of ? now : f->user[slot].as_of;
        double u = use[slot] = lucid_fairshare_usage(f, slot, at);
        total += u;
        int32_t a = account ? account[slot] : -1;
        if (a < 0) {
            n[count++] = (ft_node){.slot = slot, .usage = u};
        } else {
            acct_usage[a] += u;
            acct_members[a]++;
        }
    }
    for (int32_t a = 0; a < naccounts; a++)
        if (acct_members[a] > 0)
            n[count++] = (ft_node){.slot = -1, .account = a, .usage = acct_usage[a]};
    int32_t rank = nusers, rnt = nusers;
    rank_level(f, account, use, n, count, total, 0, &rank, &rnt, nusers, fs, n + count);
    return 0;
}

/* Each slot's fair-share factor into s->slurm_fs as Slurm holds it: Slurm
 * charges usage and computes the factors (and pending jobs' priorities)
 * once every PriorityCalcPeriod, in its decay pass, so the table is made
 * at the first decision of each period, from the usage then, and kept
 * through it (a job submitted meanwhile gets its priority from it, as
 * Slurm gives one at submission).  NULL: no ledger, or no memory. */
static const double *fs_table(lucid_sched *s)
{
    const lucid_slurm_priority *w = weights(s);
    if (!(w->weight_fairshare > 0) || !s->fairshare)
        return NULL;
    int64_t calc = last_calc(w, s->now);
    if (s->slurm_fs_valid && s->slurm_fs_at == calc)
        return s->slurm_fs;
    size_t n = (size_t)s->fairshare->nusers + 1;
    if (LUCID_GROW(s->slurm_fs, s->slurm_fs_cap, n) < 0)
        return NULL;
    /* The usage at the recalculation itself (Slurm's decay pass). */
    if (w->fair_tree) {
        if (fair_tree(s->fairshare, s->slurm_account, calc, s->slurm_fs, &s->slurm_ft,
                      &s->slurm_ft_cap) < 0)
            return NULL;
    } else {
        const lucid_fairshare *f = s->fairshare;
        for (int32_t slot = 0; slot < f->nusers; slot++) {
            int64_t at = calc > f->user[slot].as_of ? calc : f->user[slot].as_of;
            at = at > f->total.as_of ? at : f->total.as_of;
            s->slurm_fs[slot] = lucid_fairshare_factor(f, slot, at);
        }
    }
    s->slurm_fs_at = calc;
    s->slurm_fs_valid = 1;
    return s->slurm_fs;
}

/* The job's nodes: as the simulator places it, whole nodes of GPUs. */
static double job_nodes(const lucid_sched *s, const lucid_job *j)
{
    int32_t g = s->cluster.gpus_per_node > 0 ? s->cluster.gpus_per_node : 1;
    int32_t n = (j->gpu_num + g - 1) / g;
    return n > 0 ? n : 1;
}

static double priority_of(const lucid_sched *s, int32_t job, const double *fs)
{
    const lucid_slurm_priority *w = weights(s);
    const lucid_job *j = &s->jobs[job];
    double p = 0;
    if (w->weight_age > 0) {
        int64_t calc = last_calc(w, s->now);
        double age = calc > j->submit_time ? (double)(calc - j->submit_time) : 0.0;
        double max_age = w->max_age > 0 ? (double)w->max_age : 1.0;
        p += w->weight_age * (age < max_age ? age / max_age : 1.0);
    }
    if (w->weight_fairshare > 0) {
        double f = 1.0; /* no ledger: nobody has used anything */
        int32_t slot = s->fairshare ? lucid_fairshare_slot(j->user, s->fairshare->nusers) : 0;
        if (fs)
            f = fs[slot];
        else if (s->fairshare)
            f = lucid_fairshare_factor(s->fairshare, slot, s->now);
        p += w->weight_fairshare * f;
    }
    if (w->weight_jobsize > 0) {
        /* Slurm 22.05 (favor large): (nodes / N + cpus / C) / 2; FavorSmall
         * ((N - nodes) / N + (C - cpus) / C) / 2; clamped to [0, 1]. */
        double nodes_total = w->cluster_nodes > 0 ? (double)w->cluster_nodes
                                                  : (double)s->cluster.alive_nodes;
        double node_part = nodes_total > 0 ? job_nodes(s, j) / nodes_total : 0.0;
        double cpu_part = 0.0;
        if (w->cluster_cpus > 0 && j->cpu_num > 0)
            cpu_part = (double)j->cpu_num / (double)w->cluster_cpus;
        else if (s->cluster.total_gpus > 0)
            cpu_part = (double)j->gpu_num / (double)s->cluster.total_gpus; /* GPUs for CPUs */
        double size = w->favor_small ? ((1.0 - node_part) + (1.0 - cpu_part)) / 2
                                     : (node_part + cpu_part) / 2;
        size = size < 0 ? 0 : size > 1 ? 1 : size;
        p += w->weight_jobsize * size;
    }
    return floor(p); /* Slurm keeps an integer priority */
}

double lucid_slurm_priority_of(const lucid_sched *s, int32_t job)
{
    /* The factors of this period's recalculation, once a decision made
     * them; else from the usage now. */
    const lucid_slurm_priority *w = weights(s);
    if (s->slurm_fs_valid && s->slurm_fs_at == last_calc(w, s->now))
        return priority_of(s, job, s->slurm_fs);
    double *fs = NULL, *buf = NULL;
    size_t cap = 0;
    if (w->fair_tree && w->weight_fairshare > 0 && s->fairshare &&
        (fs = malloc(((size_t)s->fairshare->nusers + 1) * sizeof *fs)) != NULL &&
        fair_tree(s->fairshare, s->slurm_account, s->now, fs, &buf, &cap) < 0) {
        free(fs);
        fs = NULL;
    }
    double p = priority_of(s, job, fs);
    free(fs);
    free(buf);
    return p;
}

int32_t lucid_slurm_accounts_parse(const char *text, const lucid_strtab *users, int32_t nslots,
                                   int32_t *account, lucid_error *err)
{
    int32_t naccounts = 0;
    const char *p = text;
    while (*p) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        size_t len = strcspn(p, " \t");
        const char *colon = memchr(p, ':', len);
        if (!colon || colon == p || colon + 1 == p + len)
            return lucid_error_set(err, "[slurm] accounts: '%.*s' is not ACCOUNT:USER,USER...",
                                   (int)len, p);
        for (const char *u = colon + 1; u < p + len;) {
            size_t n = (size_t)(p + len - u);
            const char *comma = memchr(u, ',', n);
            if (comma)
                n = (size_t)(comma - u);
            if (n == 0)
                return lucid_error_set(err, "[slurm] accounts: an empty user name in '%.*s'",
                                       (int)len, p);
            int32_t id = users ? lucid_strtab_find_n(users, u, n) : -1;
            if (id >= 0 && account) {
                int32_t slot = lucid_fairshare_slot(id, nslots);
                if (slot > 0)
                    account[slot] = naccounts;
            }
            u += n + (comma ? 1 : 0);
        }
        naccounts++;
        p += len;
    }
    return naccounts;
}

/* Arrivals join at the end: decide() orders the queue. */
static int never_before(const lucid_sched *s, int32_t a, int32_t b)
{
    (void)s;
    (void)a;
    (void)b;
    return 0;
}

/* Orders the queue by priority now (higher first, then arrival order),
 * then starts in that order. */
static void decide(lucid_sched *s)
{
    const double *fs = fs_table(s); /* at every recalculation, even with nothing to order */
    if (s->qlen > 1 && LUCID_GROW(s->fair_order, s->fair_cap, s->qlen) == 0) {
        for (size_t i = 0; i < s->qlen; i++) {
            int32_t job = s->queue[i];
            s->fair_order[i] = (lucid_queued){.key = -priority_of(s, job, fs),
                                              .seq = s->run[job].arrival_seq,
                                              .index = (uint32_t)job};
        }
        lucid_queue_sort(s->fair_order, s->qlen);
        for (size_t i = 0; i < s->qlen; i++)
            s->queue[i] = (int32_t)s->fair_order[i].index;
    }
    /* sched/backfill runs every bf_interval; at the decisions in between
     * only the main scheduler does (priority order, the first job that
     * does not fit stops it). */
    const lucid_slurm_priority *w = weights(s);
    struct lucid_backfill *bf = s->backfill;
    if (bf && last_multiple(w->bf_interval, s->now) != s->now)
        s->backfill = NULL;
    lucid_decide_head_of_line(s);
    s->backfill = bf;
}

/* Priorities move at each recalculation while jobs wait behind running
 * ones (age, usage): the next one is a decision point then. */
static int64_t next_decision(const lucid_sched *s)
{
    const lucid_slurm_priority *w = weights(s);
    int64_t next = LUCID_NEVER;
    /* While jobs run, usage grows: Slurm's factors are those of its last
     * recalculation, so the policy takes them at each (fs_table). */
    if (s->nrunning > 0 &&
        ((s->qlen >= 2 && w->weight_age > 0) || (w->weight_fairshare > 0 && s->fairshare)))
        next = last_calc(w, s->now) + (w->calc_period > 0 ? w->calc_period : 1);
    /* The next backfill pass, while jobs wait behind running ones. */
    if (s->backfill && s->qlen > 0 && s->nrunning > 0 && w->bf_interval > 1) {
        int64_t at = last_multiple(w->bf_interval, s->now) + w->bf_interval;
        if (at < next)
            next = at;
    }
    return next;
}

const lucid_policy_ops lucid_policy_slurm = {
    .name = "slurm",
    .summary = "Slurm: priority/multifactor order (age, fair share, job size), "
               "sched/builtin start; [slurm] backfill for sched/backfill",
    .flags = LUCID_POLICY_HEAD_OF_LINE,
    .arrive = lucid_sched_arrive_ordered,
    .order = never_before,
    .decide = decide,
    .next_decision = next_decision,
};
