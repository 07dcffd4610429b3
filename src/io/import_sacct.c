/* import_sacct.c — a site's own Slurm history: the output of
 *
 *   TZ=UTC sacct --parsable2 --allocations --duplicates \
 *     -o JobID,User,Account,Partition,AllocTRES,ReqTRES,Submit,Start,End,Elapsed,State,NNodes
 *
 * (optionally with ,Timelimit), and optionally `scontrol show node -o` for
 * the VC sizes.  Columns are found by header name, so other field orders and
 * extra fields work.
 *
 * Rules (docs/traces.md): step rows (JOB.batch, JOB.0 ...) are skipped: the
 * allocation row carries the job; jobs that never started (PENDING, Start
 * None/Unknown) and CPU-only jobs are removed; still-running jobs are removed
 * unless --running, which ends them after their Elapsed (or at --now).  GPUs
 * are AllocTRES's gres/gpu, or the sum of its typed gres/gpu:TYPE entries when
 * the untyped total is absent, or gres/lucidshare for a job lucid packed
 * (docs/live.md); the types go to gpu_type.  Array task A_T gets
 * job id A * 1000000 + T (heterogeneous component A+C likewise).
 *
 * A requeued job has one record per run (`--duplicates` shows them all; at a
 * lucid site every profiled job has its profiling run and its main run):
 * the records of one job id are joined into one job after every source is
 * read (join_job): the first Submit, the first Start, the run time of every
 * record that ran, the last record's state and partition.  Records that
 * cannot be one job requeued (another user, other GPUs, overlapping runs)
 * are an error naming the later one. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lucid/csv.h"
#include "lucid/import.h"

#define SACCT_MAX_FIELDS 64

static const char *const sacct_states[] = {
    "BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED",    "NODE_FAIL", "OUT_OF_MEMORY",
    "PENDING",   "PREEMPTED", "RUNNING",   "REQUEUED", "RESIZING",  "REVOKED",   "SUSPENDED",
    "TIMEOUT"};

typedef struct sacct_cols {
    int id, user, account, partition, alloc, req, submit, start, end, elapsed, state, limit;
} sacct_cols;

static int col_of(char **names, int n, const char *want)
{
    for (int i = 0; i < n; i++)
        if (strcasecmp(names[i], want) == 0)
            return i;
    return -1;
}

/* Slurm durations: [D-]HH:MM:SS, MM:SS, or minutes; UNLIMITED etc. -> -1. */
static int parse_duration(const char *s, int64_t *out)
{
    int64_t d = 0, parts[3] = {0, 0, 0};
    int n = 0;
    const char *p = s;
    if (!*s || strcmp(s, "UNLIMITED") == 0 || strcmp(s, "Partition_Limit") == 0 ||
        strcmp(s, "INVALID") == 0) {
        *out = -1;
        return 0;
    }
    const char *dash = strchr(s, '-');
    if (dash) {
        char *end;
        d = strtoll(s, &end, 10);
        if (end != dash || d < 0)
            return -1;
        p = dash + 1;
    }
    while (*p) {
        char *end;
        if (*p < '0' || *p > '9' || n == 3)
            return -1;
        parts[n++] = strtoll(p, &end, 10);
        p = end;
        if (*p == ':')
            p++;
        else if (*p == '.') /* fractional seconds (Elapsed of some versions) */
            break;
        else if (*p)
            return -1;
    }
    int64_t secs;
    if (dash)
        secs = n == 3 ? parts[0] * 3600 + parts[1] * 60 + parts[2]
             : n == 2 ? parts[0] * 3600 + parts[1] * 60 : parts[0] * 3600;
    else
        secs = n == 3 ? parts[0] * 3600 + parts[1] * 60 + parts[2]
             : n == 2 ? parts[0] * 60 + parts[1] : parts[0] * 60;
    *out = d * 86400 + secs;
    return 0;
}

