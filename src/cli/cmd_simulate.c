/* cmd_simulate.c — `lucid simulate [EXPERIMENT.ini] [options]`: load a trace
 * and its side files, run the policies, write summary.csv, jobs-<policy>.csv
 * (and series-<policy>.csv), and print the paper's Tables 4 and 5. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "lucid/atomic.h"
#include "lucid/bounds.h"
#include "lucid/csv.h"
#include "lucid/experiment.h"
#include "lucid/manifest.h"
#include "lucid/sim.h"

static const char usage_text[] =
    "usage: lucid simulate [EXPERIMENT.ini] [options]\n"
    "\n"
    "Runs scheduling policies over a trace, event-driven, and writes results.\n"
    "\n"
    "options (each overrides the experiment file):\n"
    "  --jobs FILE          trace CSV                       [trace] jobs\n"
    "  --vcs FILE           VC configuration CSV            [trace] vcs\n"
    "  --policies LIST      e.g. fifo,sjf,srtf,qssf,tiresias,lucid or all\n"
    "  --placer NAME        consolidate | consolidate-first | random\n"
    "  --compat MODE        reference (bit-for-bit with the reference simulator) | fixed\n"
    "  --fix LIST           fix single reference defects: end_lag, partner_lookup,\n"
    "                       profiled_rejoin, queue_double_count, borrow_lost,\n"
    "                       queue_waits_only\n"
    "  --out DIR            output directory\n"
    "  --threads N          worker threads\n"
    "  --series             also write 60-second time series\n"
    "  --seed N             seed for the random placer\n"
    "  --skip-oversized     leave out jobs larger than their VC instead of refusing\n"
    "  --set SECTION.KEY=VALUE   any experiment key\n"
    "  --quiet              no progress or tables\n";

static int make_dir(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0777) < 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(buf, 0777) < 0 && errno != EEXIST ? -1 : 0;
}

/* What a run writes into OUTDIR besides MANIFEST: summary.csv,
 * jobs-<policy>.csv, series-<policy>.csv (--series) and experiment.ini. */
enum { MAX_OUTPUTS = 4 + 3 * LUCID_EXP_MAX_POLICIES };

/* Start-time estimates go to files of their own (eta-<policy>.csv,
 * eta-summary.csv), so that summary.csv and jobs-<policy>.csv keep their
 * bytes.  `[simulate] eta` unset means on up to ETA_AUTO_MAX_JOBS jobs:
 * a prediction costs a replay of the running jobs' ends, which on traces of
 * hundreds of thousands of jobs on thousands of nodes multiplies the run's
 * time (docs/backfill.md). */
#define ETA_AUTO_MAX_JOBS 50000

static int eta_wanted(const lucid_experiment *exp, size_t njobs)
{
    int on;
    if (cli_run_eta(exp, &on) != 0)
        return 0;
    return exp->eta ? on : njobs <= ETA_AUTO_MAX_JOBS;
}

static int output_names(const lucid_experiment *exp, const lucid_policy_ops *const *policies,
                        int n, int eta, char names[][96])
{
    int k = 0;
    snprintf(names[k++], 96, "summary.csv");
    for (int i = 0; i < n; i++) {
        snprintf(names[k++], 96, "jobs-%s.csv", policies[i]->name);
        if (exp->series)
            snprintf(names[k++], 96, "series-%s.csv", policies[i]->name);
        if (eta)
            snprintf(names[k++], 96, "eta-%s.csv", policies[i]->name);
    }
    if (eta)
        snprintf(names[k++], 96, "eta-summary.csv");
    snprintf(names[k++], 96, "experiment.ini");
    return k;
}

static const char experiment_header[] =
    "# The experiment this output directory was produced with (lucid simulate).\n";

/* A per-policy file of another run (jobs-*.csv, series-*.csv not in names). */
/* The policy a per-policy file belongs to ("jobs-sjf.csv" -> "sjf"; ""
 * for eta-summary.csv, the run's own), into buf. */
static void file_policy(const char *file, char *buf, size_t size)
{
    const char *dash = strchr(file, '-');
    size_t len = dash ? strlen(dash + 1) : 0;
    buf[0] = '\0';
    if (dash && len > 4 && strcmp(file, "eta-summary.csv") != 0)
        snprintf(buf, size, "%.*s", (int)(len - 4), dash + 1);
}

/* Whether this run simulates the policy of a stale per-policy file: its
 * earlier results are this run's to replace; another policy's are not
 * (a rerun never deletes results it did not produce). */
static int file_of_this_run(const char *file, const lucid_policy_ops *const *policies, int n)
{
    char policy[96];
    file_policy(file, policy, sizeof policy);
    if (!policy[0])
        return 1;
    for (int i = 0; i < n; i++)
        if (strcmp(policies[i]->name, policy) == 0)
            return 1;
    return 0;
}

static int is_stale(const char *file, char names[][96], int n)
{
    size_t len = strlen(file);
    if (!(strncmp(file, "jobs-", 5) == 0 || strncmp(file, "series-", 7) == 0 ||
          strncmp(file, "eta-", 4) == 0) ||
        len < 5 ||
        strcmp(file + len - 4, ".csv") != 0)
        return 0;
    for (int i = 0; i < n; i++)
        if (strcmp(file, names[i]) == 0)
            return 0;
    return 1;
}

