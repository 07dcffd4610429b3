/* limits.c — the site's GPU limits from sacctmgr's output, which of them
 * apply to a job, and one decision's book of what runs against each
 * (limits.h). */
#include "limits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/util.h"

/* A field of a sacctmgr line: start and length. */
typedef struct field {
    const char *at;
    size_t len;
} field;

/* Splits `len` bytes at '|' into at most `max` fields; returns how many
 * (`sacctmgr -P` writes no '|' after the last field, so "a||" is three
 * fields, the last two empty). */
static int split(const char *line, size_t len, field *out, int max)
{
    int n = 0;
    const char *p = line, *end = line + len;
    while (n < max) {
        const char *bar = memchr(p, '|', (size_t)(end - p));
        const char *stop = bar ? bar : end;
        out[n++] = (field){p, (size_t)(stop - p)};
        if (!bar)
            break;
        p = bar + 1;
    }
    return n;
}

static void copy_field(char *dst, size_t size, field f)
{
    size_t n = f.len < size ? f.len : size - 1;
    memcpy(dst, f.at, n);
    dst[n] = '\0';
}

/* GPUs of the untyped gres/gpu item of a TRES list of `len` bytes. */
static int tres_gpus(const char *tres, size_t len)
{
    static const char key[] = "gres/gpu=";
    const char *end = tres + len;
    for (const char *p = tres; p < end;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        size_t n = (size_t)(stop - p);
        if (n >= sizeof key - 1 && memcmp(p, key, sizeof key - 1) == 0) {
            const char *v = p + sizeof key - 1;
            long gpus = 0;
            if (v == stop)
                return -2;
            for (; v < stop; v++) {
                if (*v < '0' || *v > '9' || gpus > 1000000)
                    return -2;
                gpus = gpus * 10 + (*v - '0');
            }
            return gpus > 1000000 ? -2 : (int)gpus;
        }
        p = comma ? comma + 1 : end;
    }
    return LIMIT_NONE;
}

int limits_tres_gpus(const char *tres)
{
    return tres ? tres_gpus(tres, strlen(tres)) : LIMIT_NONE;
}

/* One field's GPU limit; an unreadable one is no limit, and said once. */
static int gpus_of(field f, const char *record, const char *what, long line, char *bad,
                   size_t size)
{
    int gpus = tres_gpus(f.at, f.len);
    if (gpus == -2) {
        if (bad && size && !bad[0])
            snprintf(bad, size, "sacctmgr line %ld: %s %s: cannot read '%.*s'; ignored", line,
                     record, what, (int)(f.len < 80 ? f.len : 80), f.at);
        return LIMIT_NONE;
    }
    return gpus;
}

/* What a line of one sacctmgr command becomes: `fields` fields at least,
 * filled into a record of `size` bytes, kept sorted by `order`. */
typedef struct record_kind {
    int fields; /* at least these; `extra` more are read when present (else empty) */
    int extra;
    size_t size;
    void (*fill)(void *record, const field *f, long line, char *bad, size_t bad_size);
    int (*order)(const void *a, const void *b);
} record_kind;

/* The records of every line with enough fields (and a first one); the
 * first problem in `bad`.  Count, or -1 out of memory. */
static long parse_records(const record_kind *kind, const char *text, void **out, char *bad,
                          size_t bad_size, lucid_error *err)
{
    char *records = NULL;
    size_t n = 0, cap = 0;
    long number = 0;
    if (bad && bad_size)
        bad[0] = '\0';
    *out = NULL;
    for (const char *line = text ? text : ""; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        number++;
        if (len > 0 && line[len - 1] == '\r')
            len--;
        field f[8] = {{0}};
        int nfields = len > 0 ? split(line, len, f, kind->fields + kind->extra) : 0;
        if (len > 0 && (nfields < kind->fields || f[0].len == 0)) {
            if (bad && bad_size && !bad[0])
                snprintf(bad, bad_size, "sacctmgr line %ld: %d fields, expected %d; skipped",
                         number, nfields, kind->fields);
        } else if (len > 0) {
            if (lucid_grow((void **)&records, &cap, n + 1, kind->size) < 0) {
                free(records);
                return lucid_error_set(err, "out of memory");
            }
            kind->fill(records + n * kind->size, f, number, bad, bad_size);
            n++;
        }
        line = end ? end + 1 : NULL;
    }
    if (n > 1)
        qsort(records, n, kind->size, kind->order);
    *out = records;
    return (long)n;
}

