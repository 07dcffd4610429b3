/* import_sacct.c — a site's own Slurm history: the output of
 *
 *   TZ=UTC sacct --parsable2 --allocations \
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
 * the untyped total is absent; the types go to gpu_type.  Array task A_T gets
 * job id A * 1000000 + T (heterogeneous component A+C likewise). */
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

/* GPUs in a TRES string; types joined by '+' into `types` (may stay ""). */
static int parse_tres(const char *tres, int64_t *gpus, int64_t *cpus, char *types, size_t tsize)
{
    int64_t untyped = -1, typed = 0;
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
        } else if (strcmp(item, "cpu") == 0) {
            if (!numeric)
                return -1;
            *cpus = v;
        }
        p += len + (comma ? 1 : 0);
    }
    *gpus = untyped >= 0 ? untyped : typed;
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
    int step, never_started, running, cpu_only, zero;
} sacct_rules;

static int read_row(lucid_import *imp, const char *path, long line, char **f, const sacct_cols *c,
                    int vc_col, const sacct_rules *r, const lucid_import_options *opt,
                    lucid_error *err)
{
    int64_t id = 0, submit, start, end, gpus, cpus, limit = -1;
    int kind = parse_job_id(f[c->id], &id);
    if (kind < 0)
        return lucid_error_at(err, path, line, "JobID", "'%s' is not a Slurm job id", f[c->id]);
    imp->records++; /* every row, steps too: records = written + removed */
    if (kind == 1) {
        lucid_import_count(imp, r->step);
        return 0;
    }
    for (int k = 0; k < 3; k++) {
        int col = k == 0 ? c->user : k == 1 ? c->account : c->partition;
        if (col >= 0 && lucid_import_check_text(f[col], path, line, k == 0   ? "User"
                                                                    : k == 1 ? "Account"
                                                                             : "Partition",
                                                err) < 0)
            return -1;
    }
    char state[64];
    snprintf(state, sizeof state, "%s", f[c->state]);
    if (lucid_import_check_text(f[c->state], path, line, "State", err) < 0)
        return -1;
    if (!known_state(state))
        return lucid_error_at(err, path, line, "State", "unknown state '%s'", f[c->state]);
    if (kind == 2 || strcmp(state, "PENDING") == 0 || never(f[c->start])) {
        lucid_import_count(imp, r->never_started);
        return 0;
    }
    if (lucid_import_time(f[c->submit], &submit, path, line, "Submit", err) < 0 ||
        lucid_import_time(f[c->start], &start, path, line, "Start", err) < 0)
        return -1;
    if (never(f[c->end])) {
        if (!opt->include_running) {
            lucid_import_count(imp, r->running);
            return 0;
        }
        int64_t elapsed = -1;
        if (opt->now > 0)
            end = opt->now;
        else if (c->elapsed >= 0 && parse_duration(f[c->elapsed], &elapsed) == 0 && elapsed >= 0)
            end = start + elapsed;
        else
            return lucid_error_at(err, path, line, "Elapsed",
                                  "a running job needs Elapsed or --now");
    } else if (lucid_import_time(f[c->end], &end, path, line, "End", err) < 0) {
        return -1;
    }
    char types[256];
    const char *tres = *f[c->alloc] ? f[c->alloc] : "";
    if (parse_tres(tres, &gpus, &cpus, types, sizeof types) < 0)
        return lucid_error_at(err, path, line, "AllocTRES", "'%s' is not a TRES list", tres);
    if (gpus > (1 << 20))
        return lucid_error_at(err, path, line, "AllocTRES", "%lld GPUs is implausible",
                              (long long)gpus);
    if (gpus == 0) {
        lucid_import_count(imp, r->cpu_only);
        return 0;
    }
    if (end - start < 1) {
        lucid_import_count(imp, r->zero);
        return 0;
    }
    if (c->limit >= 0 && parse_duration(f[c->limit], &limit) < 0)
        return lucid_error_at(err, path, line, "Timelimit", "'%s' is not a Slurm duration",
                              f[c->limit]);
    const char *vc = f[vc_col];
    if (!*vc)
        return lucid_error_at(err, path, line, opt->vc_by ? opt->vc_by : "Partition",
                              "empty (a VC needs a name)");
    lucid_import_job *job = lucid_import_push(imp);
    int32_t v = job ? lucid_import_vc(imp, vc, -1) : -1;
    if (!job || v < 0)
        return lucid_error_set(err, "out of memory");
    job->job_id = id;
    job->submit = submit;
    job->duration = end - start;
    job->gpu_num = (int32_t)gpus;
    job->cpu_num = cpus > INT32_MAX ? INT32_MAX : (int32_t)cpus;
    job->vc = v;
    job->record = line;
    job->time_limit = limit;
    job->user = c->user >= 0 ? lucid_import_string(imp, f[c->user]) : -1;
    job->state = lucid_import_string(imp, state);
    job->gpu_type = lucid_import_string(imp, types);
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
            }
        }
        if (rc)
            break;
        nodes++;
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
    r->never_started = lucid_import_rule_add(imp, "never_started", "PENDING, or no Start: "
                                                                   "cancelled or still waiting, "
                                                                   "never held GPUs");
    r->running = lucid_import_rule_add(imp, "still_running", "no End yet (keep them with --running)");
    r->cpu_only = lucid_import_rule_add(imp, "cpu_only", "no gres/gpu in AllocTRES");
    r->zero = lucid_import_rule_add(imp, "zero_duration", "End - Start < 1 s");
    return r->zero < 0 ? -1 : 0;
}

/* One sacct file: the header names the columns, then one row per line. */
static int read_sacct(lucid_import *imp, FILE *f, const char *path, char *first, ssize_t got,
                      const sacct_rules *r, const lucid_import_options *opt, lucid_error *err)
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
        rc = read_row(imp, path, lineno, fields, &c, vc_col, r, opt, err);
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
    char *line = NULL;
    size_t cap = 0;
    ssize_t got = getline(&line, &cap, f);
    int rc = read_sacct(imp, f, name, line, got, &r, opt, err);
    free(line);
    return rc;
}

int lucid_import_sacct(lucid_import *imp, const char *const *paths, int npaths,
                       const lucid_import_options *opt, lucid_error *err)
{
    int by_partition = !opt->vc_by || strcmp(opt->vc_by, "partition") == 0;
    sacct_rules r;
    if (sacct_rules_add(imp, &r) < 0)
        return lucid_error_set(err, "import: too many rules");
    int have_nodes = 0;
    for (int i = 0; i < npaths; i++) {
        FILE *f = fopen(paths[i], "r");
        if (!f)
            return lucid_error_set(err, "%s: cannot open", paths[i]);
        char *line = NULL;
        size_t cap = 0;
        ssize_t got = getline(&line, &cap, f);
        int rc;
        if (got > 0 && strncmp(line, "NodeName=", 9) == 0) {
            if (fseek(f, 0, SEEK_SET) != 0)
                rc = lucid_error_set(err, "%s: a node list cannot be read from a pipe: give the "
                                          "file itself",
                                     paths[i]);
            else
                rc = read_nodes(imp, paths[i], f, by_partition, err);
            have_nodes = 1;
        } else {
            rc = read_sacct(imp, f, paths[i], line, got, &r, opt, err);
        }
        free(line);
        fclose(f);
        if (rc < 0)
            return -1;
    }
    if (!have_nodes && by_partition)
        return lucid_import_note(imp, "no `scontrol show node -o` file: VC sizes derived from the "
                                      "jobs") < 0
                   ? lucid_error_set(err, "out of memory")
                   : 0;
    return 0;
}