/* Whether OUTDIR holds a page `lucid report` wrote (of an earlier run). */
static int has_report(const char *out)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/report.html", out);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char head[512];
    size_t n = fread(head, 1, sizeof head - 1, f);
    head[n] = '\0';
    fclose(f);
    return strstr(head, "<title>Lucid report</title>") != NULL;
}

/* Before simulating: no output may be one of the inputs, an existing
 * experiment.ini must be one simulate wrote (not the user's own), and the
 * stale files of another run that will be removed must not be inputs. */
static int check_outputs(const lucid_experiment *exp, const lucid_policy_ops *const *policies,
                         int n)
{
    struct stat st;
    if (stat(exp->out, &st) == 0 && !S_ISDIR(st.st_mode))
        return cli_fail("%s: not a directory (--out names the output folder)", exp->out);
    const char *inputs[64], *what[64];
    int ninputs = lucid_experiment_inputs(exp, inputs, what, 64);
    char names[MAX_OUTPUTS + 1][96], path[8192];
    /* Before the trace is read: the eta files count when they may be written. */
    int k = output_names(exp, policies, n, eta_wanted(exp, 0), names);
    snprintf(names[k++], 96, "%s", LUCID_MANIFEST_NAME);
    lucid_error err = {{0}};
    for (int i = 0; i < k; i++) {
        snprintf(path, sizeof path, "%s/%s", exp->out, names[i]);
        if (lucid_check_not_input(path, inputs, ninputs, what, &err) < 0)
            return cli_fail("%s", err.msg);
    }
    snprintf(path, sizeof path, "%s/experiment.ini", exp->out);
    FILE *old = fopen(path, "r");
    if (old) {
        char first[256] = "";
        int ours = fgets(first, sizeof first, old) && strcmp(first, experiment_header) == 0;
        fclose(old);
        if (!ours)
            return cli_fail("%s: exists and was not written by lucid simulate; choose another "
                            "--out (an output folder holds one run)",
                            path);
    }
    DIR *dir = opendir(exp->out);
    for (struct dirent *e; dir && (e = readdir(dir));) {
        if (!is_stale(e->d_name, names, k))
            continue;
        snprintf(path, sizeof path, "%s/%s", exp->out, e->d_name);
        if (!file_of_this_run(e->d_name, policies, n)) {
            char policy[96];
            file_policy(e->d_name, policy, sizeof policy);
            closedir(dir);
            return cli_fail("%s: results of policy %s from an earlier run, which this run does "
                            "not simulate: add %s to --policies, choose another --out, or "
                            "remove the file",
                            path, policy, policy);
        }
        if (lucid_check_not_input(path, inputs, ninputs, what, &err) < 0) {
            closedir(dir);
            return cli_fail("%s (it would be removed as a file of another run)", err.msg);
        }
    }
    if (dir)
        closedir(dir);
    return 0;
}

/* The earlier results of this run's own policies that this run does not
 * write again (series, eta files) go, so that OUTDIR holds one run (other
 * policies' results were refused by check_outputs); each removal is said
 * on stderr even with --quiet (files disappear). */
static int remove_stale(const char *out, char names[][96], int n)
{
    DIR *dir = opendir(out);
    if (!dir)
        return cli_fail("%s: cannot read: %s", out, strerror(errno));
    char path[8192];
    int rc = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        if (!is_stale(e->d_name, names, n))
            continue;
        snprintf(path, sizeof path, "%s/%s", out, e->d_name);
        if (unlink(path) != 0)
            rc = cli_fail("%s: cannot remove a file of another run: %s", path, strerror(errno));
        else
            fprintf(stderr, "lucid: removed %s (a file of another run)\n", path);
    }
    closedir(dir);
    /* The report of the earlier run is the user's: kept, said to be stale
     * (lucid report refuses to mix it with this run's files anyway). */
    if (has_report(out))
        fprintf(stderr, "lucid: %s/report.html shows the earlier run; run `lucid report %s` "
                        "again\n",
                out, out);
    return rc;
}

/* hash[i]: file i's XXH64 when hashed[i] (worked out as it was written),
 * else it is read back here; input_hash: the inputs' hashes made while
 * they were loaded (cli_run_load), NULL: made here. */
static int write_manifest(const lucid_experiment *exp, const lucid_policy_ops *const *policies,
                          int n, char names[][96], int k, const uint64_t *hash,
                          const unsigned char *hashed, const uint64_t *input_hash,
                          const char *const *inputs)
{
    lucid_manifest m = {0};
    lucid_error err = {{0}};
    char real[PATH_MAX], list[1024] = "", path[8192];
    size_t used = 0;
    for (int i = 0; i < n && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? "," : "",
                                 policies[i]->name);
    int rc = lucid_manifest_add(&m, &err, "lucid_version", "%s", LUCID_VERSION);
    rc = rc ? rc : lucid_manifest_add(&m, &err, "verb", "simulate");
    rc = rc ? rc : lucid_manifest_add(&m, &err, "out", "%s",
                                      realpath(exp->out, real) ? real : exp->out);
    rc = rc ? rc : lucid_manifest_add(&m, &err, "policies", "%s", list);
    rc = rc ? rc : lucid_experiment_manifest_hashed(exp, &m, input_hash, &err);
    /* Which definition the queue columns follow (docs/semantics.md). */
    lucid_semantics sem = exp->reference ? lucid_semantics_reference() : lucid_semantics_fixed();
    lucid_error ignored = {{0}};
    if (exp->fix)
        (void)lucid_semantics_fix(&sem, exp->fix, &ignored); /* checked when the run began */
    rc = rc ? rc : lucid_manifest_add(&m, &err, "queue_definition", "%s",
                                      sem.queue_waits_only ? CLI_QUEUE_WAITS_ONLY : CLI_QUEUE_COMPARABLE);
    /* Model inputs that are not the trace's own (summary.csv's inputs). */
    for (int i = 0; i < n && rc == 0 && inputs; i++)
        if (inputs[i] && inputs[i][0])
            rc = lucid_manifest_add(&m, &err, "model_inputs", "%s %s", policies[i]->name,
                                    inputs[i]);
    for (int i = 0; i < k && rc == 0; i++) {
        snprintf(path, sizeof path, "%s/%s", exp->out, names[i]);
        rc = hashed[i] ? lucid_manifest_add(&m, &err, "file", "%s xxh64:%016" PRIx64, names[i],
                                            hash[i])
                       : lucid_manifest_add_hash(&m, "file", path, names[i], &err);
    }
    rc = rc ? rc : lucid_manifest_save(&m, exp->out, &err);
    lucid_manifest_free(&m);
    return rc < 0 ? cli_fail("%s", err.msg) : 0;
}

