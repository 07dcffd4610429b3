/* trace.c — loading of traces, VC configurations and Lucid's side files
 * (trace.h).  Everything is validated on the way in: the simulator may then
 * assume well-formed data. */
#include "lucid/trace.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/csv.h"
#include "numparse.h"
#include "../sched/msort.h"

/* ---------------- VC configuration ---------------- */

int32_t lucid_vcs_add(lucid_vcs *vcs, const char *name, int32_t nodes)
{
    if (!vcs->names && !(vcs->names = lucid_strtab_new()))
        return -1;
    int32_t id = lucid_strtab_intern(vcs->names, name);
    if (id < 0)
        return -1;
    if (id < vcs->count) {
        vcs->nodes[id] = nodes;
        return id;
    }
    int32_t *grown = realloc(vcs->nodes, (size_t)(id + 1) * sizeof *grown);
    if (!grown)
        return -1;
    vcs->nodes = grown;
    vcs->nodes[id] = nodes;
    vcs->count = id + 1;
    return id;
}

int lucid_vcs_load(lucid_vcs *vcs, const char *path, lucid_error *err)
{
    memset(vcs, 0, sizeof *vcs);
    lucid_csv *csv = lucid_csv_open(path, err);
    if (!csv)
        return -1;
    int name_col = lucid_csv_col(csv, "vc");
    if (name_col < 0)
        name_col = lucid_csv_col(csv, ""); /* the reference's unnamed index column */
    int nodes_col = lucid_csv_col(csv, "nodes");
    if (nodes_col < 0)
        nodes_col = lucid_csv_col(csv, "num");
    if (name_col < 0 || nodes_col < 0) {
        lucid_error_at(err, path, 1, NULL,
                       "header must be 'vc,nodes' (or the reference's ',num')");
        lucid_csv_close(csv);
        return -1;
    }
    int got;
    while ((got = lucid_csv_next(csv, err)) == 1) {
        const char *name = lucid_csv_field(csv, name_col);
        int64_t nodes;
        if (!*name) {
            got = lucid_error_at(err, path, lucid_csv_line(csv), lucid_csv_header(csv, name_col),
                                 "empty VC name");
            break;
        }
        if (lucid_csv_i64(csv, nodes_col, &nodes, err) < 0) {
            got = -1;
            break;
        }
        if (nodes < 0 || nodes > 1000000) {
            got = lucid_error_at(err, path, lucid_csv_line(csv), lucid_csv_header(csv, nodes_col),
                                 "node count %lld out of range 0..1000000", (long long)nodes);
            break;
        }
        if (vcs->names && lucid_strtab_find(vcs->names, name) >= 0) {
            got = lucid_error_at(err, path, lucid_csv_line(csv), lucid_csv_header(csv, name_col),
                                 "VC '%s' listed twice", name);
            break;
        }
        if (lucid_vcs_add(vcs, name, (int32_t)nodes) < 0) {
            got = lucid_error_set(err, "%s: out of memory", path);
            break;
        }
    }
    lucid_csv_close(csv);
    if (got == 0 && vcs->count == 0)
        got = lucid_error_at(err, path, 0, NULL, "no VCs listed");
    if (got < 0) {
        lucid_vcs_free(vcs);
        return -1;
    }
    return 0;
}

void lucid_vcs_free(lucid_vcs *vcs)
{
    lucid_strtab_free(vcs->names);
    free(vcs->nodes);
    memset(vcs, 0, sizeof *vcs);
}

const char *lucid_vcs_name(const lucid_vcs *vcs, int32_t vc)
{
    return vcs->names ? lucid_strtab_get(vcs->names, vc) : "";
}

/* ---------------- trace ---------------- */

/* The trace's columns, table-driven: adding an optional column is one enum
 * entry, one table row and its reading in read_job. */
enum {
    COL_JOB_ID, COL_VC, COL_GPU_NUM, COL_CPU_NUM, COL_SUBMIT_TIME, COL_DURATION, COL_USER,
    COL_STATE, COL_TIME_LIMIT, COL_GPU_TYPE, COL_MODEL, COL_DATASET, COL_BATCHSIZE, COL_AMP,
    COL_SPEED, COL_GPU_UTIL, COL_GMEM_UTIL, COL_GMEM, NCOLUMNS
};

static const struct {
    const char *name;
    int required;
} trace_column_table[NCOLUMNS] = {
    [COL_JOB_ID] = {"job_id", 1},       [COL_VC] = {"vc", 1},
    [COL_GPU_NUM] = {"gpu_num", 1},     [COL_CPU_NUM] = {"cpu_num", 0},
    [COL_SUBMIT_TIME] = {"submit_time", 1}, [COL_DURATION] = {"duration", 1},
    [COL_USER] = {"user", 0},           [COL_STATE] = {"state", 0},
    [COL_TIME_LIMIT] = {"time_limit", 0}, [COL_GPU_TYPE] = {"gpu_type", 0},
    [COL_MODEL] = {"model", 0},         [COL_DATASET] = {"dataset", 0},
    [COL_BATCHSIZE] = {"batchsize", 0}, [COL_AMP] = {"amp", 0},
    [COL_SPEED] = {"speed", 0},         [COL_GPU_UTIL] = {"gpu_util", 0},
    [COL_GMEM_UTIL] = {"gmem_util", 0}, [COL_GMEM] = {"gmem", 0},
};

