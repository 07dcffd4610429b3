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

typedef struct loaded {
    lucid_vcs vcs;
    lucid_trace trace;
    double *qssf_est, *lucid_est;
    lucid_sharing sharing;
    lucid_pairs pairs;
    lucid_forecast forecast;
    int32_t *nodes_from;
} loaded;

static void free_loaded(loaded *d)
{
    lucid_trace_free(&d->trace);
    lucid_vcs_free(&d->vcs);
    free(d->qssf_est);
    free(d->lucid_est);
    lucid_sharing_free(&d->sharing);
    lucid_pairs_free(&d->pairs);
    lucid_forecast_free(&d->forecast);
    free(d->nodes_from);
}

static int parse_nodes_from(const char *spec, const lucid_vcs *vcs, int32_t **out, lucid_error *err)
{
    int32_t *from = calloc((size_t)vcs->count + 1, sizeof *from);
    if (!from)
        return lucid_error_set(err, "out of memory");
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save = NULL, *item = strtok_r(buf, ", ", &save); item;
         item = strtok_r(NULL, ", ", &save)) {
        char *colon = strchr(item, ':');
        int64_t n = 1;
        if (colon) {
            *colon = '\0';
            if (lucid_parse_i64(colon + 1, &n) < 0 || n < 0) {
                free(from);
                return lucid_error_set(err, "[lucid] profiler_nodes_from: bad node count in '%s'",
                                       spec);
            }
        }
        int32_t vc = lucid_strtab_find(vcs->names, item);
        if (vc < 0) {
            free(from);
            return lucid_error_set(err, "[lucid] profiler_nodes_from: unknown VC '%s'", item);
        }
        from[vc] += (int32_t)n;
        if (from[vc] > vcs->nodes[vc]) {
            free(from);
            return lucid_error_set(err, "[lucid] profiler_nodes_from: VC %s has only %d nodes",
                                   item, vcs->nodes[vc]);
        }
    }
    *out = from;
    return 0;
}

static int needs(const lucid_policy_ops *const *policies, int n, unsigned flag)
{
    for (int i = 0; i < n; i++)
        if (policies[i]->flags & flag)
            return 1;
    return 0;
}

static int has_policy(const lucid_policy_ops *const *policies, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(policies[i]->name, name) == 0)
            return 1;
    return 0;
}

static int load_inputs(const lucid_experiment *exp, const lucid_policy_ops *const *policies,
                       int npolicies, loaded *d, lucid_error *err)
{
    if (!exp->jobs || !exp->vcs)
        return lucid_error_set(err, "no trace: give [trace] jobs and vcs (or --jobs/--vcs)");
    if (lucid_vcs_load(&d->vcs, exp->vcs, err) < 0 ||
        lucid_trace_load(&d->trace, exp->jobs, &d->vcs, err) < 0)
        return -1;
    if (has_policy(policies, npolicies, "qssf")) {
        const char *path = exp->qssf_estimates ? exp->qssf_estimates : exp->lucid_estimates;
        if (!path)
            return lucid_error_set(err, "qssf needs [qssf] estimates");
        if (lucid_estimates_load(&d->qssf_est, &d->trace, path, err) < 0)
            return -1;
    }
    if (!needs(policies, npolicies, LUCID_POLICY_LUCID))
        return 0;
    if (exp->models && strcmp(exp->models, "files") != 0)
        return lucid_error_set(err, "[lucid] models = %s: only 'files' (precomputed model "
                                    "outputs) is available in this build",
                               exp->models);
    if (!exp->lucid_estimates)
        return lucid_error_set(err, "lucid needs [lucid] estimates");
    if (lucid_estimates_load(&d->lucid_est, &d->trace, exp->lucid_estimates, err) < 0)
        return -1;
    if (exp->sharing_labels && lucid_sharing_load(&d->sharing, &d->trace, exp->sharing_labels, err) < 0)
        return -1;
    if (exp->colocation && lucid_pairs_load(&d->pairs, &d->trace, exp->colocation, err) < 0)
        return -1;
    if (exp->forecast && lucid_forecast_load(&d->forecast, exp->forecast, err) < 0)
        return -1;
    if (exp->profiler_nodes_from &&
        parse_nodes_from(exp->profiler_nodes_from, &d->vcs, &d->nodes_from, err) < 0)
        return -1;
    return 0;
}

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

static void show_progress(void *user, int done, int total)
{
    (void)user;
    fprintf(stderr, "\rsimulating: %d/%d VC runs", done, total);
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
}

static int write_outputs(const lucid_experiment *exp, const loaded *d,
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
    if (rc)
        return cli_fail("%s: error while writing results", exp->out);
    return 0;
}