/* eta-summary.csv's rows of one policy: per VC (and all), the calibration
 * of the start times predicted at submission (lucid_eta_calibration). */
static int write_eta_summary_rows(FILE *out, const cli_run *d, const lucid_sim_result *result,
                                  const lucid_policy_summary *ps)
{
    size_t nv = (size_t)d->vcs.count;
    for (int32_t v = -1; v < d->vcs.count; v++) {
        size_t at = v >= 0 ? (size_t)v : nv;
        double coverage = ps->eta_cov[at], error = ps->eta_err[at];
        int64_t jobs = ps->eta_waited[at];
        if (v >= 0 && jobs == 0)
            continue;
        fprintf(out, "%s,%s,%lld,", result->policy->name,
                v >= 0 ? lucid_vcs_name(&d->vcs, v) : "all", (long long)jobs);
        if (jobs > 0)
            fprintf(out, "%.4f,%.4f", coverage, error);
        else
            fputc(',', out);
        fputc('\n', out);
    }
    return ferror(out) ? -1 : 0;
}

/* One policy's rows of the files all policies share (summary.csv,
 * eta-summary.csv) and of the terminal's tables, made as soon as its
 * result is complete (on the simulator's worker thread, while other
 * policies still run) and appended in policy order afterwards. */
enum { PART_SUMMARY, PART_ETA_SUMMARY, PART_TABLE = 2, NPARTS = PART_TABLE + 4 };
typedef struct policy_part {
    char *text[NPARTS];
    size_t size[NPARTS];
    double floor;
    int rc;
} policy_part;

/* A run's outputs while it is being written: every file goes to a
 * temporary name first and all are renamed together once all are written
 * (a failure leaves the previous run's files).  Policies are added one at a
 * time, so that a run may free each policy's results once they are out.
 * The terminal's tables are kept as text meanwhile. */
typedef struct run_outputs {
    char names[MAX_OUTPUTS][96];
    lucid_outfile files[MAX_OUTPUTS];
    int k, rc, eta, series, tables;
    int queue_waits_only; /* the queue columns' definition (lucid_semantics) */
    double *offered_load;  /* per VC and all (lucid_offered_load), NULL: not known */
    const char *inputs[LUCID_EXP_MAX_POLICIES]; /* summary.csv's inputs per policy */
    lucid_error err;
    char *text[4];   /* Table 4 rows, Table 5 rows, backfill notes, Lucid notes */
    size_t size[4];
    FILE *tab[4];
    double floor;
    /* While a group of policies is simulated: its first policy's index
     * and the inputs, for outputs_policy. */
    int first;
    const cli_run *d;
    policy_part part[LUCID_EXP_MAX_POLICIES];
    /* The MANIFEST's hashes of the per-policy files, worked out on the
     * worker that wrote each (reading 18 MB back was serial at the end),
     * as they are written where the writer can (outputs_policy). */
    uint64_t hash[MAX_OUTPUTS];
    unsigned char hashed[MAX_OUTPUTS];
    /* The jobs' row starts, shared by every policy's jobs and eta files:
     * made by the first worker that writes (the others wait for it). */
    pthread_mutex_t prefix_lock;
    lucid_row_prefix *prefix;
    int prefix_tried;
} run_outputs;

static int outputs_open(run_outputs *o, const lucid_experiment *exp, const lucid_sim_config *cfg,
                        const lucid_policy_ops *const *policies, int n, int tables)
{
    memset(o, 0, sizeof *o);
    pthread_mutex_init(&o->prefix_lock, NULL);
    o->tables = tables;
    o->queue_waits_only = cfg->sem.queue_waits_only;
    if (make_dir(exp->out) < 0)
        return cli_fail("%s: cannot create directory: %s", exp->out, strerror(errno));
    o->k = output_names(exp, policies, n, cfg->eta, o->names);
    o->eta = cfg->eta;
    o->series = exp->series;
    char path[8192];
    for (int i = 0; i < o->k && o->rc == 0; i++) {
        snprintf(path, sizeof path, "%s/%s", exp->out, o->names[i]);
        if (!lucid_outfile_open(&o->files[i], path, &o->err))
            o->rc = -1;
    }
    for (int t = 0; t < 4 && o->rc == 0; t++)
        if (!(o->tab[t] = open_memstream(&o->text[t], &o->size[t])))
            o->rc = lucid_error_set(&o->err, "out of memory");
    if (o->rc == 0) {
        FILE *summary = o->files[0].f;
        fputs("policy,vc,jobs,avg_jct,avg_queue,p999_queue,avg_delay,avg_profiler_s,profiler_gpu_s",
              summary);
        lucid_metrics_header(summary);
        fputs(",eta_coverage,eta_median_rel_error,offered_load,inputs", summary);
        lucid_metrics_ftf_header(summary);
        fputc('\n', summary);
        if (o->eta)
            fputs("policy,vc,jobs_waited,eta_coverage,eta_median_rel_error\n",
                  o->files[o->k - 2].f);
    }
    return 0;
}

