/* ordset.c — treap of (key, seq) -> job with subtree GPU sums (ordset.h).
 * Split and merge are recursive; a treap's depth is O(log n) with high
 * probability, so the recursion stays shallow. */
#include "ordset.h"

#include <math.h>
#include <stdlib.h>

#include "lucid/util.h"

#define NIL (-1)

void lucid_ordset_init(lucid_ordset *o)
{
    o->nodes = NULL;
    o->cap = o->used = o->count = 0;
    o->root = o->free_list = NIL;
    o->rng = 0x9e3779b97f4a7c15ULL;
}

void lucid_ordset_free(lucid_ordset *o)
{
    free(o->nodes);
    lucid_ordset_init(o);
}

static uint32_t next_prio(lucid_ordset *o)
{
    /* xorshift64*: the priorities only need to be unrelated to the keys */
    o->rng ^= o->rng >> 12;
    o->rng ^= o->rng << 25;
    o->rng ^= o->rng >> 27;
    return (uint32_t)((o->rng * 0x2545f4914f6cdd1dULL) >> 32);
}

static int64_t sum_of(const lucid_ordset *o, int32_t n) { return n == NIL ? 0 : o->nodes[n].sum; }

static void update(lucid_ordset *o, int32_t n)
{
    lucid_ordnode *x = &o->nodes[n];
    x->sum = x->gpus;
    x->min_gmem = x->gmem;
    x->min_score = x->score;
    x->min_priority = x->max_priority = x->priority;
    const int32_t kids[2] = {x->left, x->right};
    for (int k = 0; k < 2; k++) {
        if (kids[k] == NIL)
            continue;
        const lucid_ordnode *c = &o->nodes[kids[k]];
        x->sum += c->sum;
        x->min_gmem = fmin(x->min_gmem, c->min_gmem);
        x->min_score = c->min_score < x->min_score ? c->min_score : x->min_score;
        /* fmin/fmax skip NaN: a NaN priority never passes the rule anyway */
        x->min_priority = fmin(x->min_priority, c->min_priority);
        x->max_priority = fmax(x->max_priority, c->max_priority);
    }
}

static int before(const lucid_ordnode *x, double key, uint32_t seq)
{
    return x->key < key || (x->key == key && x->seq < seq);
}

/* Splits t into (< (key, seq)) and (>= (key, seq)). */
static void split(lucid_ordset *o, int32_t t, double key, uint32_t seq, int32_t *l, int32_t *r)
{
    if (t == NIL) {
        *l = *r = NIL;
        return;
    }
    if (before(&o->nodes[t], key, seq)) {
        split(o, o->nodes[t].right, key, seq, &o->nodes[t].right, r);
        *l = t;
    } else {
        split(o, o->nodes[t].left, key, seq, l, &o->nodes[t].left);
        *r = t;
    }
    update(o, t);
}

static int32_t merge(lucid_ordset *o, int32_t l, int32_t r)
{
    if (l == NIL)
        return r;
    if (r == NIL)
        return l;
    if (o->nodes[l].prio > o->nodes[r].prio) {
        o->nodes[l].right = merge(o, o->nodes[l].right, r);
        update(o, l);
        return l;
    }
    o->nodes[r].left = merge(o, l, o->nodes[r].left);
    update(o, r);
    return r;
}

int lucid_ordset_insert(lucid_ordset *o, double key, uint32_t seq, int32_t job, int32_t gpus)
{
    return lucid_ordset_insert_pair(o, key, seq, job, gpus, 0, 0, 0);
}

int lucid_ordset_insert_pair(lucid_ordset *o, double key, uint32_t seq, int32_t job, int32_t gpus,
                             double gmem, int32_t score, double priority)
{
    int32_t n;
    if (o->free_list != NIL) {
        n = o->free_list;
        o->free_list = o->nodes[n].left;
    } else {
        if (LUCID_GROW(o->nodes, o->cap, o->used + 1) < 0)
            return -1;
        n = (int32_t)o->used++;
    }
    o->nodes[n] = (lucid_ordnode){.key = key, .seq = seq, .prio = next_prio(o), .job = job,
                                  .gpus = gpus, .left = NIL, .right = NIL,
                                  .gmem = gmem == gmem ? gmem : 0, .score = score,
                                  .priority = priority};
    update(o, n);
    int32_t l, r;
    split(o, o->root, key, seq, &l, &r);
    o->root = merge(o, merge(o, l, n), r);
    o->count++;
    return 0;
}

