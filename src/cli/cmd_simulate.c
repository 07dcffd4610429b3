/* cmd_simulate.c — `lucid simulate [EXPERIMENT.ini] [options]`: load a trace
 * and its side files, run the policies, write summary.csv, jobs-<policy>.csv
 * (and series-<policy>.csv), and print the paper's Tables 4 and 5. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "lucid/csv.h"
#include "lucid/experiment.h"
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
    "                       profiled_rejoin, queue_double_count, borrow_lost\n"
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

/* Progress on stderr once the work has taken 2 s: redrawn in place at most
 * ten times a second on a terminal, otherwise one line every 5 s. */
typedef struct progress_view {
    struct timespec start, last;
    int tty, shown;
} progress_view;

static double seconds_since(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t->tv_sec) + 1e-9 * (double)(now.tv_nsec - t->tv_nsec);
}

static void show_progress(void *user, int64_t done, int64_t total)
{
    progress_view *pv = user;
    if (seconds_since(&pv->start) < 2 || seconds_since(&pv->last) < (pv->tty ? 0.1 : 5))
        return;
    clock_gettime(CLOCK_MONOTONIC, &pv->last);
    fprintf(stderr, "%ssimulating: %lld of %lld jobs (%.0f%%)%s", pv->tty ? "\r" : "",
            (long long)done, (long long)total, total > 0 ? 100.0 * (double)done / (double)total : 100.0,
            pv->tty ? "" : "\n");
    fflush(stderr);
    pv->shown = 1;
}

static int write_outputs(const lucid_experiment *exp, const cli_run *d,
                         const lucid_sim_result *results, int n)
{
    if (make_dir(exp->out) < 0)
        return cli_fail("%s: cannot create directory: %s", exp->out, strerror(errno));
    char path[4352];
    snprintf(path, sizeof path, "%s/summary.csv", exp->out);
    FILE *summary = fopen(path, "w");
    if (!summary)
        return cli_fail("%s: cannot write: %s", path, strerror(errno));
    fputs("policy,vc,jobs,avg_jct,avg_queue,p999_queue\n", summary);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        rc |= lucid_write_summary_rows(summary, &d->trace, &d->vcs, &results[i]);
        snprintf(path, sizeof path, "%s/jobs-%s.csv", exp->out, results[i].policy->name);
        FILE *jobs = fopen(path, "w");
        if (!jobs) {
            rc = cli_fail("%s: cannot write: %s", path, strerror(errno));
            break;
        }
        rc |= lucid_write_jobs(jobs, &d->trace, &d->vcs, &results[i]);
        rc |= fclose(jobs) != 0;
        if (exp->series) {
            snprintf(path, sizeof path, "%s/series-%s.csv", exp->out, results[i].policy->name);
            FILE *series = fopen(path, "w");
            if (!series) {
                rc = cli_fail("%s: cannot write: %s", path, strerror(errno));
                break;
            }
            rc |= lucid_write_series(series, &d->vcs, &results[i]);
            rc |= fclose(series) != 0;
        }
    }
    rc |= fclose(summary) != 0;
    /* The experiment as run (flags applied, absolute paths): `lucid explain
     * OUTDIR JOB` re-runs from it. */
    snprintf(path, sizeof path, "%s/experiment.ini", exp->out);
    FILE *used = fopen(path, "w");
    if (!used)
        return cli_fail("%s: cannot write: %s", path, strerror(errno));
    fputs("# The experiment this output directory was produced with (lucid simulate).\n", used);
    rc |= lucid_experiment_write(used, exp);
    rc |= fclose(used) != 0;
    if (rc)
        return cli_fail("%s: error while writing results", exp->out);
    return 0;
}