/* Table 5's four cells of one size class ("-" when it has no job). */
static void size_class_cells(FILE *out, const lucid_policy_summary *ps, int c)
{
    const lucid_summary *s = &ps->class_sums[c];
    const lucid_metrics *m = &ps->class_metrics[c];
    if (s->jobs == 0)
        fprintf(out, " %12s %12s %8s %9s", "-", "-", "-", "-");
    else
        fprintf(out, " %12.0f %12.0f %7.1f%% %9.2f", s->avg_jct, s->avg_queue, 100 * m->gap,
                m->bsld_mean);
}

/* The terminal's rows of one policy (tab: Table 4, Table 5, backfill
 * note, Lucid note). */
static void table_rows(FILE *const *tab, policy_part *part, const lucid_sim_result *r,
                       const lucid_policy_summary *ps)
{
    /* All jobs: summary.csv's `all` row (the same sums in the same order as
     * lucid_summarize and lucid_metrics_compute over every job). */
    lucid_summary s = ps->sums[ps->nvcs];
    lucid_metrics m = ps->metrics[ps->nvcs];
    part->floor = m.floor; /* all policies run the same jobs unless oversized ones were skipped */
    fprintf(tab[0], "%-10s %12.0f %12.0f %12.0f %14.0f %12.0f %7.1f%% %9.2f %9.2f",
            r->policy->name, s.avg_jct, s.avg_delay, s.avg_queue, s.p999_queue,
            s.profiler_gpu_s, 100 * m.gap, m.bsld_mean, m.bsld_p99);
    /* Jain's index is undefined over fewer than two users or VCs: "-". */
    const double cells[] = {m.jain_users, m.jain_vcs};
    for (int k = 0; k < 2; k++)
        if (isnan(cells[k]))
            fprintf(tab[0], " %7s", "-");
        else
            fprintf(tab[0], " %7.3f", cells[k]);
    if (isnan(m.gpu_util))
        fprintf(tab[0], " %8s", "-");
    else
        fprintf(tab[0], " %7.1f%%", 100 * m.gpu_util);
    /* Finish-time fairness: the largest rho, the share of jobs above 1. */
    if (isnan(m.ftf_max))
        fprintf(tab[0], " %8s %7s\n", "-", "-");
    else
        fprintf(tab[0], " %8.1f %6.1f%%\n", m.ftf_max, 100 * m.ftf_over1);
    fprintf(tab[1], "%-10s", r->policy->name);
    size_class_cells(tab[1], ps, 0);
    size_class_cells(tab[1], ps, 1);
    fputc('\n', tab[1]);
    if (r->backfill.mode != LUCID_BACKFILL_NONE) {
        const lucid_backfill_stats *b = &r->backfill_stats;
        fprintf(tab[2],
                "\nbackfill %s (%s, %s estimates, margin %.2f): %lld jobs held a "
                "reservation, moved later %lld times and earlier %lld times; %lld jobs "
                "backfilled\n",
                r->policy->name, lucid_backfill_mode_name(r->backfill.mode),
                r->backfill.estimate == LUCID_BACKFILL_EST_TIME_LIMIT ? "time-limit" : "model",
                r->backfill.margin, (long long)b->reservations, (long long)b->moved_later,
                (long long)b->moved_earlier, (long long)b->backfilled);
        /* Only when set, so the line of every earlier run keeps its bytes. */
        if (r->backfill.window > 0 || r->backfill.min_gpus > 0)
            fprintf(tab[2],
                    "backfill %s: reservations only within %lld s (0: no limit), for jobs "
                    "of >= %d GPUs\n",
                    r->policy->name, (long long)r->backfill.window, (int)r->backfill.min_gpus);
    }
    if (r->policy->flags & LUCID_POLICY_LUCID)
        fprintf(tab[3],
                "\nlucid: %lld jobs profiled, %lld finished in the profiler, %lld still "
                "marked packed at their end, %lld profiler scaling events\n",
                (long long)r->profiled, (long long)r->finished_in_profiler,
                (long long)r->packed_at_end, (long long)r->scaling_events);
}

/* One policy's results (policy `index` of the group simulated now) into
 * its own files and its part of the shared ones (lucid_sim_config's
 * on_result: a worker thread, while other policies may run; it writes only
 * what is this policy's). */