typedef struct trace_columns {
    int col[NCOLUMNS]; /* index in the file, -1 when absent */
    /* per column, the last string value (the interned copy, which lives as
     * long as its table: no copy per row) and its id: consecutive rows often
     * repeat a user, model or VC, and one comparison is cheaper than hashing */
    const char *last[NCOLUMNS];
    size_t last_len[NCOLUMNS];
    int32_t last_id[NCOLUMNS];
} trace_columns;

/* Column col of the current row as an integer / a number: the inline fast
 * paths (a word at a time for up to 8 bytes, then a loop), else the full
 * parser with its "file:line: field: reason" error. */
static int field_i64(const lucid_csv *csv, const char *const *row, const size_t *lens, int col,
                     int64_t *out, lucid_error *err)
{
    return lucid_swar_i64(row[col], lens[col], out) || lucid_fast_i64(row[col], out)
               ? 0
               : lucid_csv_i64(csv, col, out, err);
}

static int field_f64(const lucid_csv *csv, const char *const *row, const size_t *lens, int col,
                     double *out, lucid_error *err)
{
    return lucid_swar_f64(row[col], lens[col], out) || lucid_fast_f64(row[col], out)
               ? 0
               : lucid_csv_f64(csv, col, out, err);
}

/* The string id of column k's value (interned), or -1 when empty/absent. */
static int optional_string(lucid_trace *trace, const lucid_csv *csv, trace_columns *c, int k,
                           int32_t *out)
{
    *out = -1;
    if (c->col[k] < 0)
        return 0;
    const char *s = lucid_csv_field(csv, c->col[k]);
    size_t n = lucid_csv_field_len(csv, c->col[k]);
    if (!n)
        return 0;
    if (c->last_id[k] >= 0 && c->last_len[k] == n && lucid_bytes_equal(c->last[k], s, n)) {
        *out = c->last_id[k];
        return 0;
    }
    *out = lucid_strtab_intern_n(trace->strings, s, n);
    if (*out < 0)
        return -1;
    c->last[k] = lucid_strtab_get(trace->strings, *out);
    c->last_len[k] = n;
    c->last_id[k] = *out;
    return 0;
}

static int optional_number(const lucid_csv *csv, const char *const *row, const size_t *lens,
                           int col, double *out, lucid_error *err)
{
    *out = NAN;
    if (col < 0 || !*row[col])
        return 0;
    return field_f64(csv, row, lens, col, out, err);
}

static int read_submit_time(const lucid_csv *csv, const char *const *row, const size_t *lens,
                            int col, int64_t *out, lucid_error *err)
{
    const char *s = row[col];
    if (lucid_swar_i64(s, lens[col], out) || lucid_fast_i64(s, out)) {
        /* plain seconds: range-checked below */
    } else if (strchr(s, '-') && strchr(s + 1, '-')) {
        if (lucid_time_parse(s, out) < 0)
            return lucid_error_at(err, lucid_csv_name(csv), lucid_csv_line(csv), "submit_time",
                                  "'%s' is neither integer seconds nor YYYY-MM-DD HH:MM:SS", s);
    } else if (lucid_csv_i64(csv, col, out, err) < 0) {
        return -1;
    }
    if (*out < 0)
        return lucid_error_at(err, lucid_csv_name(csv), lucid_csv_line(csv), "submit_time",
                              "negative time %lld", (long long)*out);
    if (*out > LUCID_TIME_MAX)
        return lucid_error_at(err, lucid_csv_name(csv), lucid_csv_line(csv), "submit_time",
                              "%lld is beyond the latest supported time %lld (2^40 s)",
                              (long long)*out, (long long)LUCID_TIME_MAX);
    return 0;
}

static int check_range(const lucid_csv *csv, const char *field, int64_t v, int64_t lo, int64_t hi,
                       lucid_error *err)
{
    if (v < lo || v > hi)
        return lucid_error_at(err, lucid_csv_name(csv), lucid_csv_line(csv), field,
                              "%lld out of range %lld..%lld", (long long)v, (long long)lo,
                              (long long)hi);
    return 0;
}

