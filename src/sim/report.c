/* report.c — the simulator's CSV outputs: per-job results, per-VC
 * summaries and the 60-second time series (sim.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/bounds.h"
#include "lucid/manifest.h"
#include "lucid/sim.h"
#include "sim_internal.h"

/* Rows are formatted into a buffer of our own and written in large blocks:
 * fprintf's format parsing was a tenth of a million-job run. */
typedef struct line_buf {
    char data[1 << 16];
    size_t len;
    FILE *out;
    /* Every byte written also goes through this hash when set (the
     * MANIFEST's, made here where the bytes are in the cache instead of
     * reading the file back). */
    lucid_xxh64_state *hash;
} line_buf;

static void write_out(line_buf *b, const void *data, size_t n)
{
    fwrite(data, 1, n, b->out);
    if (b->hash)
        lucid_xxh64_update(b->hash, data, n);
}

static void flush_buf(line_buf *b)
{
    write_out(b, b->data, b->len);
    b->len = 0;
}

static void put_bytes(line_buf *b, const char *s, size_t n)
{
    if (b->len + n > sizeof b->data)
        flush_buf(b);
    if (n > sizeof b->data) {
        write_out(b, s, n);
        return;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
}

static void put_str(line_buf *b, const char *s) { put_bytes(b, s, strlen(s)); }

/* inline asked for: GCC stopped inlining it once flush_buf also hashed
 * (28 M instructions of calls on Venus). */
static inline void put_char(line_buf *b, char c)
{
    if (b->len + 1 > sizeof b->data)
        flush_buf(b);
    b->data[b->len++] = c;
}

/* Two digits per division: the result files are mostly integers (140,000
 * rows of times on Venus), and one division per digit was a tenth of a
 * run. */
static const char digit_pairs[] = "00010203040506070809"
                                  "10111213141516171819"
                                  "20212223242526272829"
                                  "30313233343536373839"
                                  "40414243444546474849"
                                  "50515253545556575859"
                                  "60616263646566676869"
                                  "70717273747576777879"
                                  "80818283848586878889"
                                  "90919293949596979899";

/* The 8 decimal digits of x < 10^8 as byte values 0-9, leading zeros
 * included, the first digit in the lowest byte: x split into 4-digit
 * halves, each into 2-digit and then 1-digit lanes by multiplying with
 * reciprocals (exact in these ranges: x / 100 = x * 10486 >> 20 for
 * x < 10^4, x / 10 = x * 103 >> 10 for x < 100), every lane at once.
 * Little-endian use only. */
static inline uint64_t eight_digits(uint32_t x)
{
    uint64_t t = (uint64_t)(x / 10000) | ((uint64_t)(x % 10000) << 32);
    uint64_t q = ((t * 10486) >> 20) & 0x0000007F0000007Full;
    t = q | ((t - q * 100) << 16);
    q = ((t * 103) >> 10) & 0x000F000F000F000Full;
    return q | ((t - q * 10) << 8);
}

static void put_i64_any(line_buf *b, int64_t v)
{
    static const uint64_t pow10[] = {1ull,
                                     10ull,
                                     100ull,
                                     1000ull,
                                     10000ull,
                                     100000ull,
                                     1000000ull,
                                     10000000ull,
                                     100000000ull,
                                     1000000000ull,
                                     10000000000ull,
                                     100000000000ull,
                                     1000000000000ull,
                                     10000000000000ull,
                                     100000000000000ull,
                                     1000000000000000ull,
                                     10000000000000000ull,
                                     100000000000000000ull,
                                     1000000000000000000ull,
                                     10000000000000000000ull};
    /* Straight into the buffer (a sign and at most 20 digits): a copy of
     * a variable length was a call to memcpy per number. */
    if (b->len + 24 > sizeof b->data)
        flush_buf(b);
    char *d = b->data + b->len;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    if (v < 0)
        *d++ = '-';
    /* Digits from the bit length (log10(2) ~ 1233 / 4096), corrected by
     * one comparison: a loop over the powers was 8 compares a time stamp. */
    size_t bits = u ? 64 - (size_t)__builtin_clzll(u) : 1;
    size_t n = (bits * 1233) >> 12;
    n += n < 20 && u >= pow10[n];
    n += n == 0;
    char *p = d + n;
    /* Below 2^32 in 32-bit arithmetic, whose
     * divisions by 100 are cheaper multiplications. */
    if (u <= UINT32_MAX) {
        uint32_t x = (uint32_t)u;
        while (x >= 100) {
            uint32_t r = x % 100;
            x /= 100;
            p -= 2;
            p[0] = digit_pairs[2 * r];
            p[1] = digit_pairs[2 * r + 1];
        }
        u = x;
    }
    while (u >= 100) {
        size_t r = (size_t)(u % 100);
        u /= 100;
        p -= 2;
        p[0] = digit_pairs[2 * r];
        p[1] = digit_pairs[2 * r + 1];
    }
    if (u >= 10) {
        p[-2] = digit_pairs[2 * (size_t)u];
        p[-1] = digit_pairs[2 * (size_t)u + 1];
    } else {
        p[-1] = (char)('0' + u);
    }
    b->len = (size_t)(d + n - b->data);
}

/* The usual case inline: a count or time of up to 8 digits (nearly all
 * numbers of the result files) in one register, all digits at once, the
 * leading zeros (the low zero bytes) counted and shifted out, one 8-byte
 * store; the rest, and where the buffer is nearly full, above. */
static inline void put_i64(line_buf *b, int64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (v >= 0 && v < 100000000 && b->len + 8 <= sizeof b->data) {
        uint64_t t = eight_digits((uint32_t)v);
        size_t n = t ? 8 - (size_t)__builtin_ctzll(t) / 8 : 1;
        t = (t + 0x3030303030303030ull) >> (8 * (8 - n));
        memcpy(b->data + b->len, &t, sizeof t);
        b->len += n;
        return;
    }
#endif
    put_i64_any(b, v);
}

/* Whole numbers as integers, others with six decimals (as "%.6f"). */
static void put_number(line_buf *b, double v)
{
    if (v == (double)(int64_t)v) {
        put_i64(b, (int64_t)v);
        return;
    }
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.6f", v);
    put_str(b, tmp);
}

/* The strings of a table (VC names, the trace's users, states...) as
 * they are written, made once per file: every row names a VC and most a
 * user and a state, and a strlen, a call to memcpy and a search for
 * characters to quote per string were a fifth of writing the results.
 * Each string's field text, quoted as lucid_csv_write_field quotes it (a
 * comma, quote or line break inside) so that lucid_csv reads it back
 * unchanged, lies in `bytes`
 * followed by at least TEXT_PAD bytes, so that one of up to TEXT_PAD
 * bytes is copied as one fixed-size block. */
enum { TEXT_PAD = 16 };
typedef struct text_table {
    char *bytes;
    size_t *at; /* string k: bytes + at[k], len[k] bytes */
    uint32_t *len;
    int32_t n;
} text_table;

static void text_table_free(text_table *t)
{
    free(t->bytes);
    free(t->at);
    free(t->len);
    memset(t, 0, sizeof *t);
}

/* 0, or -1 (out of memory); an empty table for NULL.  quote = 0: the
 * strings as they are (VC names have always been written so). */
static int text_table_make(text_table *t, const lucid_strtab *tab, int quote)
{
    memset(t, 0, sizeof *t);
    int32_t n = tab ? lucid_strtab_count(tab) : 0;
    size_t total = TEXT_PAD;
    for (int32_t k = 0; k < n; k++) {
        const char *s = lucid_strtab_get(tab, k);
        size_t quotes = 0;
        for (const char *c = s; *c; c++)
            quotes += *c == '"';
        total += strlen(s) + 2 + quotes; /* quoted: two quotes and each inner one doubled */
    }
    t->bytes = calloc(total + TEXT_PAD, 1);
    t->at = malloc(((size_t)n + 1) * sizeof *t->at);
    t->len = malloc(((size_t)n + 1) * sizeof *t->len);
    if (!t->bytes || !t->at || !t->len) {
        text_table_free(t);
        return -1;
    }
    size_t used = 0;
    for (int32_t k = 0; k < n; k++) {
        const char *s = lucid_strtab_get(tab, k);
        char *to = t->bytes + used;
        size_t len = 0;
        if (!quote || !strpbrk(s, ",\"\r\n")) {
            len = strlen(s);
            memcpy(to, s, len);
        } else {
            to[len++] = '"';
            for (const char *c = s; *c; c++) {
                if (*c == '"')
                    to[len++] = '"';
                to[len++] = *c;
            }
            to[len++] = '"';
        }
        t->at[k] = used;
        t->len[k] = (uint32_t)len;
        used += len;
    }
    t->n = n;
    return 0;
}

/* String k of the table (nothing for k outside it). */
static inline void put_text(line_buf *b, const text_table *t, int32_t k)
{
    if (k < 0 || k >= t->n)
        return;
    size_t n = t->len[k];
    const char *s = t->bytes + t->at[k];
    if (n <= TEXT_PAD && b->len + TEXT_PAD <= sizeof b->data) {
        memcpy(b->data + b->len, s, TEXT_PAD);
        b->len += n;
        return;
    }
    put_bytes(b, s, n);
}

/* The trace's optional columns of one job (carry.c writes their header). */
static void carry_row(line_buf *b, const lucid_trace *trace, const text_table *strings,
                      const lucid_job *job)
{
    const int32_t text[] = {trace->has_user ? job->user : INT32_MIN,
                            trace->has_state ? job->state : INT32_MIN};
    for (int k = 0; k < 2; k++)
        if (text[k] != INT32_MIN) {
            put_char(b, ',');
            put_text(b, strings, text[k]);
        }
    if (trace->has_time_limit) {
        put_char(b, ',');
        if (job->time_limit >= 0)
            put_i64(b, job->time_limit);
    }
    if (trace->has_gpu_type) {
        put_char(b, ',');
        put_text(b, strings, job->gpu_type);
    }
}

/* Each job's "job_id,vc,gpu_num,submit_time", with which its rows of every
 * policy's jobs and eta files begin: formatted once for all of them
 * (sim.h).  The texts lie in one block, each followed by at least
 * TEXT_PAD bytes, and are copied 16 bytes at a time. */
struct lucid_row_prefix {
    text_table t;
};

void lucid_row_prefix_free(lucid_row_prefix *p)
{
    if (!p)
        return;
    text_table_free(&p->t);
    free(p);
}

lucid_row_prefix *lucid_row_prefix_make(const lucid_trace *trace, const lucid_vcs *vcs)
{
    lucid_row_prefix *p = calloc(1, sizeof *p);
    line_buf *b = malloc(sizeof *b);
    text_table names = {0};
    int ok = p && b && text_table_make(&names, vcs->names, 0) == 0;
    if (ok) {
        p->t.at = malloc((trace->njobs + 1) * sizeof *p->t.at);
        p->t.len = malloc((trace->njobs + 1) * sizeof *p->t.len);
        ok = p->t.at && p->t.len;
    }
    size_t cap = 0, used = 0;
    for (size_t i = 0; ok && i < trace->njobs; i++) {
        const lucid_job *job = &trace->jobs[i];
        b->len = 0; /* (one prefix never fills the buffer: it is not flushed) */
        put_i64(b, job->job_id);
        put_char(b, ',');
        put_text(b, &names, job->vc);
        put_char(b, ',');
        put_i64(b, job->gpu_num);
        put_char(b, ',');
        put_i64(b, job->submit_time);
        ok = LUCID_GROW(p->t.bytes, cap, used + b->len + TEXT_PAD) == 0;
        if (ok) {
            memcpy(p->t.bytes + used, b->data, b->len);
            p->t.at[i] = used;
            p->t.len[i] = (uint32_t)b->len;
            used += b->len;
        }
    }
    if (ok && (ok = LUCID_GROW(p->t.bytes, cap, used + TEXT_PAD) == 0))
        memset(p->t.bytes + used, 0, cap - used); /* the padding after the last */
    text_table_free(&names);
    free(b);
    if (!ok) {
        lucid_row_prefix_free(p);
        return NULL;
    }
    p->t.n = (int32_t)trace->njobs;
    return p;
}

/* Job i's prefix (its text rounded up to 16-byte blocks, all within the
 * block's padding). */
static inline void put_prefix(line_buf *b, const lucid_row_prefix *p, size_t i)
{
    size_t n = p->t.len[i];
    const char *s = p->t.bytes + p->t.at[i];
    if (b->len + n + TEXT_PAD > sizeof b->data)
        flush_buf(b);
    for (size_t k = 0; k < n; k += TEXT_PAD)
        memcpy(b->data + b->len + k, s + k, TEXT_PAD);
    b->len += n;
}

static int write_jobs(FILE *out, const lucid_trace *trace, const lucid_vcs *vcs,
                      const lucid_sim_result *result, const lucid_row_prefix *prefix,
                      lucid_xxh64_state *hash)
{
    int lucid = (result->policy->flags & LUCID_POLICY_LUCID) != 0;
    line_buf *b = malloc(sizeof *b);
    text_table names, strings;
    int made = text_table_make(&names, vcs->names, 0) == 0;
    made &= text_table_make(&strings, trace->strings, 1) == 0;
    if (!b || !made) {
        free(b);
        text_table_free(&names);
        text_table_free(&strings);
        return -1;
    }
    b->len = 0;
    b->out = out;
    b->hash = hash;
    /* The trace's optional columns (carry.c, carry_row); their names
     * through the buffer too, for the hash. */
    int carry = trace->has_user || trace->has_state || trace->has_time_limit || trace->has_gpu_type;
    put_str(b, "job_id,vc,gpu_num,submit_time,duration,start_time,end_time,queue,jct,delay,"
               "profiled,finished_in_profiler,profiler_s,packed_with");
    char *names_text = NULL;
    size_t names_len = 0;
    FILE *header = open_memstream(&names_text, &names_len);
    if (header) {
        lucid_carry_header(header, trace);
        if (fclose(header) == 0)
            put_bytes(b, names_text, names_len);
        else
            names_len = SIZE_MAX;
    }
    free(names_text);
    if (!header || names_len == SIZE_MAX) {
        free(b);
        text_table_free(&names);
        text_table_free(&strings);
        return -1;
    }
    put_char(b, '\n');
    for (size_t i = 0; i < trace->njobs; i++) {
        if (result->excluded[i])
            continue;
        const lucid_job *job = &trace->jobs[i];
        const lucid_jobresult *r = &result->run[i];
        const int64_t fields[] = {job->gpu_num, job->submit_time, job->duration, r->start_time,
                                  r->end_time};
        size_t k = 0;
        if (prefix) {
            put_prefix(b, prefix, i);
            k = 2; /* gpu_num and submit_time were in it */
        } else {
            put_i64(b, job->job_id);
            put_char(b, ',');
            put_text(b, &names, job->vc);
        }
        for (; k < sizeof fields / sizeof fields[0]; k++) {
            put_char(b, ',');
            put_i64(b, fields[k]);
        }
        put_char(b, ',');
        put_number(b, r->queue);
        put_char(b, ',');
        put_i64(b, r->end_time - job->submit_time);
        put_char(b, ',');
        /* delay = JCT - duration: one definition for every policy */
        put_i64(b, r->end_time - job->submit_time - job->duration);
        put_char(b, ',');
        if (lucid) {
            put_i64(b, r->profiled);
            put_char(b, ',');
            put_i64(b, r->finished_in_profiler);
            put_char(b, ',');
            const lucid_prof_run *pr = result->prof ? &result->prof[i] : NULL;
            put_i64(b, pr && pr->start >= 0 ? pr->end - pr->start : 0);
            put_char(b, ',');
        } else {
            put_bytes(b, ",,,", 3);
        }
        if (r->packed_with >= 0)
            put_i64(b, trace->jobs[r->packed_with].job_id);
        if (carry)
            carry_row(b, trace, &strings, job);
        put_char(b, '\n');
    }
    flush_buf(b);
    free(b);
    text_table_free(&names);
    text_table_free(&strings);
    return ferror(out) ? -1 : 0;
}

int lucid_write_jobs(FILE *out, const lucid_trace *trace, const lucid_vcs *vcs,
                     const lucid_sim_result *result)
{
    return write_jobs(out, trace, vcs, result, NULL, NULL);
}

/* A writer (write_jobs, write_eta) with the XXH64 of what it wrote. */
typedef int (*hashing_writer)(FILE *, const lucid_trace *, const lucid_vcs *,
                              const lucid_sim_result *, const lucid_row_prefix *,
                              lucid_xxh64_state *);

static int write_hashed(hashing_writer write, FILE *out, const lucid_trace *trace,
                        const lucid_vcs *vcs, const lucid_sim_result *result,
                        const lucid_row_prefix *prefix, uint64_t *xxh64)
{
    lucid_xxh64_state st;
    lucid_xxh64_init(&st);
    int rc = write(out, trace, vcs, result, prefix, &st);
    *xxh64 = lucid_xxh64_digest(&st);
    return rc;
}

int lucid_write_jobs_hashed(FILE *out, const lucid_trace *trace, const lucid_vcs *vcs,
                            const lucid_sim_result *result, const lucid_row_prefix *prefix,
                            uint64_t *xxh64)
{
    return write_hashed(write_jobs, out, trace, vcs, result, prefix, xxh64);
}

int lucid_write_summary_rows_of(FILE *out, const lucid_vcs *vcs, const lucid_sim_result *result,
                                const lucid_policy_summary *ps)
{
    int32_t *order = malloc(((size_t)vcs->count + 1) * sizeof *order);
    if (!order)
        return -1;
    for (int32_t v = 0; v < vcs->count; v++)
        order[v] = v;
    /* Names sort with strcmp; insertion sort avoids qsort's global context. */
    for (int32_t i = 1; i < vcs->count; i++) {
        int32_t v = order[i], k = i;
        while (k > 0 && strcmp(lucid_vcs_name(vcs, order[k - 1]), lucid_vcs_name(vcs, v)) > 0) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = v;
    }
    for (int32_t i = 0; i <= vcs->count; i++) {
        int32_t vc = i < vcs->count ? order[i] : -1;
        size_t at = vc >= 0 ? (size_t)vc : (size_t)vcs->count;
        const lucid_summary *sm = &ps->sums[at];
        if (vc >= 0 && sm->jobs == 0)
            continue;
        fprintf(out, "%s,%s,%lld,%.3f,%.3f,%.3f,%.3f,%.3f,%.0f", result->policy->name,
                vc >= 0 ? lucid_vcs_name(vcs, vc) : "all", (long long)sm->jobs, sm->avg_jct,
                sm->avg_queue, sm->p999_queue, sm->avg_delay, sm->avg_profiler_s,
                sm->profiler_gpu_s);
        lucid_metrics_write(out, &ps->metrics[at]);
        /* Start-time calibration at submission (eta-summary.csv's), empty
         * when the run made no predictions or no job waited over a minute. */
        if (ps->eta_waited[at] > 0)
            fprintf(out, ",%.4f,%.4f", ps->eta_cov[at], ps->eta_err[at]);
        else
            fputs(",,", out);
        /* offered_load, inputs (bounds.h: lucid_policy_summary) */
        if (ps->offered_load && ps->offered_load[at] == ps->offered_load[at])
            fprintf(out, ",%.4f,", ps->offered_load[at]);
        else
            fputs(",,", out);
        fputs(ps->inputs ? ps->inputs : "", out);
        lucid_metrics_ftf_write(out, &ps->metrics[at]);
        fputc('\n', out);
    }
    free(order);
    return ferror(out) ? -1 : 0;
}

int lucid_write_summary_rows(FILE *out, const lucid_trace *trace, const lucid_vcs *vcs,
                             const lucid_sim_result *result)
{
    lucid_policy_summary ps;
    if (lucid_policy_summary_make(&ps, trace, vcs, result) < 0)
        return -1;
    int rc = lucid_write_summary_rows_of(out, vcs, result, &ps);
    lucid_policy_summary_free(&ps);
    return rc;
}

int lucid_write_series(FILE *out, const lucid_vcs *vcs, const lucid_sim_result *result)
{
    fputs("time,vc,total_gpus,idle_gpus,pending_gpus,running_jobs,pending_jobs,packed_gpus,"
          "gpu_utilization\n",
          out);
    for (size_t i = 0; i < result->nsamples; i++) {
        const lucid_sample *s = &result->samples[i];
        double util = s->total_gpus > 0
                          ? (double)(s->total_gpus - s->idle_gpus) / (double)s->total_gpus
                          : 0.0;
        fprintf(out, "%lld,%s,%d,%d,%d,%d,%d,%d,%.3f\n", (long long)s->time,
                lucid_vcs_name(vcs, s->vc), s->total_gpus, s->idle_gpus, s->pending_gpus,
                s->running_jobs, s->pending_jobs, s->packed_gpus, util);
    }
    return ferror(out) ? -1 : 0;
}

/* Jobs whose wait is long enough for a prediction to matter. */
static int eta_counts(const lucid_sim_result *result, size_t i)
{
    const lucid_jobresult *r = &result->run[i];
    return !result->excluded[i] && r->start_time >= 0 && result->eta_p50[i] >= 0 &&
           r->start_time - result->eta_at[i] > 60;
}

/* The median of v[0..k), k > 0, as the mean of the two middle values of
 * the sorted order when k is even (selection; reorders v). */
static double median_of(double *v, size_t k)
{
    double upper = lucid_select_kth(v, k, k / 2);
    if (k % 2)
        return upper;
    double lower = v[0]; /* the largest of what selection left below k / 2 */
    for (size_t i = 1; i < k / 2; i++)
        if (v[i] > lower)
            lower = v[i];
    return (lower + upper) / 2;
}

void lucid_eta_calibration_vcs(const lucid_trace *trace, const lucid_sim_result *result,
                               int32_t nvcs, double *coverage, double *median_rel_error,
                               int64_t *n)
{
    size_t nv = (size_t)nvcs;
    for (size_t v = 0; v <= nv; v++) {
        coverage[v] = median_rel_error[v] = NAN;
        n[v] = 0;
    }
    if (!result->eta_p50)
        return;
    /* One pass: each counted job's relative error goes to its VC's segment
     * and to the list of all (trace order in both). */
    size_t *first = calloc(nv + 2, sizeof *first), *inside = calloc(nv + 1, sizeof *inside);
    double *all = malloc((trace->njobs + 1) * sizeof *all), *by_vc = malloc((trace->njobs + 1) * sizeof *by_vc);
    int32_t *vc_of = malloc((trace->njobs + 1) * sizeof *vc_of);
    size_t k = 0;
    if (first && inside && all && by_vc && vc_of) {
        for (size_t i = 0; i < trace->njobs; i++) {
            int32_t vc = trace->jobs[i].vc;
            if (vc < 0 || vc >= nvcs || !eta_counts(result, i))
                continue;
            int64_t start = result->run[i].start_time, submit = result->eta_at[i];
            size_t in = start >= result->eta_p10[i] && start <= result->eta_p90[i];
            inside[vc] += in;
            inside[nv] += in;
            double wait = (double)(start - submit);
            all[k] = fabs((double)(result->eta_p50[i] - submit) - wait) / wait;
            vc_of[k++] = vc;
            first[vc + 1]++;
        }
        for (size_t v = 0; v < nv; v++)
            first[v + 1] += first[v];
        for (size_t j = 0; j < k; j++)
            by_vc[first[vc_of[j]]++] = all[j];
        for (size_t v = nv; v > 0; v--)
            first[v] = first[v - 1];
        first[0] = 0;
        for (size_t v = 0; v <= nv; v++) {
            size_t count = v < nv ? first[v + 1] - first[v] : k;
            n[v] = (int64_t)count;
            if (count == 0)
                continue;
            coverage[v] = (double)inside[v] / (double)count;
            median_rel_error[v] = median_of(v < nv ? by_vc + first[v] : all, count);
        }
    }
    free(first);
    free(inside);
    free(all);
    free(by_vc);
    free(vc_of);
}

void lucid_eta_calibration(const lucid_trace *trace, const lucid_sim_result *result, int32_t vc,
                           double *coverage, double *median_rel_error, int64_t *n)
{
    int32_t nvcs = 0;
    for (size_t i = 0; i < trace->njobs; i++)
        nvcs = trace->jobs[i].vc >= nvcs ? trace->jobs[i].vc + 1 : nvcs;
    size_t at = vc >= 0 && vc < nvcs ? (size_t)vc : (size_t)nvcs;
    double *cov = malloc(((size_t)nvcs + 1) * sizeof *cov), *err = malloc(((size_t)nvcs + 1) * sizeof *err);
    int64_t *count = malloc(((size_t)nvcs + 1) * sizeof *count);
    *coverage = *median_rel_error = NAN;
    *n = 0;
    if (cov && err && count && (vc < nvcs)) {
        lucid_eta_calibration_vcs(trace, result, nvcs, cov, err, count);
        *coverage = cov[at];
        *median_rel_error = err[at];
        *n = count[at];
    }
    free(cov);
    free(err);
    free(count);
}

static void put_eta_row(line_buf *b, const lucid_trace *trace, const text_table *names,
                        const lucid_row_prefix *prefix, const lucid_sim_result *result, int32_t i,
                        const lucid_eta_row *e, int hourly)
{
    const lucid_job *job = &trace->jobs[i];
    int64_t start = result->run[i].start_time;
    const int64_t fields[] = {job->gpu_num, job->submit_time, e->at, start,
                              start - job->submit_time, e->p10, e->p50, e->p90};
    size_t k = 0;
    if (prefix) {
        put_prefix(b, prefix, (size_t)i);
        k = 2; /* gpu_num and submit_time were in it */
    } else {
        put_i64(b, job->job_id);
        put_char(b, ',');
        put_text(b, names, job->vc);
    }
    for (; k < sizeof fields / sizeof fields[0]; k++) {
        put_char(b, ',');
        put_i64(b, fields[k]);
    }
    if (hourly)
        put_bytes(b, ",hourly\n", 8);
    else
        put_bytes(b, ",queued\n", 8);
}

static int write_eta(FILE *out, const lucid_trace *trace, const lucid_vcs *vcs,
                     const lucid_sim_result *result, const lucid_row_prefix *prefix,
                     lucid_xxh64_state *hash)
{
    line_buf *b = malloc(sizeof *b);
    text_table names;
    if (!b || text_table_make(&names, vcs->names, 0) < 0) {
        free(b);
        return -1;
    }
    b->len = 0;
    b->out = out;
    b->hash = hash;
    put_str(b, "job_id,vc,gpu_num,submit_time,predicted_at,start_time,wait,eta_p10,eta_p50,"
               "eta_p90,when\n");
    size_t h = 0; /* eta_hourly is by job, then time */
    for (size_t i = 0; result->eta_p50 && i < trace->njobs; i++) {
        if (!result->excluded[i] && result->eta_p50[i] >= 0) {
            lucid_eta_row e = {(int32_t)i, result->eta_at[i], result->eta_p10[i],
                               result->eta_p50[i], result->eta_p90[i]};
            put_eta_row(b, trace, &names, prefix, result, (int32_t)i, &e, 0);
        }
        for (; h < result->neta_hourly && (size_t)result->eta_hourly[h].job == i; h++)
            if (!result->excluded[i] && result->eta_hourly[h].p50 >= 0)
                put_eta_row(b, trace, &names, prefix, result, (int32_t)i, &result->eta_hourly[h],
                            1);
    }
    flush_buf(b);
    free(b);
    text_table_free(&names);
    return ferror(out) ? -1 : 0;
}

int lucid_write_eta(FILE *out, const lucid_trace *trace, const lucid_vcs *vcs,
                    const lucid_sim_result *result)
{
    return write_eta(out, trace, vcs, result, NULL, NULL);
}

int lucid_write_eta_hashed(FILE *out, const lucid_trace *trace, const lucid_vcs *vcs,
                           const lucid_sim_result *result, const lucid_row_prefix *prefix,
                           uint64_t *xxh64)
{
    return write_hashed(write_eta, out, trace, vcs, result, prefix, xxh64);
}