static void outputs_policy(void *user, int index, const lucid_sim_result *r)
{
    run_outputs *o = user;
    const cli_run *d = o->d;
    int i = o->first + index;
    policy_part *part = &o->part[i];
    int per = 1 + o->series + o->eta; /* files per policy, after summary.csv */
    int at = 1 + i * per;
    FILE *mem[NPARTS];
    int rc = 0;
    for (int t = 0; t < NPARTS; t++)
        if (!(mem[t] = open_memstream(&part->text[t], &part->size[t])))
            rc = -1;
    /* The MANIFEST's hashes of this policy's own files are made here, on
     * this thread: the jobs and eta files' as they are written (reading
     * 18 MB back cost a read of every byte), the series file's read back. */
    unsigned char by_writer[MAX_OUTPUTS] = {0};
    pthread_mutex_lock(&o->prefix_lock);
    if (!o->prefix_tried) /* (NULL if out of memory: the writers format the starts) */
        o->prefix = lucid_row_prefix_make(&d->trace, &d->vcs);
    o->prefix_tried = 1;
    pthread_mutex_unlock(&o->prefix_lock);
    lucid_policy_summary ps;
    if (rc == 0 && lucid_policy_summary_make(&ps, &d->trace, &d->vcs, r) < 0)
        rc = -1;
    if (rc == 0) {
        ps.offered_load = o->offered_load;
        ps.inputs = o->inputs[i];
        rc |= lucid_write_summary_rows_of(mem[PART_SUMMARY], &d->vcs, r, &ps);
        by_writer[at] = 1;
        rc |= lucid_write_jobs_hashed(o->files[at].f, &d->trace, &d->vcs, r, o->prefix,
                                      &o->hash[at]);
        at++;
        if (o->series)
            rc |= lucid_write_series(o->files[at++].f, &d->vcs, r);
        if (o->eta) {
            by_writer[at] = 1;
            rc |= lucid_write_eta_hashed(o->files[at].f, &d->trace, &d->vcs, r, o->prefix,
                                         &o->hash[at]);
            at++;
            rc |= write_eta_summary_rows(mem[PART_ETA_SUMMARY], d, r, &ps);
        }
        /* The terminal's tables only when they are printed (not --quiet). */
        if (o->tables)
            table_rows(mem + PART_TABLE, part, r, &ps);
        lucid_policy_summary_free(&ps);
    }
    for (int t = 0; t < NPARTS; t++)
        if (mem[t] && fclose(mem[t]) != 0)
            rc = -1;
    lucid_error err = {{0}};
    for (int f = 1 + i * per; rc == 0 && f < at; f++) {
        if (!by_writer[f] &&
            (fflush(o->files[f].f) != 0 ||
             lucid_hash_file_as(o->files[f].tmp, LUCID_HASH_XXH64, &o->hash[f], &err) < 0))
            continue; /* read back at the end instead */
        o->hashed[f] = 1;
    }
    part->rc = rc ? -1 : 0;
}

/* The group's parts of the shared files and tables, in policy order. */
static void outputs_append(run_outputs *o, int first, int n)
{
    for (int i = first; i < first + n; i++) {
        policy_part *part = &o->part[i];
        if (part->rc != 0)
            o->rc = -1;
        FILE *to[NPARTS] = {o->files[0].f, o->eta ? o->files[o->k - 2].f : NULL,
                            o->tab[0], o->tab[1], o->tab[2], o->tab[3]};
        for (int t = 0; t < NPARTS; t++) {
            if (o->rc == 0 && to[t] && part->size[t] > 0 &&
                fwrite(part->text[t], 1, part->size[t], to[t]) != part->size[t])
                o->rc = -1;
            free(part->text[t]);
            part->text[t] = NULL;
            part->size[t] = 0;
        }
        o->floor = part->floor;
    }
}

/* What a policy's model inputs were when not the experiment's files
 * (summary.csv's inputs column, the terminal's notes). */
static const char *policy_inputs(const cli_run *d, const lucid_sim_config *cfg,
                                 const lucid_policy_ops *policy)
{
    if ((policy->flags & LUCID_POLICY_LUCID) && cfg->online)
        return cfg->lucid.share_prior && !d->trace.has_metrics ? "online+venus_prior" : "online";
    if (policy->flags & LUCID_POLICY_LUCID)
        return cfg->lucid.share_prior && !d->trace.has_metrics ? "venus_prior" : "";
    if (strcmp(policy->name, "qssf") == 0 && d->qssf_from_lucid)
        return "lucid_online_estimates";
    return "";
}

/* Lines under the tables: model inputs that are not the trace's own, and
 * VCs asked for more than they can serve. */
static void print_input_notes(const run_outputs *o, const cli_run *d,
                              const lucid_policy_ops *const *policies, int n)
{
    for (int i = 0; i < n; i++) {
        const char *in = o->inputs[i];
        if (strstr(in, "venus_prior"))
            printf("%s: sharing scores and co-located speeds from the Venus prior (the trace has no "
                   "GPU metrics; docs/traces.md)\n",
                   policies[i]->name);
        if (strstr(in, "online"))
            printf("%s: %s\n", policies[i]->name,
                   strcmp(in, "lucid_online_estimates") == 0
                       ? "orders by the duration estimates of Lucid's online run"
                       : "duration model trained online on the trace's columns");
    }
    if (!o->offered_load)
        return;
    int nv = d->vcs.count, over = 0;
    for (int v = 0; v < nv; v++)
        if (o->offered_load[v] > 1) {
            if (!over++)
                printf("offered load above capacity (queues grow for as long as jobs arrive, "
                       "whatever the policy):");
            printf(" %s %.2f", lucid_vcs_name(&d->vcs, v), o->offered_load[v]);
        }
    if (over)
        printf("; cluster %.2f\n", o->offered_load[nv]);
}