static void fill_qos(void *record, const field *f, long line, char *bad, size_t size)
{
    limit_qos *q = record;
    copy_field(q->name, sizeof q->name, f[0]);
    char name[80];
    snprintf(name, sizeof name, "QOS %s", q->name);
    q->per_job = gpus_of(f[1], name, "MaxTRESPerJob", line, bad, size);
    q->per_user = gpus_of(f[2], name, "MaxTRESPerUser", line, bad, size);
    q->per_account = gpus_of(f[3], name, "MaxTRESPerAccount", line, bad, size);
    q->group = gpus_of(f[4], name, "GrpTRES", line, bad, size);
    /* Priority (the QOS factor's numerator): a whole number, 0 when empty
     * or absent (an older reader's five fields); unreadable: 0, said once. */
    q->priority = 0;
    long prio = 0;
    size_t k = 0;
    for (; k < f[5].len && f[5].at[k] >= '0' && f[5].at[k] <= '9' && prio < 100000000; k++)
        prio = prio * 10 + (f[5].at[k] - '0');
    if (k == f[5].len)
        q->priority = (int)prio;
    else if (bad && size && !bad[0])
        snprintf(bad, size, "sacctmgr line %ld: %s Priority: cannot read '%.*s'; ignored", line,
                 name, (int)(f[5].len < 80 ? f[5].len : 80), f[5].at);
}

static int by_qos_name(const void *a, const void *b)
{
    return strcmp(((const limit_qos *)a)->name, ((const limit_qos *)b)->name);
}

long limits_parse_qos(const char *text, limit_qos **out, char *bad, size_t size, lucid_error *err)
{
    static const record_kind qos = {5, 1, sizeof(limit_qos), fill_qos, by_qos_name};
    void *records = NULL;
    long n = parse_records(&qos, text, &records, bad, size, err);
    *out = records;
    return n;
}

static void fill_assoc(void *record, const field *f, long line, char *bad, size_t size)
{
    limit_assoc *a = record;
    copy_field(a->account, sizeof a->account, f[0]);
    copy_field(a->user, sizeof a->user, f[1]);
    copy_field(a->partition, sizeof a->partition, f[2]);
    copy_field(a->parent, sizeof a->parent, f[3]);
    char name[160];
    snprintf(name, sizeof name, "association %s%s%s", a->account, a->user[0] ? "/" : "",
             a->user);
    a->per_job = gpus_of(f[4], name, "MaxTRES", line, bad, size);
    a->group = gpus_of(f[5], name, "GrpTRES", line, bad, size);
}

static int by_assoc_key(const void *a, const void *b)
{
    const limit_assoc *x = a, *y = b;
    int c = strcmp(x->account, y->account);
    if (!c)
        c = strcmp(x->user, y->user);
    return c ? c : strcmp(x->partition, y->partition);
}

long limits_parse_assoc(const char *text, limit_assoc **out, char *bad, size_t size,
                        lucid_error *err)
{
    static const record_kind assoc = {6, 0, sizeof(limit_assoc), fill_assoc, by_assoc_key};
    void *records = NULL;
    long n = parse_records(&assoc, text, &records, bad, size, err);
    *out = records;
    return n;
}

int limits_qos_top(const slurm_limits *site)
{
    int top = 0;
    for (long k = 0; k < site->nqos; k++)
        if (site->qos[k].priority > top)
            top = site->qos[k].priority;
    return top;
}

double limits_qos_factor(const slurm_limits *site, const char *qos)
{
    int top = limits_qos_top(site);
    for (long k = 0; k < site->nqos && qos && top > 0; k++)
        if (strcmp(site->qos[k].name, qos) == 0)
            return (double)site->qos[k].priority / top;
    return 0.0;
}