/* GPUs in a TRES string; types joined by '+' into `types` (may stay "").
 * A job lucid packed onto another's GPUs holds gres/lucidshare (lucidd's
 * share GRES, one unit per shared GPU) instead of gres/gpu: those are its
 * GPUs. */
static int parse_tres(const char *tres, int64_t *gpus, int64_t *cpus, char *types, size_t tsize)
{
    int64_t untyped = -1, typed = 0, shared = 0;
    *cpus = 0;
    types[0] = '\0';
    const char *p = tres;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[256];
        if (len >= sizeof item)
            return -1;
        memcpy(item, p, len);
        item[len] = '\0';
        char *eq = strchr(item, '=');
        if (!eq)
            return -1;
        *eq = '\0';
        const char *value = eq + 1;
        int64_t v = 0;
        int numeric = lucid_parse_i64(value, &v) == 0 && v >= 0;
        if (strcmp(item, "gres/gpu") == 0) {
            if (!numeric)
                return -1;
            untyped = v;
        } else if (strncmp(item, "gres/gpu:", 9) == 0) {
            if (!numeric)
                return -1;
            typed += v;
            size_t used = strlen(types);
            snprintf(types + used, tsize - used, "%s%s", used ? "+" : "", item + 9);
        } else if (strcmp(item, "gres/lucidshare") == 0) {
            if (!numeric)
                return -1;
            shared = v;
        } else if (strcmp(item, "cpu") == 0) {
            if (!numeric)
                return -1;
            *cpus = v;
        }
        p += len + (comma ? 1 : 0);
    }
    *gpus = untyped > 0 ? untyped : typed > 0 ? typed : shared > 0 ? shared : untyped >= 0 ? untyped : 0;
    return 0;
}

/* JOB, JOB_TASK, JOB+COMPONENT -> id; JOB.STEP -> 1 (a step); other -> -1. */
static int parse_job_id(const char *s, int64_t *id)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -1;
    long long base = strtoll(s, &end, 10);
    if (*end == '.')
        return 1;
    if (*end == '\0') {
        *id = base;
        return 0;
    }
    if ((*end == '_' || *end == '+') && end[1] == '[')
        return 2; /* a pending array record: never started */
    if (*end == '_' || *end == '+') {
        const char *t = end + 1;
        long long task = strtoll(t, &end, 10);
        if (end == t || task < 0 || task >= 1000000 || base > INT64_MAX / 1000000 - 1)
            return -1;
        if (*end == '.')
            return 1;
        if (*end)
            return -1;
        *id = base * 1000000 + task;
        return 0;
    }
    return -1;
}

static int known_state(char *state)
{
    char *space = strchr(state, ' '); /* "CANCELLED by 1234" */
    if (space)
        *space = '\0';
    for (size_t i = 0; i < sizeof sacct_states / sizeof sacct_states[0]; i++)
        if (strcmp(state, sacct_states[i]) == 0)
            return 1;
    return 0;
}

static int never(const char *t)
{
    return !*t || strcmp(t, "None") == 0 || strcmp(t, "Unknown") == 0;
}

typedef struct sacct_rules {
    int step, never_started, running, cpu_only, zero, requeue_record, waiting_again;
} sacct_rules;

#define SACCT_NONE LUCID_IMPORT_NO_TIME /* a Start or End sacct leaves None/Unknown */

/* One allocation row, parsed and checked; the rows of one job id (sacct
 * --duplicates: its profiling run, requeues, its last run) are joined into
 * one job once every source has been read (join_job). */
typedef struct sacct_record {
    int64_t id;
    int64_t submit, start, end; /* start SACCT_NONE: never ran; end SACCT_NONE: no End yet */
    int64_t elapsed;            /* seconds, -1 = not given (ends a running job, --running) */
    int64_t gpus, limit;
    int32_t cpus;
    int32_t text_id, user, account, state, types, vc_name; /* string ids, -1 = empty or no
                                                            * column */
    int pending;                /* State PENDING: waiting (again) to run */
    int file;                   /* index of the source: the sort's tie-break */
    long line;
    const char *path;
} sacct_record;