static void print_tables(run_outputs *o)
{
    for (int t = 0; t < 4; t++)
        if (o->tab[t] && fclose(o->tab[t]) != 0)
            o->text[t] = NULL;
    for (int t = 0; t < 4; t++)
        o->tab[t] = NULL;
    printf("\nTable 4: all jobs (seconds)\n");
    printf("%-10s %12s %12s %12s %14s %12s %8s %9s %9s %7s %7s %8s %8s %7s\n", "policy",
           "avg JCT", "avg delay", "avg queue", "p99.9 queue", "prof GPU-s", "gap", "bsld",
           "p99 bsld", "Jain/u", "Jain/vc", "GPU util", "FTF max", "FTF>1");
    fputs(o->text[0] ? o->text[0] : "", stdout);
    /* Which definition the queue columns follow (docs/semantics.md). */
    if (o->queue_waits_only)
        printf("delay = JCT - duration (every policy); queue = waiting only, the reference's "
               "accounting (Lucid's profiling run and preemptions' checkpoint cost are not in it)\n");
    else
        printf("delay = JCT - duration; queue = submission to the start of the run that "
               "completes, discarded work included (Lucid's restarted profiling run, "
               "preemptions' checkpoint cost); prof GPU-s = GPU-seconds in Lucid's profiler\n");
    printf("floor: mean job duration %.0f s, no schedule that keeps durations beats it "
           "(gap = avg JCT / floor - 1; `lucid bounds` has tighter floors)\n",
           o->floor);
    printf("FTF: finish-time fairness, a job's JCT over its JCT on a private 1/N slice of its "
           "VC, N = users with jobs in the VC at its submission (docs/fairshare.md): the "
           "largest, and the share of jobs above 1\n");
    printf("\nTable 5: large (> 8 GPUs) and small jobs (seconds; gap to each class's mean "
           "duration, mean bounded slowdown)\n");
    printf("%-10s %12s %12s %8s %9s %12s %12s %8s %9s\n", "policy", "large JCT", "large queue",
           "gap", "bsld", "small JCT", "small queue", "gap", "bsld");
    for (int t = 1; t < 4; t++)
        fputs(o->text[t] ? o->text[t] : "", stdout);
}

static void outputs_free(run_outputs *o)
{
    free(o->offered_load);
    o->offered_load = NULL;
    lucid_row_prefix_free(o->prefix);
    o->prefix = NULL;
    pthread_mutex_destroy(&o->prefix_lock);
    for (int i = 0; i < LUCID_EXP_MAX_POLICIES; i++)
        for (int t = 0; t < NPARTS; t++)
            free(o->part[i].text[t]);
    for (int t = 0; t < 4; t++) {
        if (o->tab[t])
            fclose(o->tab[t]);
        free(o->text[t]);
        o->tab[t] = NULL;
        o->text[t] = NULL;
    }
}

/* The previous run's files, swapped out at the commit
 * (lucid_outfile_commit_swap) and deleted on a thread while the tables
 * print and the inputs are freed, the main thread helping at the end:
 * deleted at the commit, one after another, they cost a rerun into the same
 * folder 15-20 ms (Venus: 20 MB), where the whole command takes ~140 ms. */
typedef struct old_files {
    char *name[MAX_OUTPUTS];
    int n;
    pthread_mutex_t lock;
    int next, started;
    pthread_t thread;
} old_files;

static void sweep(old_files *f)
{
    for (;;) {
        pthread_mutex_lock(&f->lock);
        int i = f->next < f->n ? f->next++ : -1;
        pthread_mutex_unlock(&f->lock);
        if (i < 0)
            return;
        if (unlink(f->name[i]) != 0 && errno != ENOENT)
            fprintf(stderr, "lucid: %s: cannot remove the previous run's file: %s\n",
                    f->name[i], strerror(errno));
    }
}

static void *sweep_thread(void *arg)
{
    sweep(arg);
    return NULL;
}

static void sweep_start(old_files *f)
{
    if (f->n > 0)
        f->started = pthread_create(&f->thread, NULL, sweep_thread, f) == 0;
}

/* Deletes what the thread has not, waits for it and frees f. */
static void sweep_finish(old_files *f)
{
    sweep(f);
    if (f->started)
        pthread_join(f->thread, NULL);
    for (int i = 0; i < f->n; i++)
        free(f->name[i]);
    pthread_mutex_destroy(&f->lock);
    memset(f, 0, sizeof *f);
}

/* The experiment file, then every file swapped into place (the old ones
 * left to `old`), stale files of another run removed and the MANIFEST
 * written; 0, or 1 after printing. */
static int outputs_finish(run_outputs *o, const lucid_experiment *exp,
                          const lucid_policy_ops *const *policies, int n, old_files *old)
{
    if (o->rc == 0) {
        /* The experiment as run (flags applied, absolute paths): `lucid
         * explain OUTDIR JOB` re-runs from it. */
        fputs(experiment_header, o->files[o->k - 1].f);
        if (lucid_experiment_write(o->files[o->k - 1].f, exp) != 0)
            o->rc = -1;
    }
    if (o->rc && !o->err.msg[0])
        lucid_error_set(&o->err, "%s: error while writing results", exp->out);
    for (int i = 0; i < o->k; i++)
        if (o->rc == 0 &&
            lucid_outfile_commit_swap(&o->files[i], &old->name[old->n], &o->err) < 0)
            o->rc = -1;
        else if (o->rc == 0)
            old->n += old->name[old->n] != NULL;
        else
            lucid_outfile_abort(&o->files[i]);
    sweep_start(old);
    if (o->rc)
        return cli_fail("%s", o->err.msg);
    if (remove_stale(exp->out, o->names, o->k) != 0)
        return 1;
    return write_manifest(exp, policies, n, o->names, o->k, o->hash, o->hashed,
                          o->d && o->d->inputs_hashed ? o->d->input_hash : NULL, o->inputs);
}