int limits_any(const slurm_limits *site)
{
    for (long k = 0; k < site->nqos; k++) {
        const limit_qos *q = &site->qos[k];
        if (q->per_job >= 0 || q->per_user >= 0 || q->per_account >= 0 || q->group >= 0)
            return 1;
    }
    for (long k = 0; k < site->nassoc; k++)
        if (site->assoc[k].per_job >= 0 || site->assoc[k].group >= 0)
            return 1;
    return 0;
}

void limits_free(slurm_limits *site)
{
    free(site->qos);
    free(site->assoc);
    *site = (slurm_limits){0};
}

static const limit_assoc *find_assoc(const slurm_limits *site, const char *account,
                                     const char *user, const char *partition)
{
    limit_assoc key;
    snprintf(key.account, sizeof key.account, "%s", account);
    snprintf(key.user, sizeof key.user, "%s", user);
    snprintf(key.partition, sizeof key.partition, "%s", partition);
    return site->nassoc > 0 ? bsearch(&key, site->assoc, (size_t)site->nassoc, sizeof key,
                                      by_assoc_key)
                            : NULL;
}

static void add_limit(fit_limit *out, int *n, int gpus, int per_job, const char *whose,
                      const char *fmt, const char *a, const char *b, const char *c)
{
    if (*n >= FIT_LIMITS)
        return;
    fit_limit *l = &out[*n];
    *l = (fit_limit){.gpus = gpus, .per_job = per_job};
    char name[96];
    snprintf(name, sizeof name, fmt, a, b, c);
    snprintf(l->name, sizeof l->name, "%s gres/gpu=%d", name, gpus);
    snprintf(l->whose, sizeof l->whose, "%s", whose);
    for (int k = 0; k < *n; k++) /* once (a cycle in the account tree) */
        if (strcmp(out[k].name, l->name) == 0 && strcmp(out[k].whose, l->whose) == 0)
            return;
    (*n)++;
}

int limits_of_job(const slurm_limits *site, const limits_job *job, fit_limit *out)
{
    int n = 0, per_job = 0, group = 0;
    char whose[112];
    const limit_qos *q = NULL;
    if (job->qos && job->qos[0] && site->nqos > 0) {
        limit_qos key;
        snprintf(key.name, sizeof key.name, "%s", job->qos);
        q = bsearch(&key, site->qos, (size_t)site->nqos, sizeof key, by_qos_name);
    }
    if (q) {
        if ((per_job = q->per_job >= 0))
            add_limit(out, &n, q->per_job, 1, "", "QOS %s MaxTRESPerJob", q->name, "", "");
        snprintf(whose, sizeof whose, "user %s", job->user);
        if (q->per_user >= 0)
            add_limit(out, &n, q->per_user, 0, whose, "QOS %s MaxTRESPerUser", q->name, "", "");
        snprintf(whose, sizeof whose, "account %s", job->account);
        if (q->per_account >= 0)
            add_limit(out, &n, q->per_account, 0, whose, "QOS %s MaxTRESPerAccount", q->name, "",
                      "");
        snprintf(whose, sizeof whose, "QOS %s", q->name);
        if ((group = q->group >= 0))
            add_limit(out, &n, q->group, 0, whose, "QOS %s GrpTRES", q->name, "", "");
    }
    if (!job->account || !job->account[0])
        return n;
    const limit_assoc *a = find_assoc(site, job->account, job->user, job->partition);
    if (!a)
        a = find_assoc(site, job->account, job->user, "");
    if (a) {
        if (!per_job && a->per_job >= 0) {
            add_limit(out, &n, a->per_job, 1, "", "association %s/%s MaxTRES", a->account, a->user,
                      "");
            per_job = 1;
        }
        snprintf(whose, sizeof whose, "user %.45s in account %.45s", a->user, a->account);
        if (!group && a->group >= 0)
            add_limit(out, &n, a->group, 0, whose, "association %s/%s GrpTRES", a->account,
                      a->user, "");
    }
    /* The accounts above it, nearest first (a cycle cannot loop: depth). */
    const char *account = job->account;
    for (int depth = 0; account[0] && depth < 32; depth++) {
        const limit_assoc *up = find_assoc(site, account, "", "");
        if (!up)
            break;
        if (!per_job && up->per_job >= 0) {
            add_limit(out, &n, up->per_job, 1, "", "association %s MaxTRES", up->account, "", "");
            per_job = 1;
        }
        snprintf(whose, sizeof whose, "account %s", up->account);
        if (!group && up->group >= 0)
            add_limit(out, &n, up->group, 0, whose, "association %s GrpTRES", up->account, "", "");
        account = up->parent;
    }
    return n;
}