typedef struct sacct_records {
    sacct_record *rows;
    size_t n, cap;
} sacct_records;

static int32_t text_field(lucid_import *imp, char **f, int col)
{
    return col >= 0 ? lucid_import_string(imp, f[col]) : -1;
}

/* What a row that ran held: Start, End (SACCT_NONE while it runs, with its
 * Elapsed), GPUs, CPUs and GPU types. */
static int read_run(lucid_import *imp, sacct_record *rec, char **f, const sacct_cols *c,
                    lucid_error *err)
{
    const char *path = rec->path;
    if (lucid_import_time(f[c->start], &rec->start, path, rec->line, "Start", err) < 0)
        return -1;
    rec->end = SACCT_NONE;
    if (never(f[c->end])) {
        if (c->elapsed >= 0 && parse_duration(f[c->elapsed], &rec->elapsed) < 0)
            rec->elapsed = -1;
    } else if (lucid_import_time(f[c->end], &rec->end, path, rec->line, "End", err) < 0) {
        return -1;
    }
    char types[256];
    int64_t cpus;
    if (parse_tres(f[c->alloc], &rec->gpus, &cpus, types, sizeof types) < 0)
        return lucid_error_at(err, path, rec->line, "AllocTRES", "'%s' is not a TRES list",
                              f[c->alloc]);
    if (rec->gpus > (1 << 20))
        return lucid_error_at(err, path, rec->line, "AllocTRES", "%lld GPUs is implausible",
                              (long long)rec->gpus);
    rec->cpus = cpus > INT32_MAX ? INT32_MAX : (int32_t)cpus;
    rec->types = lucid_import_string(imp, types);
    return 0;
}

/* One row: a step is counted and dropped, a pending array record (it has no
 * task id) counted as never started; any other row is kept for the join. */
static int read_row(lucid_import *imp, sacct_records *recs, const char *path, int file,
                    long line, char **f, const sacct_cols *c, int vc_col, const sacct_rules *r,
                    lucid_error *err)
{
    int64_t id = 0;
    int kind = parse_job_id(f[c->id], &id);
    if (kind < 0)
        return lucid_error_at(err, path, line, "JobID", "'%s' is not a Slurm job id", f[c->id]);
    imp->records++; /* every row, steps too: records = written + removed */
    if (kind == 1) {
        lucid_import_count(imp, r->step);
        return 0;
    }
    static const char *const names[] = {"User", "Account", "Partition", "State"};
    const int cols[] = {c->user, c->account, c->partition, c->state};
    for (int k = 0; k < 4; k++)
        if (cols[k] >= 0 && lucid_import_check_text(f[cols[k]], path, line, names[k], err) < 0)
            return -1;
    char state[64];
    snprintf(state, sizeof state, "%s", f[c->state]);
    if (!known_state(state))
        return lucid_error_at(err, path, line, "State", "unknown state '%s'", f[c->state]);
    if (kind == 2) {
        lucid_import_count(imp, r->never_started);
        return 0;
    }
    if (LUCID_GROW(recs->rows, recs->cap, recs->n + 1) < 0)
        return lucid_error_set(err, "out of memory");
    sacct_record *rec = &recs->rows[recs->n];
    *rec = (sacct_record){.id = id, .start = SACCT_NONE, .end = SACCT_NONE, .elapsed = -1,
                          .limit = -1, .types = -1, .file = file, .line = line, .path = path};
    rec->pending = strcmp(state, "PENDING") == 0;
    if (lucid_import_time(f[c->submit], &rec->submit, path, line, "Submit", err) < 0)
        return -1;
    if (!rec->pending && !never(f[c->start]) && read_run(imp, rec, f, c, err) < 0)
        return -1;
    if (c->limit >= 0 && parse_duration(f[c->limit], &rec->limit) < 0)
        return lucid_error_at(err, path, line, "Timelimit", "'%s' is not a Slurm duration",
                              f[c->limit]);
    /* VCs keep the order of the rows that ran in them (the VC of a joined
     * job is its last record's, made at the join if it is new then). */
    if (rec->start != SACCT_NONE && *f[vc_col] && lucid_import_vc(imp, f[vc_col], -1) < 0)
        return lucid_error_set(err, "out of memory");
    rec->vc_name = text_field(imp, f, vc_col);
    rec->text_id = lucid_import_string(imp, f[c->id]);
    rec->user = text_field(imp, f, c->user);
    rec->account = text_field(imp, f, c->account);
    rec->state = lucid_import_string(imp, state);
    if ((*f[vc_col] && rec->vc_name < 0) || rec->text_id < 0 || rec->state < 0)
        return lucid_error_set(err, "out of memory");
    recs->n++;
    return 0;
}