static int parse_args(int argc, char **argv, lucid_experiment *exp, int *quiet)
{
    lucid_error err = {{0}};
    int have_file = 0;
    /* The experiment file first, so that flags override it. */
    for (int i = 1; i < argc; i++)
        if (argv[i][0] != '-' && (i == 1 || argv[i - 1][0] != '-' || strchr(argv[i - 1], '=') ||
                                  strcmp(argv[i - 1], "--series") == 0 ||
                                  strcmp(argv[i - 1], "--quiet") == 0 ||
                                  strcmp(argv[i - 1], "--skip-oversized") == 0)) {
            if (have_file)
                return cli_usage_error("more than one experiment file given ('%s')", argv[i]);
            if (lucid_experiment_load(exp, argv[i], &err) < 0)
                return cli_fail("%s", err.msg);
            have_file = 1;
        }
    static const struct {
        const char *flag, *section, *key;
    } flags[] = {
        {"--jobs", "trace", "jobs"},         {"--vcs", "trace", "vcs"},
        {"--policies", "simulate", "policies"}, {"--placer", "simulate", "placer"},
        {"--compat", "simulate", "compat"},  {"--out", "simulate", "out"},
        {"--fix", "simulate", "fix"},
        {"--threads", "simulate", "threads"}, {"--seed", "simulate", "seed"},
    };
    for (int i = 1; i < argc; i++) {
        const char *value = NULL;
        int matched = 0;
        if (argv[i][0] != '-')
            continue;
        if (cli_is_help(argv[i])) {
            fputs(usage_text, stdout);
            exit(0);
        }
        if (strcmp(argv[i], "--series") == 0) {
            exp->series = 1;
            continue;
        }
        if (strcmp(argv[i], "--quiet") == 0) {
            *quiet = 1;
            continue;
        }
        if (strcmp(argv[i], "--skip-oversized") == 0) {
            exp->skip_oversized = 1;
            continue;
        }
        for (size_t f = 0; f < sizeof flags / sizeof flags[0] && !matched; f++) {
            int got = cli_option(argc, argv, &i, flags[f].flag, &value);
            if (got < 0)
                return 2;
            if (got == 1) {
                matched = 1;
                if (lucid_experiment_set(exp, flags[f].section, flags[f].key, value, ".",
                                         flags[f].flag, 0, &err) < 0)
                    return cli_fail("%s", err.msg);
            }
        }
        if (matched)
            continue;
        int got = cli_option(argc, argv, &i, "--set", &value);
        if (got < 0)
            return 2;
        if (got == 1) {
            char buf[1024];
            snprintf(buf, sizeof buf, "%s", value);
            char *dot = strchr(buf, '.'), *eq = strchr(buf, '=');
            if (!dot || !eq || dot > eq)
                return cli_usage_error("--set wants SECTION.KEY=VALUE, not '%s'", value);
            *dot = *eq = '\0';
            if (lucid_experiment_set(exp, buf, dot + 1, eq + 1, ".", "--set", 0, &err) < 0)
                return cli_fail("%s", err.msg);
            continue;
        }
        return cli_usage_error("simulate: unknown option '%s' (see lucid simulate --help)",
                               argv[i]);
    }
    return 0;
}

/* [simulate] stream = auto: policies one after another above this much of
 * per-job results, counted as 144 bytes (a lucid_jobrun) per job and policy
 * as when each policy kept one; a policy now keeps ~40-90 bytes per job
 * (docs/benchmarks.md), but the switch point (~2.4M jobs x six policies)
 * is left where users have it. */
#define STREAM_AUTO_BYTES (2.0 * 1024 * 1024 * 1024)

/* Progress over runs of some policies each: the counter goes on from one
 * run to the next instead of starting again, in units of the trace's jobs
 * per policy (a run's own total leaves out jobs that end in Lucid's
 * profiler, so its share is scaled to its policies' part). */
typedef struct progress_span {
    cli_progress pv;
    int total_runs, runs_before, runs_now;
    int64_t unit; /* jobs per policy */
} progress_span;

static void progress_span_show(void *user, int64_t done, int64_t total)
{
    progress_span *p = user;
    double part = total > 0 ? (double)done / (double)total : 1;
    double runs = (double)p->runs_before + part * (double)p->runs_now;
    cli_progress_show(&p->pv, (int64_t)(runs * (double)p->unit), p->unit * p->total_runs);
}