static void print_tables(const loaded *d, const lucid_sim_result *results, int n)
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
    if (exp.npolicies == 0 || (exp.npolicies == 1 && strcmp(exp.policies[0], "all") == 0)) {
        for (const lucid_policy_ops *const *p = lucid_policy_list(); *p; p++)
            policies[npolicies++] = *p;
    } else {
        for (int i = 0; i < exp.npolicies; i++) {
            policies[npolicies] = lucid_policy_find(exp.policies[i]);
            if (!policies[npolicies]) {
                cli_fail("unknown policy '%s' (fifo, sjf, srtf, qssf, tiresias, lucid)",
                         exp.policies[i]);
                lucid_experiment_free(&exp);
                return 1;
            }
            npolicies++;
        }
    }
    lucid_sim_config cfg;
    lucid_sim_config_defaults(&cfg);
    if (exp.placer && !(cfg.placer = lucid_placer_find(exp.placer))) {
        cli_fail("unknown placer '%s' (consolidate, consolidate-first, random)", exp.placer);
        lucid_experiment_free(&exp);
        return 1;
    }
    cfg.reference = exp.reference;
    cfg.sem = exp.reference ? lucid_semantics_reference() : lucid_semantics_fixed();
    lucid_error fix_err = {{0}};
    if (exp.fix && lucid_semantics_fix(&cfg.sem, exp.fix, &fix_err) < 0) {
        cli_fail("[simulate] fix: %s", fix_err.msg);
        lucid_experiment_free(&exp);
        return 1;
    }
    cfg.gpus_per_node = exp.gpus_per_node;
    cfg.threads = exp.threads;
    cfg.seed = exp.seed;
    cfg.start = exp.start;
    cfg.series = exp.series;
    cfg.skip_oversized = exp.skip_oversized;
    cfg.lucid.profiler_nodes = exp.profiler_nodes;
    cfg.lucid.profiler_time_limit = exp.profiler_time_limit;
    cfg.lucid.profiler_factor = exp.profiler_factor;
    cfg.lucid.profiler_autoscale = exp.profiler_autoscale;
    cfg.lucid.gmem_limit = exp.gpu_mem_mib;
    cfg.lucid.priority_ratio = exp.priority_ratio;
    cfg.lucid.score_sum = exp.score_sum;
    cfg.lucid.pack_threshold = exp.pack_threshold;
    cfg.lucid.scale_down_factor = exp.scale_down_factor;
    if (!exp.out)
        exp.out = strdup("out");

    loaded d;
    memset(&d, 0, sizeof d);
    lucid_error err = {{0}};
    int rc = 0;
    if (load_inputs(&exp, policies, npolicies, &d, &err) < 0)
        rc = cli_fail("%s", err.msg);
    if (rc == 0 && exp.borrow_vc) {
        cfg.lucid.borrow_vc = lucid_strtab_find(d.vcs.names, exp.borrow_vc);
        if (cfg.lucid.borrow_vc < 0)
            rc = cli_fail("[lucid] borrow_vc: unknown VC '%s'", exp.borrow_vc);
    }
    cfg.lucid.nodes_from = d.nodes_from;
    lucid_sim_result results[LUCID_EXP_MAX_POLICIES];
    if (rc == 0) {
        if (!quiet && d.trace.skipped_cpu_jobs)
            fprintf(stderr, "lucid: left out %zu CPU-only jobs (gpu_num = 0)\n",
                    d.trace.skipped_cpu_jobs);
        lucid_sim_inputs in = {.trace = &d.trace,
                               .vcs = &d.vcs,
                               .qssf_estimates = d.qssf_est,
                               .lucid_estimates = d.lucid_est,
                               .sharing = d.sharing.count ? &d.sharing : NULL,
                               .pairs = d.pairs.count ? &d.pairs : NULL,
                               .forecast = d.forecast.count ? &d.forecast : NULL};
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int tty = isatty(2);
        if (lucid_simulate(&cfg, &in, policies, npolicies, results,
                           !quiet && tty ? show_progress : NULL, NULL, &err) < 0) {
            rc = cli_fail("%s", err.msg);
        } else {
            clock_gettime(CLOCK_MONOTONIC, &t1);
            rc = write_outputs(&exp, &d, results, npolicies);
            if (!quiet) {
                print_tables(&d, results, npolicies);
                printf("\n%zu jobs, %d policies, %s semantics, simulated in %.3f s; results in %s/\n",
                       d.trace.njobs, npolicies, exp.reference ? "reference" : "fixed",
                       (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec),
                       exp.out);
            }
            for (int i = 0; i < npolicies; i++)
                lucid_sim_result_free(&results[i]);
        }
    }
    free_loaded(&d);
    lucid_experiment_free(&exp);
    return rc;
}