static void print_tables(const cli_run *d, const lucid_sim_result *results, int n)
{
    printf("\nTable 4: all jobs (seconds)\n");
    printf("%-10s %12s %12s %14s\n", "policy", "avg JCT", "avg queue", "p99.9 queue");
    for (int i = 0; i < n; i++) {
        lucid_summary s;
        lucid_summarize(&d->trace, &results[i], -1, 0, INT32_MAX, &s);
        printf("%-10s %12.0f %12.0f %14.0f\n", results[i].policy->name, s.avg_jct, s.avg_queue,
               s.p999_queue);
    }
    printf("\nTable 5: large (> 8 GPUs) and small jobs (seconds)\n");
    printf("%-10s %12s %12s %12s %12s\n", "policy", "large JCT", "large queue", "small JCT",
           "small queue");
    for (int i = 0; i < n; i++) {
        lucid_summary large, small;
        lucid_summarize(&d->trace, &results[i], -1, 8, INT32_MAX, &large);
        lucid_summarize(&d->trace, &results[i], -1, 0, 8, &small);
        printf("%-10s %12.0f %12.0f %12.0f %12.0f\n", results[i].policy->name, large.avg_jct,
               large.avg_queue, small.avg_jct, small.avg_queue);
    }
    for (int i = 0; i < n; i++)
        if (results[i].policy->flags & LUCID_POLICY_LUCID)
            printf("\nlucid: %lld jobs profiled, %lld finished in the profiler, %lld still "
                   "marked packed at their end, %lld profiler scaling events\n",
                   (long long)results[i].profiled, (long long)results[i].finished_in_profiler,
                   (long long)results[i].packed_at_end, (long long)results[i].scaling_events);
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
                return cli_fail("more than one experiment file given ('%s')", argv[i]);
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
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
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
                return 1;
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
            return 1;
        if (got == 1) {
            char buf[1024];
            snprintf(buf, sizeof buf, "%s", value);
            char *dot = strchr(buf, '.'), *eq = strchr(buf, '=');
            if (!dot || !eq || dot > eq)
                return cli_fail("--set wants SECTION.KEY=VALUE, not '%s'", value);
            *dot = *eq = '\0';
            if (lucid_experiment_set(exp, buf, dot + 1, eq + 1, ".", "--set", 0, &err) < 0)
                return cli_fail("%s", err.msg);
            continue;
        }
        return cli_fail("simulate: unknown option '%s' (see lucid simulate --help)", argv[i]);
    }
    return 0;
}

int cmd_simulate(int argc, char **argv)
{
    lucid_experiment exp;
    lucid_experiment_defaults(&exp);
    int quiet = 0;
    if (parse_args(argc, argv, &exp, &quiet) != 0) {
        lucid_experiment_free(&exp);
        return 1;
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

    cli_run d;
    lucid_error err = {{0}};
    int rc = cli_run_load(&exp, policies, npolicies, &d, &cfg);
    lucid_sim_result results[LUCID_EXP_MAX_POLICIES];
    if (rc == 0) {
        if (!quiet && d.trace.skipped_cpu_jobs)
            fprintf(stderr, "lucid: left out %zu CPU-only jobs (gpu_num = 0)\n",
                    d.trace.skipped_cpu_jobs);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        progress_view pv = {.start = t0, .tty = isatty(2)};
        pv.last = t0;
        pv.last.tv_sec -= 10; /* the first line may come at 2 s */
        int failed = lucid_simulate(&cfg, &d.in, policies, npolicies, results,
                                    quiet ? NULL : show_progress, &pv, &err) < 0;
        if (pv.shown && pv.tty)
            fputc('\n', stderr);
        if (failed) {
            rc = cli_fail("%s", err.msg);
        } else {
            clock_gettime(CLOCK_MONOTONIC, &t1);
            size_t left_out = npolicies > 0 ? results[0].nexcluded : 0;
            if (!quiet && left_out)
                fprintf(stderr, "lucid: --skip-oversized: left out %zu job%s larger than its VC\n",
                        left_out, left_out == 1 ? "" : "s");
            rc = write_outputs(&exp, &d, results, npolicies);
            if (!quiet) {
                print_tables(&d, results, npolicies);
                printf("\n%zu jobs, %d policies, %s semantics, simulated in %.3f s; results in %s/\n",
                       d.trace.njobs - left_out, npolicies, exp.reference ? "reference" : "fixed",
                       (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec),
                       exp.out);
            }
            for (int i = 0; i < npolicies; i++)
                lucid_sim_result_free(&results[i]);
        }
    }
    cli_run_free(&d);
    lucid_experiment_free(&exp);
    return rc;
}