int cmd_simulate(int argc, char **argv)
{
    lucid_experiment exp;
    lucid_experiment_defaults(&exp);
    int quiet = 0;
    int parsed = parse_args(argc, argv, &exp, &quiet); /* 1 bad input, 2 bad usage */
    if (parsed != 0) {
        lucid_experiment_free(&exp);
        return parsed;
    }
    const lucid_policy_ops *policies[LUCID_EXP_MAX_POLICIES];
    int npolicies = 0;
    lucid_sim_config cfg;
    if (cli_run_policies(&exp, policies, &npolicies) != 0 || cli_run_config(&exp, &cfg) != 0) {
        lucid_experiment_free(&exp);
        return 1;
    }
    if (!exp.out)
        exp.out = strdup("out");
    int stream = -1;
    if (cli_run_eta(&exp, &cfg.eta) != 0 || cli_run_eta_hourly(&exp, &cfg.eta_hourly) != 0 ||
        cli_run_stream(&exp, &stream) != 0) {
        lucid_experiment_free(&exp);
        return 1;
    }
    if (check_outputs(&exp, policies, npolicies) != 0) {
        lucid_experiment_free(&exp);
        return 1;
    }

    cli_run d;
    lucid_error err = {{0}};
    old_files old = {.n = 0};
    pthread_mutex_init(&old.lock, NULL);
    int rc = cli_run_load(&exp, policies, npolicies, &d, &cfg, 1);
    if (rc == 0)
        cfg.eta = eta_wanted(&exp, d.trace.njobs);
    if (rc == 0) {
        if (!quiet && d.trace.skipped_cpu_jobs)
            fprintf(stderr, "lucid: left out %zu CPU-only jobs (gpu_num = 0)\n",
                    d.trace.skipped_cpu_jobs);
        /* Policies one after another when all their results at once would
         * be large: each one's results are written and freed before the next
         * runs, so memory holds one policy's (10M jobs: ~0.6-0.85 GB each,
         * not 6x that), at the cost of the parallelism across policies. */
        if (stream < 0)
            stream = npolicies > 1 && (double)d.trace.njobs * npolicies * sizeof(lucid_jobrun) >
                                          STREAM_AUTO_BYTES;
        int group = stream ? 1 : npolicies;
        run_outputs out;
        rc = outputs_open(&out, &exp, &cfg, policies, npolicies, !quiet);
        if ((out.offered_load = malloc(((size_t)d.vcs.count + 1) * sizeof *out.offered_load)))
            lucid_offered_load(&d.trace, &d.vcs, cfg.gpus_per_node, out.offered_load);
        for (int i = 0; i < npolicies; i++)
            out.inputs[i] = policy_inputs(&d, &cfg, policies[i]);
        /* Wall and CPU time of the simulation (CPU: all threads), so that a
         * shared machine's waiting shows as the difference. */
        double wall = 0, cpu = 0;
        size_t left_out = 0;
        progress_span span = {.total_runs = npolicies, .unit = (int64_t)d.trace.njobs};
        cli_progress_start(&span.pv, "simulating");
        /* The runs: index ranges of policies simulated together; Lucid
         * alone first when QSSF takes its online estimates. */
        int batch_first[2 * LUCID_EXP_MAX_POLICIES + 1], batch_n[2 * LUCID_EXP_MAX_POLICIES + 1];
        int nbatches = 0, lucid_at = -1;
        for (int i = 0; d.qssf_from_lucid && i < npolicies; i++)
            if (policies[i]->flags & LUCID_POLICY_LUCID)
                lucid_at = i;
        if (lucid_at >= 0) {
            batch_first[nbatches] = lucid_at;
            batch_n[nbatches++] = 1;
        }
        for (int first = 0; first < npolicies;) {
            int end = first + group < npolicies ? first + group : npolicies;
            if (lucid_at >= first && lucid_at < end)
                end = lucid_at; /* (run already) */
            if (end > first) {
                batch_first[nbatches] = first;
                batch_n[nbatches++] = end - first;
            }
            first = end == lucid_at ? lucid_at + 1 : end;
        }
        for (int b = 0; rc == 0 && out.rc == 0 && b < nbatches; b++) {
            int first = batch_first[b];
            group = batch_n[b];
            lucid_sim_result results[LUCID_EXP_MAX_POLICIES];
            struct timespec t0, t1, c0, c1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
            span.runs_before = first;
            span.runs_now = group;
            /* Each policy's files are written as soon as it is done, on the
             * simulator's threads, while the others run. */
            out.first = first;
            out.d = &d;
            cfg.on_result = outputs_policy;
            cfg.on_result_user = &out;
            if (lucid_simulate(&cfg, &d.in, policies + first, group, results,
                               quiet ? NULL : progress_span_show, &span, &err) < 0) {
                rc = cli_fail("%s", err.msg);
                break;
            }
            clock_gettime(CLOCK_MONOTONIC, &t1);
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
            wall += (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
            cpu += (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
            left_out = results[0].nexcluded;
            if (first == lucid_at && cli_run_take_estimates(&d, &results[0]) < 0)
                rc = cli_fail("out of memory");
            for (int i = 0; i < group; i++)
                lucid_sim_result_free(&results[i]);
        }
        /* Every policy's rows in the experiment's order. */
        outputs_append(&out, 0, npolicies);
        cli_progress_end(&span.pv);
        if (rc == 0) {
            if (!quiet && left_out)
                fprintf(stderr, "lucid: --skip-oversized: left out %zu job%s larger than its VC\n",
                        left_out, left_out == 1 ? "" : "s");
            rc = outputs_finish(&out, &exp, policies, npolicies, &old);
            /* After an output error (reported once, above), no tables and
             * no success line. */
            if (rc == 0 && !quiet) {
                print_tables(&out);
                print_input_notes(&out, &d, policies, npolicies);
                printf("\n%zu jobs, %d policies, %s semantics, simulated in %.3f s (%.3f s CPU); "
                       "results in %s/\n",
                       d.trace.njobs - left_out, npolicies, exp.reference ? "reference" : "fixed",
                       wall, cpu, exp.out);
            }
        } else {
            for (int i = 0; i < out.k; i++)
                lucid_outfile_abort(&out.files[i]);
        }
        outputs_free(&out);
    }
    cli_run_free(&d);
    lucid_experiment_free(&exp);
    sweep_finish(&old);
    return rc;
}