/* ---- the join: one job per job id ---- */

static int compare_record(const void *a, const void *b)
{
    const sacct_record *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    if (x->submit != y->submit)
        return x->submit < y->submit ? -1 : 1;
    if (x->file != y->file)
        return x->file < y->file ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

static const char *text_of(const lucid_import *imp, int32_t id)
{
    return id >= 0 ? lucid_strtab_get(imp->strings, id) : "";
}

/* A later record of the same job must be the same job requeued: the same
 * JobID text (an array task and a plain job can share a number), user,
 * account and GPUs, and it cannot start before the previous run ended. */
static int check_requeue(const lucid_import *imp, const sacct_record *first,
                         const sacct_record *ran, const sacct_record *rec, lucid_error *err)
{
    static const char *const names[] = {"JobID", "User", "Account"};
    const int32_t mine[] = {rec->text_id, rec->user, rec->account};
    const int32_t theirs[] = {first->text_id, first->user, first->account};
    for (int k = 0; k < 3; k++)
        if (mine[k] >= 0 && theirs[k] >= 0 && mine[k] != theirs[k])
            return lucid_error_at(err, rec->path, rec->line, names[k],
                                  "'%s', but the record of job %lld at line %ld has '%s' (a "
                                  "requeued job keeps it)",
                                  text_of(imp, mine[k]), (long long)rec->id, first->line,
                                  text_of(imp, theirs[k]));
    if (!ran || rec->start == SACCT_NONE)
        return 0;
    if (rec->gpus != ran->gpus)
        return lucid_error_at(err, rec->path, rec->line, "AllocTRES",
                              "%lld GPUs, but job %lld ran with %lld at line %ld (a requeued "
                              "job keeps its GPUs)",
                              (long long)rec->gpus, (long long)rec->id, (long long)ran->gpus,
                              ran->line);
    if (ran->end == SACCT_NONE || rec->start < ran->end) {
        char when[32];
        lucid_time_format(rec->start, when, sizeof when);
        return lucid_error_at(err, rec->path, rec->line, "Start",
                              "%s, before job %lld's run at line %ld ended (one job cannot run "
                              "twice at once)",
                              when, (long long)rec->id, ran->line);
    }
    return 0;
}

/* The End of a run without one: --now, else Start + Elapsed (with
 * --running); SACCT_NONE when the job is left out as still running. */
static int end_of_running(const sacct_record *rec, const lucid_import_options *opt,
                          int64_t *end, lucid_error *err)
{
    *end = SACCT_NONE;
    if (!opt->include_running)
        return 0;
    if (opt->now > 0)
        *end = opt->now;
    else if (rec->elapsed >= 0)
        *end = rec->start + rec->elapsed;
    else
        return lucid_error_at(err, rec->path, rec->line, "Elapsed",
                              "a running job needs Elapsed or --now");
    return 0;
}

/* records[0..n) are one job id's records in submit order (one, unless
 * sacct --duplicates kept a requeued job's earlier runs).  The job: the
 * first record's Submit (the user's own), the first run's Start, the run
 * time of every record that ran, the last record's state, partition and
 * limit, and its runs' GPUs, CPUs and types. */
static int join_job(lucid_import *imp, const sacct_record *recs, size_t n, const sacct_rules *r,
                    const lucid_import_options *opt, lucid_error *err)
{
    const sacct_record *first = &recs[0], *last = &recs[n - 1], *ran = NULL;
    int64_t total = 0, last_run = 0;
    for (size_t i = 0; i < n; i++) {
        const sacct_record *rec = &recs[i];
        if (i > 0)
            lucid_import_count(imp, r->requeue_record);
        if (check_requeue(imp, first, ran, rec, err) < 0)
            return -1;
        if (rec->start == SACCT_NONE)
            continue;
        if (rec->end == SACCT_NONE && rec != last)
            return lucid_error_at(err, rec->path, rec->line, "End",
                                  "none, but job %lld has a later record at line %ld (a run "
                                  "that was requeued has ended)",
                                  (long long)rec->id, recs[i + 1].line);
        ran = rec;
        last_run = rec->end != SACCT_NONE ? rec->end - rec->start : 0;
        total += last_run;
    }
    int64_t end = 0;
    if (ran && ran->end == SACCT_NONE) {
        if (end_of_running(ran, opt, &end, err) < 0)
            return -1;
        last_run = end != SACCT_NONE ? end - ran->start : 0;
        total += last_run;
    }
    int rule = !ran                 ? r->never_started
               : end == SACCT_NONE  ? r->running
               : last->pending      ? r->waiting_again
               : ran->gpus == 0     ? r->cpu_only
               : total < 1          ? r->zero
                                    : -1;
    if (rule >= 0) {
        lucid_import_count(imp, rule);
        return 0;
    }
    if (last->vc_name < 0)
        return lucid_error_at(err, last->path, last->line, opt->vc_by ? opt->vc_by : "Partition",
                              "empty (a VC needs a name)");
    int32_t vc = lucid_import_vc(imp, text_of(imp, last->vc_name), -1);
    lucid_import_job *job = vc >= 0 ? lucid_import_push(imp) : NULL;
    if (!job)
        return lucid_error_set(err, "out of memory");
    job->job_id = first->id;
    job->submit = first->submit;
    for (size_t i = 0; i < n && job->first_start == LUCID_IMPORT_NO_TIME; i++)
        if (recs[i].start != SACCT_NONE)
            job->first_start = recs[i].start;
    job->duration = total;
    job->earlier_runs = ran == last ? total - last_run : total;
    job->gpu_num = (int32_t)ran->gpus;
    job->cpu_num = ran->cpus;
    job->vc = vc;
    job->record = first->line;
    job->time_limit = last->limit;
    job->user = last->user;
    job->state = last->state;
    job->gpu_type = ran->types;
    return 0;
}

/* Every job id's records joined (records sorted here). */
static int join_records(lucid_import *imp, sacct_records *recs, const sacct_rules *r,
                        const lucid_import_options *opt, lucid_error *err)
{
    if (recs->n)
        qsort(recs->rows, recs->n, sizeof *recs->rows, compare_record);
    for (size_t i = 0, j; i < recs->n; i = j) {
        for (j = i + 1; j < recs->n && recs->rows[j].id == recs->rows[i].id; j++)
            ;
        if (join_job(imp, &recs->rows[i], j - i, r, opt, err) < 0)
            return -1;
    }
    return 0;
}

/* `scontrol show node -o`: GPUs per partition (the VC sizes when VCs are
 * partitions) and per node. */
static int read_nodes(lucid_import *imp, const char *path, FILE *f, int by_partition,
                      lucid_error *err)
{
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    int32_t largest = 0, smallest = INT32_MAX, nodes = 0;
    int rc = 0;
    while (rc == 0 && getline(&line, &cap, f) >= 0) {
        lineno++;
        if (strncmp(line, "NodeName=", 9) != 0)
            continue;
        int32_t gpus = 0;
        char partitions[1024] = "";
        char *save = NULL;
        for (char *tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
            if (strncmp(tok, "Gres=", 5) == 0) {
                /* gpu:4, gpu:a100:4(S:0-1), several comma-separated */
                for (char *g = tok + 5; g && *g;) {
                    char *next = strchr(g, ',');
                    if (next)
                        *next++ = '\0';
                    if (strncmp(g, "gpu:", 4) == 0) {
                        char *paren = strchr(g, '(');
                        if (paren)
                            *paren = '\0';
                        char *last = strrchr(g, ':');
                        int64_t n;
                        if (lucid_parse_i64(last + 1, &n) < 0 || n < 0 || n > 1024) {
                            rc = lucid_error_at(err, path, lineno, "Gres", "'%s' has no GPU count",
                                                g);
                            break;
                        }
                        gpus += (int32_t)n;
                    }
                    g = next;
                }
            } else if (strncmp(tok, "Partitions=", 11) == 0) {
                snprintf(partitions, sizeof partitions, "%s", tok + 11);
            } else if (strncmp(tok, "CPUTot=", 7) == 0) {
                int64_t n;
                if (lucid_parse_i64(tok + 7, &n) < 0 || n < 0) {
                    rc = lucid_error_at(err, path, lineno, "CPUTot", "'%s' is not a CPU count",
                                        tok + 7);
                    break;
                }
                imp->cluster_cpus += n;
            }
        }
        if (rc)
            break;
        nodes++;
        imp->cluster_nodes++;
        largest = gpus > largest ? gpus : largest;
        smallest = gpus < smallest ? gpus : smallest;
        char *psave = NULL;
        for (char *p = strtok_r(partitions, ",", &psave); by_partition && p;
             p = strtok_r(NULL, ",", &psave)) {
            int32_t v = lucid_import_vc(imp, p, 0);
            if (v < 0) {
                rc = lucid_error_set(err, "out of memory");
                break;
            }
            if (imp->vc_gpus[v] < 0)
                imp->vc_gpus[v] = 0;
            imp->vc_gpus[v] += gpus;
        }
    }
    free(line);
    if (rc == 0 && nodes == 0)
        rc = lucid_error_at(err, path, 0, NULL, "no NodeName= lines (scontrol show node -o)");
    if (rc == 0 && largest > 0)
        imp->gpus_per_node = largest;
    if (rc == 0 && smallest != largest && largest > 0)
        rc = lucid_import_note(imp, "%s: nodes have %d to %d GPUs; the simulator's nodes have %d "
                                    "(--gpus-per-node)",
                               path, smallest, largest, largest);
    if (rc == 0)
        rc = lucid_import_note(imp, "%s: %d nodes; VC sizes %s", path, nodes,
                               by_partition ? "are the GPUs of each partition's nodes"
                                            : "derived from the jobs (VCs are accounts)");
    return rc;
}

static int sacct_rules_add(lucid_import *imp, sacct_rules *r)
{
    r->step = lucid_import_rule_add(imp, "step", "job step rows (JOB.batch, JOB.0 ...): the "
                                                 "allocation row carries the job (use --allocations)");
    r->requeue_record = lucid_import_rule_add(
        imp, "requeue_record", "a requeued job's further records (sacct --duplicates: its "
                               "profiling run under lucid, requeues): joined into one job");
    r->never_started = lucid_import_rule_add(imp, "never_started", "PENDING, or no Start: "
                                                                   "cancelled or still waiting, "
                                                                   "never held GPUs");
    r->running = lucid_import_rule_add(imp, "still_running", "no End yet (keep them with --running)");
    r->waiting_again = lucid_import_rule_add(imp, "waiting_again",
                                             "ran, was requeued and waits to run again: not over");
    r->cpu_only = lucid_import_rule_add(imp, "cpu_only", "no gres/gpu in AllocTRES");
    r->zero = lucid_import_rule_add(imp, "zero_duration", "End - Start < 1 s");
    return r->zero < 0 ? -1 : 0;
}

/* One sacct file: the header names the columns, then one row per line. */
static int read_sacct(lucid_import *imp, sacct_records *recs, FILE *f, const char *path, int file,
                      char *first, ssize_t got, const sacct_rules *r,
                      const lucid_import_options *opt, lucid_error *err)
{
    int by_partition = !opt->vc_by || strcmp(opt->vc_by, "partition") == 0;
    char *header[SACCT_MAX_FIELDS + 1], *fields[SACCT_MAX_FIELDS + 1];
    char *head = got > 0 ? lucid_strdup(first) : NULL;
    char *line = NULL;
    size_t cap = 0;
    int nhead = 0, rc = 0;
    if (!head)
        rc = lucid_error_at(err, path, 1, NULL, "empty file (expected sacct's header)");
    else {
        head[strcspn(head, "\r\n")] = '\0';
        if ((nhead = lucid_import_split(head, '|', header, SACCT_MAX_FIELDS)) < 0)
            rc = lucid_error_at(err, path, 1, NULL, "more than %d columns", SACCT_MAX_FIELDS);
    }
    sacct_cols c = {0};
    static const char *const need[] = {"JobID", "Submit", "Start", "End", "State", "AllocTRES"};
    int *slots[] = {&c.id, &c.submit, &c.start, &c.end, &c.state, &c.alloc};
    for (int k = 0; k < 6 && rc == 0; k++)
        if ((*slots[k] = col_of(header, nhead, need[k])) < 0)
            rc = lucid_error_at(err, path, 1, need[k],
                                "required column is missing (see docs/traces.md for the "
                                "sacct command)");
    if (rc == 0) {
        c.user = col_of(header, nhead, "User");
        c.account = col_of(header, nhead, "Account");
        c.partition = col_of(header, nhead, "Partition");
        c.req = col_of(header, nhead, "ReqTRES");
        c.elapsed = col_of(header, nhead, "Elapsed");
        c.limit = col_of(header, nhead, "Timelimit");
    }
    int vc_col = by_partition ? c.partition : c.account;
    if (rc == 0 && vc_col < 0)
        rc = lucid_error_at(err, path, 1, by_partition ? "Partition" : "Account",
                            "required column is missing (it names the VCs)");
    long lineno = 1;
    int more;
    while (rc == 0 && (more = lucid_import_line(f, &line, &cap, path, &lineno, err)) != 0) {
        if (more < 0) {
            rc = -1;
            break;
        }
        if (!*line)
            continue;
        int n = lucid_import_split(line, '|', fields, SACCT_MAX_FIELDS);
        if (n < 0) {
            rc = lucid_error_at(err, path, lineno, NULL, "more than %d fields", SACCT_MAX_FIELDS);
            break;
        }
        if (n != nhead) {
            rc = lucid_error_at(err, path, lineno, NULL,
                                "expected %d fields as in the header, found %d", nhead, n);
            break;
        }
        rc = read_row(imp, recs, path, file, lineno, fields, &c, vc_col, r, err);
    }
    free(head);
    free(line);
    return rc;
}

int lucid_import_sacct_stream(lucid_import *imp, FILE *f, const char *name,
                              const lucid_import_options *opt, lucid_error *err)
{
    sacct_rules r;
    if (sacct_rules_add(imp, &r) < 0)
        return lucid_error_set(err, "import: too many rules");
    sacct_records recs = {0};
    char *line = NULL;
    size_t cap = 0;
    ssize_t got = getline(&line, &cap, f);
    int rc = read_sacct(imp, &recs, f, name, 0, line, got, &r, opt, err);
    if (rc == 0)
        rc = join_records(imp, &recs, &r, opt, err);
    free(line);
    free(recs.rows);
    return rc;
}

/* One source: a node list or an sacct file, told apart by the first line. */
static int read_source(lucid_import *imp, sacct_records *recs, const char *path, int file,
                       const sacct_rules *r, const lucid_import_options *opt, int *have_nodes,
                       lucid_error *err)
{
    int by_partition = !opt->vc_by || strcmp(opt->vc_by, "partition") == 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return lucid_error_set(err, "%s: cannot open", path);
    char *line = NULL;
    size_t cap = 0;
    ssize_t got = getline(&line, &cap, f);
    int rc;
    if (got > 0 && strncmp(line, "NodeName=", 9) == 0) {
        if (fseek(f, 0, SEEK_SET) != 0)
            rc = lucid_error_set(err, "%s: a node list cannot be read from a pipe: give the "
                                      "file itself",
                                 path);
        else
            rc = read_nodes(imp, path, f, by_partition, err);
        *have_nodes = 1;
    } else {
        rc = read_sacct(imp, recs, f, path, file, line, got, r, opt, err);
    }
    free(line);
    fclose(f);
    return rc;
}

/* The associations the records ran under, for the slurm policy's Fair
 * Tree: "ACCOUNT:USER,USER ..." in order of first appearance, each user in
 * the account of its first record (the simulator has one ledger per user). */
static int associations(lucid_import *imp, const sacct_records *recs, lucid_error *err)
{
    int32_t nstrings = lucid_strtab_count(imp->strings);
    int32_t *account_of = malloc(((size_t)nstrings + 1) * sizeof *account_of);
    int32_t *order = malloc(((size_t)nstrings + 1) * sizeof *order);
    if (!account_of || !order) {
        free(account_of);
        free(order);
        return lucid_error_set(err, "out of memory");
    }
    for (int32_t k = 0; k < nstrings; k++)
        account_of[k] = -1;
    int32_t naccounts = 0;
    for (size_t i = 0; i < recs->n; i++) {
        const sacct_record *r = &recs->rows[i];
        if (r->user < 0 || r->account < 0 || r->user >= nstrings || account_of[r->user] >= 0)
            continue;
        account_of[r->user] = r->account;
        int known = 0;
        for (int32_t a = 0; a < naccounts && !known; a++)
            known = order[a] == r->account;
        if (!known)
            order[naccounts++] = r->account;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *out = naccounts ? open_memstream(&text, &len) : NULL;
    for (int32_t a = 0; out && a < naccounts; a++) {
        fprintf(out, "%s%s:", a ? " " : "", lucid_strtab_get(imp->strings, order[a]));
        int first = 1;
        for (int32_t u = 0; u < nstrings; u++)
            if (account_of[u] == order[a]) {
                fprintf(out, "%s%s", first ? "" : ",", lucid_strtab_get(imp->strings, u));
                first = 0;
            }
    }
    int rc = 0;
    if (naccounts && (!out || fclose(out) != 0)) {
        free(text);
        rc = lucid_error_set(err, "out of memory");
    } else {
        free(imp->slurm_accounts);
        imp->slurm_accounts = text;
    }
    free(account_of);
    free(order);
    return rc;
}

int lucid_import_sacct(lucid_import *imp, const char *const *paths, int npaths,
                       const lucid_import_options *opt, lucid_error *err)
{
    int by_partition = !opt->vc_by || strcmp(opt->vc_by, "partition") == 0;
    sacct_rules r;
    if (sacct_rules_add(imp, &r) < 0)
        return lucid_error_set(err, "import: too many rules");
    sacct_records recs = {0};
    int have_nodes = 0, rc = 0;
    for (int i = 0; i < npaths && rc == 0; i++)
        rc = read_source(imp, &recs, paths[i], i, &r, opt, &have_nodes, err);
    /* After every source: one job's records may come from several files. */
    if (rc == 0)
        rc = join_records(imp, &recs, &r, opt, err);
    if (rc == 0)
        rc = associations(imp, &recs, err);
    free(recs.rows);
    if (rc < 0)
        return -1;
    if (!have_nodes && by_partition)
        return lucid_import_note(imp, "no `scontrol show node -o` file: VC sizes derived from the "
                                      "jobs") < 0
                   ? lucid_error_set(err, "out of memory")
                   : 0;
    return 0;
}