static int by_limit_key(const void *a, const void *b)
{
    const fit_limit *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->whose, y->whose);
}

static int by_limit_ptr(const void *a, const void *b)
{
    return by_limit_key(*(const fit_limit *const *)a, *(const fit_limit *const *)b);
}

void limits_book_free(limits_book *book)
{
    free(book->limits);
    *book = (limits_book){0};
}

int limits_book_build(limits_book *book, const slurm_limits *site, const limits_job *waiting,
                      size_t nwaiting, fit_limits *per_job, const limits_job *running,
                      size_t nrunning, lucid_error *err)
{
    *book = (limits_book){0};
    for (size_t k = 0; k < nwaiting; k++)
        per_job[k].count = 0;
    if (!limits_any(site) || nwaiting == 0)
        return 0;
    /* Every (job, limit) pair, then the distinct limits in key order. */
    size_t cap = 0, n = 0;
    fit_limit *all = NULL;
    size_t *owner = NULL, owner_cap = 0;
    fit_limit **sorted = NULL;
    for (size_t k = 0; k < nwaiting; k++) {
        fit_limit mine[FIT_LIMITS];
        int count = limits_of_job(site, &waiting[k], mine);
        if (count == 0)
            continue;
        if (LUCID_GROW(all, cap, n + (size_t)count) < 0 ||
            LUCID_GROW(owner, owner_cap, n + (size_t)count) < 0)
            goto oom;
        for (int i = 0; i < count; i++) {
            all[n] = mine[i];
            owner[n++] = k;
        }
    }
    if (n == 0) {
        free(all);
        free(owner);
        return 0;
    }
    if (!(sorted = malloc(n * sizeof *sorted)))
        goto oom;
    for (size_t i = 0; i < n; i++)
        sorted[i] = &all[i];
    qsort(sorted, n, sizeof *sorted, by_limit_ptr);
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++)
        distinct += i == 0 || by_limit_key(sorted[i - 1], sorted[i]) != 0;
    if (!(book->limits = malloc(distinct * sizeof *book->limits)))
        goto oom;
    for (size_t i = 0, at = 0; i < n; i++) {
        if (i == 0 || by_limit_key(sorted[i - 1], sorted[i]) != 0) {
            at = book->count++;
            book->limits[at] = *sorted[i];
        }
        fit_limits *mine = &per_job[owner[sorted[i] - all]];
        if (mine->count < FIT_LIMITS)
            mine->limit[mine->count++] = &book->limits[at];
    }
    /* What runs now counts against every booked limit it is under. */
    for (size_t r = 0; r < nrunning; r++) {
        fit_limit theirs[FIT_LIMITS];
        int count = limits_of_job(site, &running[r], theirs);
        for (int i = 0; i < count; i++) {
            if (theirs[i].per_job)
                continue;
            fit_limit *hit = bsearch(&theirs[i], book->limits, book->count,
                                     sizeof *book->limits, by_limit_key);
            if (hit)
                hit->used += running[r].gpus;
        }
    }
    free(sorted);
    free(all);
    free(owner);
    return 0;
oom:
    free(sorted);
    free(all);
    free(owner);
    limits_book_free(book);
    for (size_t k = 0; k < nwaiting; k++)
        per_job[k].count = 0;
    return lucid_error_set(err, "out of memory");
}