static int32_t remove_from(lucid_ordset *o, int32_t t, double key, uint32_t seq, int *found)
{
    if (t == NIL)
        return NIL;
    lucid_ordnode *x = &o->nodes[t];
    if (x->key == key && x->seq == seq) {
        int32_t rest = merge(o, x->left, x->right);
        o->nodes[t].left = o->free_list;
        o->free_list = t;
        o->count--;
        *found = 1;
        return rest;
    }
    if (before(x, key, seq))
        o->nodes[t].right = remove_from(o, x->right, key, seq, found);
    else
        o->nodes[t].left = remove_from(o, x->left, key, seq, found);
    update(o, t);
    return t;
}

int lucid_ordset_remove(lucid_ordset *o, double key, uint32_t seq)
{
    int found = 0;
    o->root = remove_from(o, o->root, key, seq, &found);
    return found;
}

int64_t lucid_ordset_total(const lucid_ordset *o) { return sum_of(o, o->root); }

int64_t lucid_ordset_sum_below(const lucid_ordset *o, double k, int inclusive)
{
    int64_t sum = 0;
    for (int32_t t = o->root; t != NIL;) {
        const lucid_ordnode *x = &o->nodes[t];
        if (x->key < k || (inclusive && x->key == k)) {
            sum += sum_of(o, x->left) + x->gpus;
            t = x->right;
        } else {
            t = x->left;
        }
    }
    return sum;
}

int32_t lucid_ordset_first_exceeding(const lucid_ordset *o, int64_t target, int64_t *through)
{
    int64_t acc = 0;
    for (int32_t t = o->root; t != NIL;) {
        const lucid_ordnode *x = &o->nodes[t];
        int64_t left = sum_of(o, x->left);
        if (acc + left > target) {
            t = x->left;
        } else if (acc + left + x->gpus > target) {
            *through = acc + left + x->gpus;
            return x->job;
        } else {
            acc += left + x->gpus;
            t = x->right;
        }
    }
    return -1;
}

int32_t lucid_ordset_first_at_least(const lucid_ordset *o, double k, double *key)
{
    int32_t best = NIL;
    for (int32_t t = o->root; t != NIL;) {
        if (o->nodes[t].key >= k) {
            best = t;
            t = o->nodes[t].left;
        } else {
            t = o->nodes[t].right;
        }
    }
    if (best == NIL)
        return -1;
    *key = o->nodes[best].key;
    return o->nodes[best].job;
}

/* Could some element of subtree t pass the rule? (never a wrong "no") */
static int may_match(const lucid_ordnode *x, const lucid_ordset_match *m)
{
    if (!(x->min_gmem < m->gmem_below) || x->min_score > m->score_upto)
        return 0;
    double a = x->max_priority * m->ratio, b = x->min_priority * m->ratio;
    return m->priority <= fmax(a, b) || a != a || b != b;
}

static int32_t first_match(const lucid_ordset *o, int32_t t, const lucid_ordset_match *m)
{
    while (t != NIL && may_match(&o->nodes[t], m)) {
        const lucid_ordnode *x = &o->nodes[t];
        int32_t found = first_match(o, x->left, m);
        if (found >= 0)
            return found;
        if (m->accept(m->ctx, x->job))
            return x->job;
        t = x->right;
    }
    return -1;
}

int32_t lucid_ordset_first_match(const lucid_ordset *o, const lucid_ordset_match *m)
{
    return first_match(o, o->root, m);
}

/* Recursion depth is the treap's height (O(log n) expected). */
static void visit_jobs(const lucid_ordset *o, int32_t t, void (*visit)(void *ctx, int32_t job),
                       void *ctx)
{
    while (t != NIL) {
        const lucid_ordnode *x = &o->nodes[t];
        visit(ctx, x->job);
        visit_jobs(o, x->left, visit, ctx);
        t = x->right;
    }
}

void lucid_ordset_visit_jobs(const lucid_ordset *o, void (*visit)(void *ctx, int32_t job),
                             void *ctx)
{
    visit_jobs(o, o->root, visit, ctx);
}