static int read_job(lucid_trace *trace, const lucid_csv *csv, trace_columns *c,
                    const lucid_vcs *vcs, lucid_job *job, int *skip, lucid_error *err)
{
    const char *file = lucid_csv_name(csv);
    long line = lucid_csv_line(csv);
    const char *const *row = lucid_csv_row(csv); /* every column is there: lucid_csv_next checked */
    const size_t *lens = lucid_csv_row_lens(csv);
    int64_t v;
    memset(job, 0, sizeof *job);
    *skip = 0;
    job->line = (int32_t)line;
    if (field_i64(csv, row, lens, c->col[COL_JOB_ID], &job->job_id, err) < 0)
        return -1;
    const char *vc = row[c->col[COL_VC]];
    size_t vc_len = lens[c->col[COL_VC]];
    if (c->last_id[COL_VC] >= 0 && c->last_len[COL_VC] == vc_len &&
        lucid_bytes_equal(c->last[COL_VC], vc, vc_len)) {
        job->vc = c->last_id[COL_VC];
    } else {
        job->vc = vcs->names ? lucid_strtab_find_n(vcs->names, vc, vc_len) : -1;
        if (job->vc >= 0) {
            c->last[COL_VC] = lucid_strtab_get(vcs->names, job->vc);
            c->last_len[COL_VC] = vc_len;
            c->last_id[COL_VC] = job->vc;
        }
    }
    if (job->vc < 0)
        return lucid_error_at(err, file, line, "vc", "unknown VC '%s' (not in the VC configuration)",
                              vc);
    if (field_i64(csv, row, lens, c->col[COL_GPU_NUM], &v, err) < 0 || check_range(csv, "gpu_num", v, 0, 1 << 20, err) < 0)
        return -1;
    job->gpu_num = (int32_t)v;
    if (v == 0) {
        *skip = 1; /* CPU-only job: GPU schedulers never see it (the reference drops it too) */
        return 0;
    }
    job->cpu_num = 0;
    if (c->col[COL_CPU_NUM] >= 0 && *row[c->col[COL_CPU_NUM]]) {
        if (field_i64(csv, row, lens, c->col[COL_CPU_NUM], &v, err) < 0 || check_range(csv, "cpu_num", v, 0, 1 << 24, err) < 0)
            return -1;
        job->cpu_num = (int32_t)v;
    }
    if (read_submit_time(csv, row, lens, c->col[COL_SUBMIT_TIME], &job->submit_time, err) < 0)
        return -1;
    if (field_i64(csv, row, lens, c->col[COL_DURATION], &job->duration, err) < 0)
        return -1;
    if (job->duration <= 0)
        return lucid_error_at(err, file, line, "duration",
                              "%lld: a duration must be a positive number of seconds",
                              (long long)job->duration);
    if (job->duration > LUCID_TIME_MAX)
        return lucid_error_at(err, file, line, "duration",
                              "%lld is beyond the longest supported duration %lld (2^40 s)",
                              (long long)job->duration, (long long)LUCID_TIME_MAX);
    job->time_limit = -1;
    if (c->col[COL_TIME_LIMIT] >= 0 && *row[c->col[COL_TIME_LIMIT]]) {
        if (field_i64(csv, row, lens, c->col[COL_TIME_LIMIT], &v, err) < 0 ||
            check_range(csv, "time_limit", v, 0, LUCID_TIME_MAX, err) < 0)
            return -1;
        job->time_limit = v;
    }
    if (optional_string(trace, csv, c, COL_USER, &job->user) < 0 ||
        optional_string(trace, csv, c, COL_STATE, &job->state) < 0 ||
        optional_string(trace, csv, c, COL_GPU_TYPE, &job->gpu_type) < 0 ||
        optional_string(trace, csv, c, COL_MODEL, &job->workload.model) < 0 ||
        optional_string(trace, csv, c, COL_DATASET, &job->workload.dataset) < 0)
        return lucid_error_set(err, "%s: out of memory", file);
    job->workload.batchsize = -1;
    job->workload.amp = -1;
    if (c->col[COL_BATCHSIZE] >= 0 && *row[c->col[COL_BATCHSIZE]]) {
        if (field_i64(csv, row, lens, c->col[COL_BATCHSIZE], &v, err) < 0 || check_range(csv, "batchsize", v, 0, 1 << 30, err) < 0)
            return -1;
        job->workload.batchsize = (int32_t)v;
    }
    if (c->col[COL_AMP] >= 0 && *row[c->col[COL_AMP]]) {
        if (field_i64(csv, row, lens, c->col[COL_AMP], &v, err) < 0 || check_range(csv, "amp", v, 0, 1, err) < 0)
            return -1;
        job->workload.amp = (int32_t)v;
    }
    if (optional_number(csv, row, lens, c->col[COL_SPEED], &job->speed, err) < 0 ||
        optional_number(csv, row, lens, c->col[COL_GPU_UTIL], &job->gpu_util, err) < 0 ||
        optional_number(csv, row, lens, c->col[COL_GMEM_UTIL], &job->gmem_util, err) < 0 ||
        optional_number(csv, row, lens, c->col[COL_GMEM], &job->gmem, err) < 0)
        return -1;
    if (job->gmem < 0)
        return lucid_error_at(err, file, line, "gmem", "negative memory %g", job->gmem);
    return 0;
}

static int compare_submit(const void *a, const void *b)
{
    const lucid_job *x = a, *y = b;
    if (x->submit_time != y->submit_time)
        return x->submit_time < y->submit_time ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line; /* file order breaks ties */
}

typedef struct id_pair {
    int64_t id, index;
} id_pair;

/* By id; the sort is stable and the pairs are made in index order, so
 * equal ids stay in index order (inline: qsort's comparison calls were
 * most of a millisecond on Venus, whose ids are out of order 1,575 times). */
#define ID_LESS(a, b) ((a)->id < (b)->id)
LUCID_MERGE_SORT(sort_id_pairs, id_pair, ID_LESS)

/* `ids_increase`: the loader saw strictly increasing ids in trace order
 * (the usual case): the index is the identity, and no pairs need be made,
 * sorted or faulted in. */
static int build_id_index(lucid_trace *trace, const char *name, int ids_increase, lucid_error *err)
{
    trace->by_id = malloc((trace->njobs + 1) * sizeof *trace->by_id);
    if (!trace->by_id)
        return lucid_error_set(err, "%s: out of memory", name);
    if (ids_increase) {
        for (size_t i = 0; i < trace->njobs; i++)
            trace->by_id[i] = (int64_t)i;
        return 0;
    }
    id_pair *pairs = malloc(2 * (trace->njobs + 1) * sizeof *pairs);
    if (!pairs)
        return lucid_error_set(err, "%s: out of memory", name);
    for (size_t i = 0; i < trace->njobs; i++) {
        pairs[i].id = trace->jobs[i].job_id;
        pairs[i].index = (int64_t)i;
    }
    sort_id_pairs(pairs, pairs + trace->njobs + 1, trace->njobs);
    int rc = 0;
    for (size_t i = 0; i < trace->njobs; i++) {
        trace->by_id[i] = pairs[i].index;
        if (i > 0 && pairs[i].id == pairs[i - 1].id) {
            const lucid_job *dup = &trace->jobs[pairs[i].index];
            rc = lucid_error_at(err, name, dup->line, "job_id", "duplicate job id %lld",
                                (long long)dup->job_id);
            break;
        }
    }
    free(pairs);
    return rc;
}

/* The first position of by_id whose job id is >= job_id (njobs if none). */
static size_t by_id_lower_bound(const lucid_trace *trace, int64_t job_id)
{
    size_t lo = 0, hi = trace->njobs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t id = trace->jobs[trace->by_id[mid]].job_id;
        if (id < job_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int64_t lucid_trace_find(const lucid_trace *trace, int64_t job_id)
{
    size_t lo = by_id_lower_bound(trace, job_id);
    if (lo < trace->njobs && trace->jobs[trace->by_id[lo]].job_id == job_id)
        return trace->by_id[lo];
    return -1;
}

/* Reads rows into trace->jobs until the input ends or, with limit > 0,
 * until the next row would start at byte `limit` or later.  *in_order and
 * *ids_increase: whether the jobs come in submission order and with
 * increasing ids, checked against the previous job while it is still in
 * the cache (two passes over the records afterwards were a quarter of the
 * loading).  1 when rows remain (the limit stopped it), 0 at the end, -1 on
 * an error. */
static int load_rows(lucid_trace *trace, lucid_csv *csv, trace_columns *c, const lucid_vcs *vcs,
                     size_t limit, size_t *cap, int *in_order, int *ids_increase, lucid_error *err)
{
    const char *name = lucid_csv_name(csv);
    for (;;) {
        if (limit && lucid_csv_offset(csv) >= limit)
            return 1;
        int got = lucid_csv_next(csv, err);
        if (got <= 0)
            return got;
        if (LUCID_GROW(trace->jobs, *cap, trace->njobs + 2) < 0)
            return lucid_error_set(err, "%s: out of memory", name);
        int skip;
        if (read_job(trace, csv, c, vcs, &trace->jobs[trace->njobs], &skip, err) < 0)
            return -1;
        if (skip) {
            trace->skipped_cpu_jobs++;
            continue;
        }
        if (trace->njobs > 0) {
            const lucid_job *prev = &trace->jobs[trace->njobs - 1], *job = prev + 1;
            /* ties keep file order: a later line never sorts before */
            *in_order &= prev->submit_time <= job->submit_time;
            *ids_increase &= prev->job_id < job->job_id;
        }
        trace->njobs++;
    }
}

/* The second half of a file read on a thread of its own: its jobs with
 * line numbers counted from where it starts and string ids of its own
 * table, put in place by merge_part. */
typedef struct trace_part {
    lucid_trace trace;
    lucid_csv *csv;
    trace_columns c;
    const lucid_vcs *vcs;
    size_t cap;
    int in_order, ids_increase, rc;
    lucid_error err;
} trace_part;

static void *load_part(void *arg)
{
    trace_part *p = arg;
    p->rc = load_rows(&p->trace, p->csv, &p->c, p->vcs, 0, &p->cap, &p->in_order,
                      &p->ids_increase, &p->err);
    return NULL;
}

/* Appends the part read from line `line` on: its strings interned in the
 * order of their ids there (the order in which a reading of the whole file
 * would have met them, so every id is the same), its lines shifted. */
static int merge_part(lucid_trace *trace, size_t *cap, const trace_part *p, long line,
                      int *in_order, int *ids_increase)
{
    int32_t nstrings = lucid_strtab_count(p->trace.strings);
    int32_t *id = malloc(((size_t)nstrings + 1) * sizeof *id);
    if (!id || LUCID_GROW(trace->jobs, *cap, trace->njobs + p->trace.njobs + 2) < 0) {
        free(id);
        return -1;
    }
    for (int32_t k = 0; k < nstrings; k++)
        if ((id[k] = lucid_strtab_intern(trace->strings, lucid_strtab_get(p->trace.strings, k))) < 0) {
            free(id);
            return -1;
        }
    if (trace->njobs > 0 && p->trace.njobs > 0) {
        const lucid_job *prev = &trace->jobs[trace->njobs - 1], *job = &p->trace.jobs[0];
        *in_order &= prev->submit_time <= job->submit_time;
        *ids_increase &= prev->job_id < job->job_id;
    }
    *in_order &= p->in_order;
    *ids_increase &= p->ids_increase;
    lucid_job *to = trace->jobs + trace->njobs;
    memcpy(to, p->trace.jobs, p->trace.njobs * sizeof *to);
    for (size_t i = 0; i < p->trace.njobs; i++) {
        lucid_job *job = &to[i];
        job->line = (int32_t)(job->line + line - 1);
        int32_t *text[] = {&job->user, &job->state, &job->gpu_type, &job->workload.model,
                           &job->workload.dataset};
        for (size_t k = 0; k < sizeof text / sizeof text[0]; k++)
            if (*text[k] >= 0)
                *text[k] = id[*text[k]];
    }
    trace->njobs += p->trace.njobs;
    trace->skipped_cpu_jobs += p->trace.skipped_cpu_jobs;
    free(id);
    return 0;
}

/* A file of at least this many bytes is read in two halves at once when
 * more than one thread is allowed. */
#define SPLIT_MIN_BYTES ((int64_t)1 << 20)

/* Starts reading the file's second half on a thread (its first row at the
 * first line start after the middle): the byte offset where it starts, or
 * 0 when not started (a small file or memory input, or no thread: all is
 * read here then). */
static size_t start_part(trace_part *p, lucid_csv *csv, const trace_columns *c,
                         const lucid_vcs *vcs, pthread_t *thread)
{
    int64_t size = lucid_csv_file_size(csv);
    memset(p, 0, sizeof *p);
    if (size < SPLIT_MIN_BYTES || !(p->csv = lucid_csv_open_from(csv, (size_t)size / 2)))
        return 0;
    size_t cut = lucid_csv_offset(p->csv);
    if (cut <= lucid_csv_offset(csv) || !(p->trace.strings = lucid_strtab_new())) {
        lucid_csv_close(p->csv);
        return 0;
    }
    p->c = *c;
    p->vcs = vcs;
    p->in_order = p->ids_increase = 1;
    if (pthread_create(thread, NULL, load_part, p) != 0) {
        lucid_strtab_free(p->trace.strings);
        lucid_csv_close(p->csv);
        return 0;
    }
    return cut;
}

static int load_from_csv(lucid_trace *trace, lucid_csv *csv, const lucid_vcs *vcs, int threads,
                         lucid_error *err)
{
    const char *name = lucid_csv_name(csv);
    trace_columns *c = calloc(1, sizeof *c);
    if (!c)
        return lucid_error_set(err, "%s: out of memory", name);
    for (int k = 0; k < NCOLUMNS; k++) {
        c->col[k] = lucid_csv_col(csv, trace_column_table[k].name);
        c->last_id[k] = -1;
        if (c->col[k] < 0 && trace_column_table[k].required) {
            free(c);
            return lucid_error_at(err, name, 1, trace_column_table[k].name,
                                  "required column is missing");
        }
    }
    const int *col = c->col;
    trace->has_workload = col[COL_MODEL] >= 0 && col[COL_DATASET] >= 0 &&
                          col[COL_BATCHSIZE] >= 0 && col[COL_AMP] >= 0;
    trace->has_metrics = col[COL_GPU_UTIL] >= 0 && col[COL_GMEM_UTIL] >= 0 && col[COL_GMEM] >= 0;
    trace->has_user = col[COL_USER] >= 0;
    trace->has_state = col[COL_STATE] >= 0;
    trace->has_time_limit = col[COL_TIME_LIMIT] >= 0;
    trace->has_gpu_type = col[COL_GPU_TYPE] >= 0;
    size_t cap = 0;
    int in_order = 1, ids_increase = 1;
    /* Two threads: this one reads up to where the second half starts.  The
     * halves are joined when this one's last row ends exactly there (no
     * quoted field spans the cut) and the other half read without an
     * error; otherwise this one reads on from there, so that the jobs, and
     * the first error with its line, are those of one reading in order. */
    trace_part *part = threads > 1 ? malloc(sizeof *part) : NULL;
    pthread_t thread;
    size_t cut = part ? start_part(part, csv, c, vcs, &thread) : 0;
    int split = cut > 0;
    int got = load_rows(trace, csv, c, vcs, cut, &cap, &in_order, &ids_increase, err);
    if (split) {
        pthread_join(thread, NULL);
        if (got == 1 && part->rc == 0 && lucid_csv_offset(csv) == cut) {
            if (merge_part(trace, &cap, part, lucid_csv_offset_line(csv), &in_order, &ids_increase) < 0)
                got = lucid_error_set(err, "%s: out of memory", name);
            else
                got = 0;
        }
        lucid_csv_close(part->csv);
        free(part->trace.jobs);
        lucid_strtab_free(part->trace.strings);
    }
    free(part);
    if (got == 1)
        got = load_rows(trace, csv, c, vcs, 0, &cap, &in_order, &ids_increase, err);
    free(c);
    if (got < 0)
        return -1;
    if (trace->njobs == 0)
        return lucid_error_at(err, name, 0, NULL, "no GPU jobs in the trace");
    /* Stable by construction: ties compare by line.  Most traces come
     * sorted already, and then there is nothing to do.  Sorting moves the
     * jobs: the ids' order is then checked again. */
    if (!in_order) {
        qsort(trace->jobs, trace->njobs, sizeof *trace->jobs, compare_submit);
        for (size_t k = 1; k < trace->njobs && ids_increase; k++)
            ids_increase = trace->jobs[k - 1].job_id < trace->jobs[k].job_id;
    }
    return build_id_index(trace, name, ids_increase, err);
}

static int load_common(lucid_trace *trace, lucid_csv *csv, const lucid_vcs *vcs, int threads,
                       lucid_error *err)
{
    if (!csv)
        return -1;
    trace->strings = lucid_strtab_new();
    if (!trace->strings) {
        lucid_csv_close(csv);
        return lucid_error_set(err, "out of memory");
    }
    int rc = load_from_csv(trace, csv, vcs, threads, err);
    lucid_csv_close(csv);
    if (rc < 0)
        lucid_trace_free(trace);
    return rc;
}

int lucid_trace_load(lucid_trace *trace, const char *path, const lucid_vcs *vcs, lucid_error *err)
{
    return lucid_trace_load_threads(trace, path, vcs, 1, err);
}

int lucid_trace_load_threads(lucid_trace *trace, const char *path, const lucid_vcs *vcs,
                             int threads, lucid_error *err)
{
    memset(trace, 0, sizeof *trace);
    return load_common(trace, lucid_csv_open(path, err), vcs, threads, err);
}

int lucid_trace_load_mem(lucid_trace *trace, const char *name, const char *data, size_t len,
                         const lucid_vcs *vcs, lucid_error *err)
{
    memset(trace, 0, sizeof *trace);
    return load_common(trace, lucid_csv_open_mem(name, data, len, err), vcs, 1, err);
}

void lucid_trace_free(lucid_trace *trace)
{
    free(trace->jobs);
    free(trace->by_id);
    lucid_strtab_free(trace->strings);
    memset(trace, 0, sizeof *trace);
}

/* ---------------- side files ---------------- */

int lucid_estimates_load(double **est, const lucid_trace *trace, const char *path,
                         lucid_error *err)
{
    *est = NULL;
    lucid_csv *csv = lucid_csv_open(path, err);
    if (!csv)
        return -1;
    int id_col = lucid_csv_col(csv, "job_id"), p_col = lucid_csv_col(csv, "priority");
    if (p_col < 0)
        p_col = lucid_csv_col(csv, "estimate");
    if (id_col < 0 || p_col < 0) {
        lucid_csv_close(csv);
        return lucid_error_at(err, path, 1, NULL, "header must name job_id and priority");
    }
    double *values = malloc((trace->njobs + 1) * sizeof *values);
    unsigned char *seen = calloc(trace->njobs + 1, 1);
    int got = -1;
    if (!values || !seen) {
        lucid_error_set(err, "%s: out of memory", path);
        goto done;
    }
    size_t next = 0; /* estimates usually list the jobs in id order: try the next id first */
    while ((got = lucid_csv_next(csv, err)) == 1) {
        int64_t id;
        double v;
        const char *const *row = lucid_csv_row(csv);
        const size_t *lens = lucid_csv_row_lens(csv);
        if (field_i64(csv, row, lens, id_col, &id, err) < 0 || field_f64(csv, row, lens, p_col, &v, err) < 0) {
            got = -1;
            break;
        }
        if (!(next < trace->njobs && trace->jobs[trace->by_id[next]].job_id == id))
            next = by_id_lower_bound(trace, id); /* the cursor resumes after it */
        if (next >= trace->njobs || trace->jobs[trace->by_id[next]].job_id != id)
            continue; /* estimates may cover more jobs than this trace */
        int64_t index = trace->by_id[next++];
        values[index] = v;
        seen[index] = 1;
    }
    if (got == 0)
        for (size_t i = 0; i < trace->njobs; i++)
            if (!seen[i]) {
                got = lucid_error_at(err, path, 0, NULL,
                                     "no estimate for job %lld (trace line %d)",
                                     (long long)trace->jobs[i].job_id, trace->jobs[i].line);
                break;
            }
done:
    lucid_csv_close(csv);
    free(seen);
    if (got < 0) {
        free(values);
        return -1;
    }
    *est = values;
    return 0;
}

static int read_key(lucid_trace *trace, const lucid_csv *csv, const int cols[4],
                    lucid_workload_key *key, lucid_error *err)
{
    int64_t v;
    key->model = lucid_strtab_intern(trace->strings, lucid_csv_field(csv, cols[0]));
    key->dataset = lucid_strtab_intern(trace->strings, lucid_csv_field(csv, cols[1]));
    if (key->model < 0 || key->dataset < 0)
        return lucid_error_set(err, "out of memory");
    if (lucid_csv_i64(csv, cols[2], &v, err) < 0)
        return -1;
    key->batchsize = (int32_t)v;
    if (lucid_csv_i64(csv, cols[3], &v, err) < 0)
        return -1;
    if (v != 0 && v != 1)
        return lucid_error_at(err, lucid_csv_name(csv), lucid_csv_line(csv),
                              lucid_csv_header(csv, cols[3]), "amp must be 0 or 1");
    key->amp = (int32_t)v;
    return 0;
}

static int same_key(const lucid_workload_key *a, const lucid_workload_key *b)
{
    return a->model == b->model && a->dataset == b->dataset && a->batchsize == b->batchsize &&
           a->amp == b->amp;
}

/* Look-up indexes of the sharing and pair tables.  Both answered by
 * scanning their rows; the pair table has ~1,400 rows on Venus and Lucid
 * asks it at every packing try (2 % of the Venus command's instructions),
 * the sharing table once per job at loading.  An index is the rows'
 * keys sorted with the row number last, so the lowest row of equal keys
 * comes first: the scan's first match, the same answer. */
struct lucid_key_slot {
    lucid_workload_key key;
    uint32_t row;
};
struct lucid_pair_slot {
    lucid_workload_key a, b;
    uint32_t row;
};

static int key_order(const lucid_workload_key *a, const lucid_workload_key *b)
{
    if (a->model != b->model)
        return a->model < b->model ? -1 : 1;
    if (a->dataset != b->dataset)
        return a->dataset < b->dataset ? -1 : 1;
    if (a->batchsize != b->batchsize)
        return a->batchsize < b->batchsize ? -1 : 1;
    if (a->amp != b->amp)
        return a->amp < b->amp ? -1 : 1;
    return 0;
}

static int by_key_slot(const void *x, const void *y)
{
    const struct lucid_key_slot *a = x, *b = y;
    int c = key_order(&a->key, &b->key);
    return c ? c : (a->row > b->row) - (a->row < b->row);
}

static int by_pair_slot(const void *x, const void *y)
{
    const struct lucid_pair_slot *a = x, *b = y;
    int c = key_order(&a->a, &b->a);
    if (!c)
        c = key_order(&a->b, &b->b);
    return c ? c : (a->row > b->row) - (a->row < b->row);
}

static int require_cols(const lucid_csv *csv, const char *path, const char *const *names, int *cols,
                        int n, lucid_error *err)
{
    for (int i = 0; i < n; i++) {
        cols[i] = lucid_csv_col(csv, names[i]);
        if (cols[i] < 0)
            return lucid_error_at(err, path, 1, names[i], "required column is missing");
    }
    return 0;
}

int lucid_sharing_load(lucid_sharing *sharing, lucid_trace *trace, const char *path,
                       lucid_error *err)
{
    memset(sharing, 0, sizeof *sharing);
    lucid_csv *csv = lucid_csv_open(path, err);
    if (!csv)
        return -1;
    static const char *const names[] = {"model", "dataset", "batchsize", "amp", "speed",
                                        "gpu_util", "gmem_util", "gmem", "label"};
    int cols[9];
    size_t cap = 0;
    int got = require_cols(csv, path, names, cols, 9, err);
    while (got == 0 && (got = lucid_csv_next(csv, err)) == 1) {
        got = -1;
        if (LUCID_GROW(sharing->rows, cap, sharing->count + 1) < 0) {
            lucid_error_set(err, "%s: out of memory", path);
            break;
        }
        lucid_sharing_row *row = &sharing->rows[sharing->count];
        int64_t label;
        if (read_key(trace, csv, cols, &row->key, err) < 0 ||
            lucid_csv_f64(csv, cols[4], &row->speed, err) < 0 ||
            lucid_csv_f64(csv, cols[5], &row->gpu_util, err) < 0 ||
            lucid_csv_f64(csv, cols[6], &row->gmem_util, err) < 0 ||
            lucid_csv_f64(csv, cols[7], &row->gmem, err) < 0 ||
            lucid_csv_i64(csv, cols[8], &label, err) < 0)
            break;
        if (label < 0 || label > 2) {
            lucid_error_at(err, path, lucid_csv_line(csv), "label", "sharing label must be 0, 1 or 2");
            break;
        }
        row->label = (int32_t)label;
        sharing->count++;
        got = 0;
    }
    lucid_csv_close(csv);
    if (got < 0) {
        lucid_sharing_free(sharing);
        return -1;
    }
    /* Out of memory for the index leaves it NULL: look-ups scan. */
    if (sharing->count > 0 && sharing->count <= UINT32_MAX &&
        (sharing->index = malloc(sharing->count * sizeof *sharing->index))) {
        for (size_t i = 0; i < sharing->count; i++)
            sharing->index[i] = (struct lucid_key_slot){sharing->rows[i].key, (uint32_t)i};
        qsort(sharing->index, sharing->count, sizeof *sharing->index, by_key_slot);
    }
    return 0;
}

void lucid_sharing_free(lucid_sharing *sharing)
{
    free(sharing->rows);
    free(sharing->index);
    memset(sharing, 0, sizeof *sharing);
}

int64_t lucid_sharing_find(const lucid_sharing *sharing, const lucid_workload_key *key)
{
    if (!sharing->index) {
        for (size_t i = 0; i < sharing->count; i++)
            if (same_key(&sharing->rows[i].key, key))
                return (int64_t)i;
        return -1;
    }
    size_t lo = 0, hi = sharing->count; /* the first slot whose key is >= key */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (key_order(&sharing->index[mid].key, key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < sharing->count && same_key(&sharing->index[lo].key, key)
               ? (int64_t)sharing->index[lo].row
               : -1;
}

int lucid_pairs_load(lucid_pairs *pairs, lucid_trace *trace, const char *path, lucid_error *err)
{
    memset(pairs, 0, sizeof *pairs);
    lucid_csv *csv = lucid_csv_open(path, err);
    if (!csv)
        return -1;
    static const char *const names[] = {"model1", "dataset1", "batchsize1", "amp1", "speed1",
                                        "model2", "dataset2", "batchsize2", "amp2", "speed2",
                                        "gpu_util", "gmem"};
    int cols[12];
    size_t cap = 0;
    int got = require_cols(csv, path, names, cols, 12, err);
    while (got == 0 && (got = lucid_csv_next(csv, err)) == 1) {
        got = -1;
        if (LUCID_GROW(pairs->rows, cap, pairs->count + 1) < 0) {
            lucid_error_set(err, "%s: out of memory", path);
            break;
        }
        lucid_pair_row *row = &pairs->rows[pairs->count];
        if (read_key(trace, csv, cols, &row->a, err) < 0 ||
            lucid_csv_f64(csv, cols[4], &row->speed_a, err) < 0 ||
            read_key(trace, csv, cols + 5, &row->b, err) < 0 ||
            lucid_csv_f64(csv, cols[9], &row->speed_b, err) < 0 ||
            lucid_csv_f64(csv, cols[10], &row->gpu_util, err) < 0 ||
            lucid_csv_f64(csv, cols[11], &row->gmem, err) < 0)
            break;
        if (row->speed_a <= 0 || row->speed_b <= 0) {
            lucid_error_at(err, path, lucid_csv_line(csv), "speed1", "speeds must be positive");
            break;
        }
        pairs->count++;
        got = 0;
    }
    lucid_csv_close(csv);
    if (got < 0) {
        lucid_pairs_free(pairs);
        return -1;
    }
    if (pairs->count > 0 && pairs->count <= UINT32_MAX &&
        (pairs->index = malloc(pairs->count * sizeof *pairs->index))) {
        for (size_t i = 0; i < pairs->count; i++)
            pairs->index[i] = (struct lucid_pair_slot){pairs->rows[i].a, pairs->rows[i].b, (uint32_t)i};
        qsort(pairs->index, pairs->count, sizeof *pairs->index, by_pair_slot);
    }
    return 0;
}

void lucid_pairs_free(lucid_pairs *pairs)
{
    free(pairs->rows);
    free(pairs->index);
    memset(pairs, 0, sizeof *pairs);
}

/* The first row (in file order) measured for a with b, or -1. */
static long pair_row(const lucid_pairs *pairs, const lucid_workload_key *a,
                     const lucid_workload_key *b)
{
    if (!pairs->index) {
        for (size_t i = 0; i < pairs->count; i++)
            if (same_key(&pairs->rows[i].a, a) && same_key(&pairs->rows[i].b, b))
                return (long)i;
        return -1;
    }
    size_t lo = 0, hi = pairs->count; /* the first slot whose (a, b) is >= (a, b) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = key_order(&pairs->index[mid].a, a);
        if (c < 0 || (c == 0 && key_order(&pairs->index[mid].b, b) < 0))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < pairs->count && same_key(&pairs->index[lo].a, a) && same_key(&pairs->index[lo].b, b)
               ? (long)pairs->index[lo].row
               : -1;
}

int lucid_pairs_speed(const lucid_pairs *pairs, const lucid_workload_key *a,
                      const lucid_workload_key *b, double *speed_a, double *speed_b)
{
    long i = pair_row(pairs, a, b);
    if (i >= 0) {
        *speed_a = pairs->rows[i].speed_a;
        *speed_b = pairs->rows[i].speed_b;
        return 1;
    }
    i = pair_row(pairs, b, a);
    if (i >= 0) {
        *speed_a = pairs->rows[i].speed_b;
        *speed_b = pairs->rows[i].speed_a;
        return 1;
    }
    return 0;
}

int lucid_forecast_load(lucid_forecast *fc, const char *path, lucid_error *err)
{
    memset(fc, 0, sizeof *fc);
    lucid_csv *csv = lucid_csv_open(path, err);
    if (!csv)
        return -1;
    static const char *const names[] = {"time", "pred_gpu_job", "pred_gpu_num"};
    int cols[3];
    size_t cap_offset = 0, cap_job = 0, cap_num = 0;
    int64_t first = 0, previous = 0;
    int got = require_cols(csv, path, names, cols, 3, err);
    while (got == 0 && (got = lucid_csv_next(csv, err)) == 1) {
        got = -1;
        if (LUCID_GROW(fc->offset, cap_offset, fc->count + 1) < 0 ||
            LUCID_GROW(fc->pred_gpu_job, cap_job, fc->count + 1) < 0 ||
            LUCID_GROW(fc->pred_gpu_num, cap_num, fc->count + 1) < 0) {
            lucid_error_set(err, "%s: out of memory", path);
            break;
        }
        int64_t t;
        const char *s = lucid_csv_field(csv, cols[0]);
        if (lucid_time_parse(s, &t) < 0 && lucid_parse_i64(s, &t) < 0) {
            lucid_error_at(err, path, lucid_csv_line(csv), "time",
                           "'%s' is neither YYYY-MM-DD HH:MM:SS nor integer seconds", s);
            break;
        }
        if (t < 0 || t > LUCID_TIME_MAX) { /* so that t - first cannot overflow */
            lucid_error_at(err, path, lucid_csv_line(csv), "time",
                           "%lld out of range 0..%lld (2^40 s)", (long long)t,
                           (long long)LUCID_TIME_MAX);
            break;
        }
        if (fc->count == 0)
            first = t;
        else if (t <= previous) {
            lucid_error_at(err, path, lucid_csv_line(csv), "time", "times must increase");
            break;
        }
        previous = t;
        size_t k = fc->count;
        fc->offset[k] = t - first;
        if (lucid_csv_f64(csv, cols[1], &fc->pred_gpu_job[k], err) < 0 ||
            lucid_csv_f64(csv, cols[2], &fc->pred_gpu_num[k], err) < 0)
            break;
        fc->count++;
        got = 0;
    }
    lucid_csv_close(csv);
    if (got < 0) {
        lucid_forecast_free(fc);
        return -1;
    }
    return 0;
}

int lucid_forecast_copy(lucid_forecast *dst, const lucid_forecast *src, lucid_error *err)
{
    memset(dst, 0, sizeof *dst);
    size_t n = src->count;
    if (n == 0)
        return 0;
    dst->offset = malloc((n + 1) * sizeof *dst->offset);
    dst->pred_gpu_job = malloc((n + 1) * sizeof *dst->pred_gpu_job);
    dst->pred_gpu_num = malloc((n + 1) * sizeof *dst->pred_gpu_num);
    if (!dst->offset || !dst->pred_gpu_job || !dst->pred_gpu_num) {
        lucid_forecast_free(dst);
        return lucid_error_set(err, "out of memory");
    }
    memcpy(dst->offset, src->offset, n * sizeof *dst->offset);
    memcpy(dst->pred_gpu_job, src->pred_gpu_job, n * sizeof *dst->pred_gpu_job);
    memcpy(dst->pred_gpu_num, src->pred_gpu_num, n * sizeof *dst->pred_gpu_num);
    dst->count = n;
    return 0;
}

void lucid_forecast_free(lucid_forecast *fc)
{
    free(fc->offset);
    free(fc->pred_gpu_job);
    free(fc->pred_gpu_num);
    memset(fc, 0, sizeof *fc);
}
