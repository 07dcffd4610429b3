/* cmd_trace.c — `lucid trace synth`: synthetic Helios-like traces;
 * `lucid trace import`: public traces and Slurm accounting as trace folders. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "lucid/atomic.h"
#include "lucid/csv.h"
#include "lucid/experiment.h"
#include "lucid/import.h"
#include "lucid/trace.h"

static const char usage_text[] =
    "usage: lucid trace synth --out DIR [options]\n"
    "\n"
    "Writes DIR/trace.csv, DIR/vc_config.csv, DIR/estimates.csv and DIR/experiment.ini:\n"
    "jobs drawn from a base trace (GPUs, duration and workload together), Poisson\n"
    "arrivals at the rate giving the target load, VCs in the base trace's proportions.\n"
    "The four files are written whole or not at all; DIR may not be the folder of\n"
    "--from or --from-vcs.\n"
    "\n"
    "  --jobs N        number of jobs (10000)\n"
    "  --nodes N       total nodes (135)\n"
    "  --vcs N         number of VCs (15)\n"
    "  --load X        offered load, GPU-seconds asked per GPU-second (0.9)\n"
    "  --noise X       sigma of log-normal noise on the estimates (0.5)\n"
    "  --seed N        seed (1)\n"
    "  --from TRACE    base trace (the bundled Venus trace, data/venus-sept/trace.csv\n"
    "                  in lucid's data directory: $LUCID_DATA_DIR, ../share/lucid\n"
    "                  beside the program, or " LUCID_DATADIR ")\n"
    "  --from-vcs CSV  its VC configuration (data/venus-sept/vc_config.csv there)\n";

/* The experiment that runs the synthetic trace, with the base trace's
 * sharing labels and co-location pairs when they are beside it.  The
 * profiler keeps Venus's proportion (2 of 135 nodes) and, for equal
 * capacity, takes its nodes from the VCs (most nodes left first) that keep
 * room for the largest job they may be given (the base trace's largest,
 * capped at the VC); when none can, it adds them (commented so). */
static void write_synth_experiment(FILE *f, const lucid_synth_config *cfg, const char *from,
                                   const lucid_trace *base, const lucid_vcs *base_vcs)
{
    int32_t profiler_nodes = (int32_t)((2LL * cfg->nodes + 134) / 135);
    if (profiler_nodes < 1)
        profiler_nodes = 1;
    int32_t profiler_factor = profiler_nodes >= 8 ? 1 : 8 / profiler_nodes;
    int32_t *sizes = lucid_synth_vc_sizes(cfg, base_vcs), largest_job = 1, lender = -1;
    for (size_t i = 0; i < base->njobs; i++)
        largest_job = base->jobs[i].gpu_num > largest_job ? base->jobs[i].gpu_num : largest_job;
    int32_t *taken = calloc((size_t)cfg->vcs + 1, sizeof *taken);
    int32_t *keep = calloc((size_t)cfg->vcs + 1, sizeof *keep);
    int32_t gpn = cfg->gpus_per_node > 0 ? cfg->gpus_per_node : 8;
    int got = 0;
    if (sizes && taken && keep) {
        /* a VC keeps room for the largest job it may be given (the base
         * trace's largest, capped at the VC) */
        for (int32_t v = 0; v < cfg->vcs; v++) {
            int32_t biggest = largest_job < sizes[v] * gpn ? largest_job : sizes[v] * gpn;
            keep[v] = (biggest + gpn - 1) / gpn;
        }
        got = lucid_profiler_take(sizes, keep, cfg->vcs, profiler_nodes, taken) == 0;
        for (int32_t v = 0; got && v < cfg->vcs; v++) /* the lender: the largest that gave */
            if (taken[v] > 0 && (lender < 0 || sizes[v] > sizes[lender]))
                lender = v;
    }
    fprintf(f,
            "# Synthetic trace: %lld jobs, %d nodes, %d VCs, load %.2f, seed %llu\n"
            "[trace]\njobs = trace.csv\nvcs = vc_config.csv\n\n"
            "[simulate]\npolicies = all\nout = results\n\n"
            "[qssf]\nestimates = estimates.csv\n\n"
            "[lucid]\nestimates = estimates.csv\n"
            "# The profiling cluster keeps Venus's proportion (2 of 135 nodes); its GPU\n"
            "# limit is profiler_nodes x profiler_factor.\nprofiler_nodes = %d\nprofiler_factor = %d\n"
            "# No throughput forecast: the packing switch stays on, so a job packs\n"
            "# only when it cannot start on free GPUs (docs/benchmarks.md, the zoo).\n"
            "pack_when_blocked = yes\n",
            (long long)cfg->jobs, cfg->nodes, cfg->vcs, cfg->load, (unsigned long long)cfg->seed,
            profiler_nodes, profiler_factor);
    if (got) {
        fputs("# Its nodes come out of the VCs (equal capacity with the baselines).\n"
              "profiler_nodes_from = ", f);
        for (int32_t v = 0, n = 0; v < cfg->vcs; v++)
            if (taken[v] > 0)
                fprintf(f, "%svc%04d:%d", n++ ? "," : "", v, taken[v]);
        fprintf(f, "\nborrow_vc = vc%04d\n", lender);
    } else {
        fputs("# No VC can spare a node and still hold its largest job: the profiler's\n"
              "# nodes are added to the cluster (more GPUs than the baselines get).\n", f);
    }
    free(sizes);
    free(taken);
    free(keep);
    char base_dir[4096], file[4352], real[4096];
    snprintf(base_dir, sizeof base_dir, "%s", from);
    char *slash = strrchr(base_dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(base_dir, sizeof base_dir, ".");
    static const char *const side[][2] = {{"sharing_labels", "sharing_labels.csv"},
                                          {"colocation", "colocation_pairs.csv"}};
    for (int k = 0; k < 2; k++) {
        snprintf(file, sizeof file, "%s/%s", base_dir, side[k][1]);
        if (realpath(file, real))
            fprintf(f, "%s = %s\n", side[k][0], real);
    }
}

static int synth(int argc, char **argv)
{
    lucid_synth_config cfg = {.jobs = 10000, .nodes = 135, .vcs = 15, .gpus_per_node = 8,
                              .load = 0.9, .estimate_noise = 0.5, .seed = 1};
    /* The default base is the bundled Venus trace, found wherever lucid
     * runs from (cli_data_file: installed data directory or source tree). */
    const char *out = NULL, *from = NULL, *from_vcs = NULL;
    char from_buf[4096], from_vcs_buf[4096];
    for (int i = 1; i < argc; i++) {
        const char *v;
        int64_t n;
        int got;
        if (cli_is_help(argv[i])) {
            fputs(usage_text, stdout);
            return 0;
        }
        if ((got = cli_option(argc, argv, &i, "--out", &v)) != 0) {
            if (got < 0)
                return 2;
            out = v;
        } else if ((got = cli_option(argc, argv, &i, "--from", &v)) != 0) {
            if (got < 0)
                return 2;
            from = v;
        } else if ((got = cli_option(argc, argv, &i, "--from-vcs", &v)) != 0) {
            if (got < 0)
                return 2;
            from_vcs = v;
        } else if ((got = cli_option(argc, argv, &i, "--jobs", &v)) != 0) {
            if (got < 0 || cli_int("--jobs", v, &n) < 0)
                return 2;
            if (n < 1)
                return cli_usage_error("--jobs: %lld is not a positive number of jobs", (long long)n);
            cfg.jobs = n;
        } else if ((got = cli_option(argc, argv, &i, "--nodes", &v)) != 0) {
            if (got < 0 || cli_int("--nodes", v, &n) < 0)
                return 2;
            if (n < 1 || n > 1000000)
                return cli_usage_error("--nodes: %lld out of range 1..1000000", (long long)n);
            cfg.nodes = (int32_t)n;
        } else if ((got = cli_option(argc, argv, &i, "--vcs", &v)) != 0) {
            if (got < 0 || cli_int("--vcs", v, &n) < 0)
                return 2;
            if (n < 1 || n > 100000)
                return cli_usage_error("--vcs: %lld out of range 1..100000", (long long)n);
            cfg.vcs = (int32_t)n;
        } else if ((got = cli_option(argc, argv, &i, "--seed", &v)) != 0) {
            if (got < 0 || cli_int("--seed", v, &n) < 0)
                return 2;
            cfg.seed = (uint64_t)n;
        } else if ((got = cli_option(argc, argv, &i, "--load", &v)) != 0) {
            if (got < 0)
                return 2;
            if (lucid_parse_f64(v, &cfg.load) < 0 || cfg.load <= 0)
                return cli_usage_error("--load: '%s' is not a positive number", v);
        } else if ((got = cli_option(argc, argv, &i, "--noise", &v)) != 0) {
            if (got < 0)
                return 2;
            if (lucid_parse_f64(v, &cfg.estimate_noise) < 0 || cfg.estimate_noise < 0)
                return cli_usage_error("--noise: '%s' is not a non-negative number", v);
        } else {
            return cli_usage_error("trace synth: unknown option '%s' (see lucid trace synth --help)",
                                   argv[i]);
        }
    }
    if (!out)
        return cli_usage_error("trace synth: --out DIR is required");
    if (!from && cli_data_file("data/venus-sept/trace.csv", from_buf, sizeof from_buf) < 0)
        return cli_fail("trace synth: no base trace: %s (give one with --from TRACE --from-vcs CSV)",
                        from_buf);
    if (!from_vcs && cli_data_file("data/venus-sept/vc_config.csv", from_vcs_buf,
                                   sizeof from_vcs_buf) < 0)
        return cli_fail("trace synth: no base VC file: %s (give one with --from-vcs CSV)",
                        from_vcs_buf);
    from = from ? from : from_buf;
    from_vcs = from_vcs ? from_vcs : from_vcs_buf;
    /* The folder is one trace: never the base trace's own folder, whose
     * experiment.ini (and trace.csv) the run would replace. */
    const char *const inputs[] = {from, from_vcs};
    const char *const roles[] = {"--from", "--from-vcs"};
    for (int k = 0; k < 2; k++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", inputs[k]);
        char *cut = strrchr(dir, '/');
        if (cut)
            cut[cut == dir] = '\0'; /* "/x.csv" -> "/" */
        else
            snprintf(dir, sizeof dir, ".");
        if (lucid_same_file(out, dir))
            return cli_fail("trace synth: --out %s holds the %s input %s; choose another folder",
                            out, roles[k], inputs[k]);
    }
    static const char *const names[] = {"trace.csv", "vc_config.csv", "estimates.csv",
                                        "experiment.ini"};
    char paths[4][4200];
    lucid_error err = {{0}};
    for (int k = 0; k < 4; k++) {
        snprintf(paths[k], sizeof paths[k], "%s/%s", out, names[k]);
        if (lucid_check_not_input(paths[k], inputs, 2, roles, &err) < 0)
            return cli_fail("trace synth: %s", err.msg);
    }
    lucid_vcs vcs;
    lucid_trace base;
    if (lucid_vcs_load(&vcs, from_vcs, &err) < 0)
        return cli_fail("%s", err.msg);
    if (lucid_trace_load(&base, from, &vcs, &err) < 0) {
        lucid_vcs_free(&vcs);
        return cli_fail("%s", err.msg);
    }
    /* All four files are written under temporary names and renamed
     * together at the end: a failed run leaves no partial folder (and a
     * folder it created is removed again). */
    int created = mkdir(out, 0777) == 0;
    if (!created && errno != EEXIST) {
        lucid_trace_free(&base);
        lucid_vcs_free(&vcs);
        return cli_fail("%s: cannot create: %s", out, strerror(errno));
    }
    lucid_outfile files[4];
    memset(files, 0, sizeof files);
    int rc = 0;
    for (int k = 0; k < 4 && rc == 0; k++)
        if (!lucid_outfile_open(&files[k], paths[k], &err))
            rc = -1;
    if (rc == 0)
        rc = lucid_synth_write_files(&cfg, &base, &vcs, files[0].f, files[1].f, files[2].f,
                                     &err);
    if (rc == 0)
        write_synth_experiment(files[3].f, &cfg, from, &base, &vcs);
    lucid_trace_free(&base);
    lucid_vcs_free(&vcs);
    for (int k = 0; k < 4; k++)
        if (rc == 0)
            rc = lucid_outfile_commit(&files[k], &err);
        else
            lucid_outfile_abort(&files[k]);
    if (rc < 0) {
        if (created)
            rmdir(out); /* empty again unless a commit went through */
        return cli_fail("trace synth: %s", err.msg);
    }
    printf("wrote %s/{trace.csv,vc_config.csv,estimates.csv,experiment.ini}\n", out);
    return 0;
}

/* ---------------- import ---------------- */

static void import_usage(FILE *out)
{
    fputs("usage: lucid trace import --format F SRC... --out DIR [options]\n"
          "\n"
          "Converts a public GPU trace, Slurm accounting or lucidd's history into a\n"
          "trace folder that `lucid simulate DIR/experiment.ini` runs: trace.csv,\n"
          "vc_config.csv, experiment.ini and MANIFEST (sources with sha256, every rule\n"
          "with the jobs it removed, counts, the source's licence).  Rules per format:\n"
          "docs/traces.md.\n"
          "\n"
          "formats:\n",
          out);
    for (size_t i = 0; i < lucid_import_nformats; i++)
        fprintf(out, "  %-8s %s\n", lucid_import_formats[i].name, lucid_import_formats[i].summary);
    fputs("\noptions:\n"
          "  --since T / --until T   keep jobs submitted in [T, T') (YYYY-MM-DD[ HH:MM:SS])\n"
          "  --origin T              calendar time of trace second 0 (default: the earliest\n"
          "                          submit read, HeliosData's and Lucid's convention)\n"
          "  --start T|SECONDS       simulation start written to experiment.ini\n"
          "  --like EXP.ini          copy an experiment's policies, side files and knobs\n"
          "  --workload-from TRACE   Lucid's workload columns by job id from TRACE\n"
          "  --slurm-conf FILE       the site's slurm.conf: the slurm policy (Slurm's own\n"
          "                          priority weights and scheduler) joins the policies\n"
          "  --sample-workload       ... and for other jobs, a seeded draw among the 32\n"
          "                          TRACE jobs nearest in duration (the Lucid authors' way)\n"
          "  --seed N                seed for --sample-workload (1)\n"
          "  --gpus-per-node N       node size (format default, 8)\n"
          "  --vc-by partition|account   sacct: what a VC is (partition)\n"
          "  --vc-by queue|partition     swf: one VC per queue or partition (default: one VC)\n"
          "  --procs-per-gpu X       swf: processors per GPU (1)\n"
          "  --running               sacct: keep still-running jobs, ended at --now\n"
          "  --now T                 sacct: end still-running jobs at T (default: Start + Elapsed)\n"
          "  --attempts sum|span|each  philly: one job, duration the attempts' sum (sum)\n"
          "                          or first start to last end (span); or each attempt a job\n"
          "  --vc-size VC=GPUS,...   VC sizes where the source gives none (itp, philly, acme,\n"
          "                          lucidd, sacct --vc-by account, swf queues)\n",
          out);
}

static int parse_when(const char *option, const char *v, int64_t *out)
{
    if (lucid_time_parse(v, out) < 0)
        return cli_fail("%s: '%s' is not YYYY-MM-DD[ HH:MM:SS]", option, v);
    return 0;
}

/* Lucid's profiler for an imported trace at the baselines' capacity:
 * Venus's proportion (2 nodes of 135, at least 1) with a GPU limit of 8
 * (profiler_nodes x factor), its nodes taken one at a time from the VC
 * with the most nodes left that still holds its largest job (ties: the
 * first); the autoscaler borrows from the largest VC.  from/borrow are
 * empty when no VC can spare a node (the profiler then adds capacity,
 * which the MANIFEST's knobs show). */
static void profiler_share(const lucid_import *imp, int32_t *nodes, int32_t *factor, char *from,
                           size_t from_size, char *borrow, size_t borrow_size)
{
    int32_t nvcs = imp->vc_names ? lucid_strtab_count(imp->vc_names) : 0;
    int64_t node = imp->gpus_per_node > 0 ? imp->gpus_per_node : 8, total = 0;
    /* per VC: its nodes, the nodes its largest job needs, those it gives;
     * a VC without jobs is not in vc_config.csv: 0 nodes, no part */
    int32_t *size = calloc((size_t)nvcs + 1, sizeof *size), *keep = calloc((size_t)nvcs + 1, sizeof *keep);
    int32_t *taken = calloc((size_t)nvcs + 1, sizeof *taken);
    from[0] = borrow[0] = '\0';
    for (size_t i = 0; keep && i < imp->njobs; i++) {
        int32_t n = (int32_t)((imp->jobs[i].gpu_num + node - 1) / node);
        keep[imp->jobs[i].vc] = n > keep[imp->jobs[i].vc] ? n : keep[imp->jobs[i].vc];
    }
    for (int32_t v = 0; size && keep && v < nvcs; v++) {
        size[v] = keep[v] > 0 ? (int32_t)(imp->vc_gpus[v] / node) : 0;
        total += size[v];
    }
    *nodes = (int32_t)((2 * total + 134) / 135);
    *nodes = *nodes < 1 ? 1 : *nodes;
    *factor = *nodes >= 8 ? 1 : 8 / *nodes;
    if (size && keep && taken && lucid_profiler_take(size, keep, nvcs, *nodes, taken) == 0) {
        size_t used = 0;
        int32_t largest = -1; /* the autoscaler's lender: most nodes left */
        for (int32_t v = 0; v < nvcs; v++) {
            if (taken[v] > 0 && used < from_size)
                used += (size_t)snprintf(from + used, from_size - used, "%s%s:%d", used ? "," : "",
                                         lucid_strtab_get(imp->vc_names, v), taken[v]);
            int32_t left = size[v] - taken[v];
            if (left - 1 >= keep[v] && (largest < 0 || left > size[largest] - taken[largest]))
                largest = v;
        }
        if (largest >= 0)
            snprintf(borrow, borrow_size, "%s", lucid_strtab_get(imp->vc_names, largest));
    }
    free(size);
    free(keep);
    free(taken);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Slurm's start latency on these records, for the slurm policy: the mean
 * wait of each job from what could have started it (its submission, or
 * the last end before its start, whichever came later) to its start,
 * over the waits of at most 5 s (longer ones waited for something else:
 * GPUs, a backfill pass).  -1 with fewer than 10 such jobs. */
static double fit_start_latency(const lucid_import *imp)
{
    int64_t *ends = malloc((imp->njobs + 1) * sizeof *ends);
    if (!ends)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < imp->njobs; i++) {
        const lucid_import_job *j = &imp->jobs[i];
        if (j->first_start != LUCID_IMPORT_NO_TIME && j->earlier_runs == 0)
            ends[n++] = j->first_start + j->duration;
    }
    qsort(ends, n, sizeof *ends, cmp_i64);
    double sum = 0;
    long count = 0;
    for (size_t i = 0; i < imp->njobs; i++) {
        const lucid_import_job *j = &imp->jobs[i];
        if (j->first_start == LUCID_IMPORT_NO_TIME)
            continue;
        size_t lo = 0, hi = n; /* the ends at or before its start */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (ends[mid] <= j->first_start)
                lo = mid + 1;
            else
                hi = mid;
        }
        int64_t from = j->submit;
        if (lo > 0 && ends[lo - 1] > from)
            from = ends[lo - 1];
        int64_t wait = j->first_start - from;
        if (wait >= 0 && wait <= 5) {
            sum += (double)wait;
            count++;
        }
    }
    free(ends);
    return count >= 10 ? sum / (double)count : -1;
}

/* The experiment next to the trace: the template's (or default) keys with
 * the folder's own files; paths inside DIR are written relative to it so the
 * folder can move. */
/* The slurm policy configured from the site's slurm.conf, and added to the
 * policies run ("all" named out, since all is the paper's six). */
static int add_slurm_policy(lucid_experiment *exp, const char *slurm_conf)
{
    lucid_error err = {{0}};
    if (lucid_slurm_conf_apply(exp, slurm_conf, &err) < 0)
        return cli_fail("%s", err.msg);
    char list[512] = "";
    size_t used = 0;
    int all = exp->npolicies == 0 || (exp->npolicies == 1 && strcmp(exp->policies[0], "all") == 0);
    for (const lucid_policy_ops *const *p = lucid_policy_list(); all && *p; p++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s,", (*p)->name);
    for (int i = 0; !all && i < exp->npolicies && used < sizeof list; i++)
        if (strcmp(exp->policies[i], "slurm") != 0)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s,", exp->policies[i]);
    if (used < sizeof list)
        snprintf(list + used, sizeof list - used, "slurm");
    if (lucid_experiment_set(exp, "simulate", "policies", list, NULL, "import", 0, &err) < 0)
        return cli_fail("%s", err.msg);
    return 0;
}

static int write_experiment(FILE *f, const char *template_path, const char *dir_abs,
                            const lucid_import *imp, int64_t start, int have_start,
                            const char *slurm_conf)
{
    lucid_experiment exp;
    lucid_experiment_defaults(&exp);
    lucid_error err = {{0}};
    if (template_path && lucid_experiment_load(&exp, template_path, &err) < 0) {
        lucid_experiment_free(&exp);
        return cli_fail("%s", err.msg);
    }
    /* Without a template: all six policies on what the trace has (docs/
     * traces.md, "Every policy on an imported trace"): Lucid's duration
     * model online on the trace's columns, QSSF on its estimates, sharing
     * scores and co-located speeds from the Venus prior for jobs without
     * GPU metrics, and a profiler of Venus's proportion taken out of the
     * VCs (equal capacity). */
    char from[1024], borrow[256];
    int32_t nodes = 0, factor = 0;
    profiler_share(imp, &nodes, &factor, from, sizeof from, borrow, sizeof borrow);
    char nodes_text[16], factor_text[16];
    snprintf(nodes_text, sizeof nodes_text, "%d", nodes);
    snprintf(factor_text, sizeof factor_text, "%d", factor);
    const char *const defaults[][3] = {
        {"simulate", "policies", "fifo,sjf,srtf,qssf,tiresias,lucid"},
        {"lucid", "models", "online"},
        {"lucid", "prior", "venus"},
        {"lucid", "profiler_nodes", nodes_text},
        {"lucid", "profiler_factor", factor_text},
        {"lucid", "profiler_nodes_from", from},
        {"lucid", "borrow_vc", borrow},
        /* no forecast: the switch stays on; pack only a job that cannot
         * start on free GPUs (docs/benchmarks.md, the zoo) */
        {"lucid", "pack_when_blocked", "yes"},
    };
    for (size_t k = 0; !template_path && k < sizeof defaults / sizeof defaults[0]; k++)
        if (defaults[k][2][0] &&
            lucid_experiment_set(&exp, defaults[k][0], defaults[k][1], defaults[k][2], NULL,
                                 "import", 0, &err) < 0) {
            lucid_experiment_free(&exp);
            return cli_fail("%s", err.msg);
        }
    if (slurm_conf && add_slurm_policy(&exp, slurm_conf) != 0) {
        lucid_experiment_free(&exp);
        return 1;
    }
    /* The slurm policy's Fair Tree and job size from the records and the
     * node list (sacct). */
    char nodes_count[32], cpus_count[32], latency[32];
    double fitted = slurm_conf ? fit_start_latency(imp) : -1;
    snprintf(latency, sizeof latency, "%.2f", fitted);
    snprintf(nodes_count, sizeof nodes_count, "%lld", (long long)imp->cluster_nodes);
    snprintf(cpus_count, sizeof cpus_count, "%lld", (long long)imp->cluster_cpus);
    if (slurm_conf &&
        ((imp->slurm_accounts &&
          lucid_experiment_set(&exp, "slurm", "accounts", imp->slurm_accounts, NULL, "import", 0,
                               &err) < 0) ||
         (imp->cluster_nodes > 0 &&
          lucid_experiment_set(&exp, "slurm", "cluster_nodes", nodes_count, NULL, "import", 0,
                               &err) < 0) ||
         (imp->cluster_cpus > 0 &&
          lucid_experiment_set(&exp, "slurm", "cluster_cpus", cpus_count, NULL, "import", 0,
                               &err) < 0) ||
         (fitted >= 0 && fitted <= 60 &&
          lucid_experiment_set(&exp, "slurm", "start_latency", latency, NULL, "import", 0,
                               &err) < 0))) {
        lucid_experiment_free(&exp);
        return cli_fail("%s", err.msg);
    }
    char path[PATH_MAX + 32];
    free(exp.jobs);
    free(exp.vcs);
    free(exp.out);
    snprintf(path, sizeof path, "%s/trace.csv", dir_abs);
    exp.jobs = lucid_strdup(path);
    snprintf(path, sizeof path, "%s/vc_config.csv", dir_abs);
    exp.vcs = lucid_strdup(path);
    snprintf(path, sizeof path, "%s/results", dir_abs);
    exp.out = lucid_strdup(path);
    exp.gpus_per_node = imp->gpus_per_node;
    if (have_start)
        exp.start = start;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    int rc = !mem || !exp.jobs || !exp.vcs || !exp.out || lucid_experiment_write(mem, &exp) < 0;
    if (mem)
        rc |= fclose(mem) != 0;
    lucid_experiment_free(&exp);
    if (rc) {
        free(text);
        return cli_fail("experiment.ini: out of memory");
    }
    fprintf(f, "# Written by lucid trace import (%s)%s%s.\n# `lucid simulate experiment.ini` "
               "runs it; paths are relative to this file.\n",
            imp->format, template_path ? ", keys from " : "", template_path ? template_path : "");
    size_t prefix = strlen(dir_abs);
    for (char *line = text; line && *line;) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *eq = strstr(line, " = ");
        if (eq && strncmp(eq + 3, dir_abs, prefix) == 0 && eq[3 + prefix] == '/') {
            eq[3] = '\0';
            fprintf(f, "%s%s\n", line, eq + 3 + prefix + 1);
        } else {
            fprintf(f, "%s\n", line);
        }
        line = next;
    }
    free(text);
    return ferror(f) ? 1 : 0;
}

/* What `trace import` was asked to do. */
typedef struct import_args {
    const char *format, *out, *like, *workload, *vc_sizes, *slurm_conf;
    const char **sources;
    int nsources, sample;
    int have_start; /* 0 none, 1 trace seconds, 2 a calendar time (made relative later) */
    int64_t seed, start;
    lucid_import_options opt;
    lucid_import_window win;
} import_args;

/* Parses the command line: -1 to go on, else the exit status (help printed,
 * or an error). */
static int parse_import_args(int argc, char **argv, import_args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *v;
        int64_t n;
        int got = 0, rc = 0;
        if (strcmp(argv[i], "--help") == 0) {
            import_usage(stdout);
            return 0;
        }
        if (strcmp(argv[i], "--sample-workload") == 0) {
            a->sample = 1;
        } else if (strcmp(argv[i], "--running") == 0) {
            a->opt.include_running = 1;
        } else if ((got = cli_option(argc, argv, &i, "--format", &v)) != 0) {
            a->format = v;
        } else if ((got = cli_option(argc, argv, &i, "--out", &v)) != 0) {
            a->out = v;
        } else if ((got = cli_option(argc, argv, &i, "--like", &v)) != 0) {
            a->like = v;
        } else if ((got = cli_option(argc, argv, &i, "--workload-from", &v)) != 0) {
            a->workload = v;
        } else if ((got = cli_option(argc, argv, &i, "--vc-size", &v)) != 0) {
            a->vc_sizes = v;
        } else if ((got = cli_option(argc, argv, &i, "--slurm-conf", &v)) != 0) {
            a->slurm_conf = v;
        } else if ((got = cli_option(argc, argv, &i, "--since", &v)) > 0) {
            rc = parse_when("--since", v, &a->win.since);
        } else if ((got = cli_option(argc, argv, &i, "--until", &v)) > 0) {
            rc = parse_when("--until", v, &a->win.until);
        } else if ((got = cli_option(argc, argv, &i, "--origin", &v)) > 0) {
            rc = parse_when("--origin", v, &a->win.origin);
        } else if ((got = cli_option(argc, argv, &i, "--now", &v)) > 0) {
            rc = parse_when("--now", v, &a->opt.now);
        } else if ((got = cli_option(argc, argv, &i, "--start", &v)) > 0) {
            a->have_start = 1;
            if (lucid_parse_i64(v, &a->start) < 0) {
                a->have_start = 2;
                if (lucid_time_parse(v, &a->start) < 0)
                    rc = cli_fail("--start: '%s' is neither seconds nor YYYY-MM-DD HH:MM:SS", v);
            }
        } else if ((got = cli_option(argc, argv, &i, "--seed", &v)) > 0) {
            rc = cli_int("--seed", v, &a->seed) < 0;
        } else if ((got = cli_option(argc, argv, &i, "--gpus-per-node", &v)) > 0) {
            rc = cli_int("--gpus-per-node", v, &n) < 0;
            if (rc == 0 && (n < 1 || n > 1024))
                rc = cli_fail("--gpus-per-node: %lld out of range 1..1024", (long long)n);
            a->opt.gpus_per_node = (int32_t)n;
        } else if ((got = cli_option(argc, argv, &i, "--vc-by", &v)) > 0) {
            a->opt.vc_by = v;
            if (strcmp(v, "partition") != 0 && strcmp(v, "account") != 0 &&
                strcmp(v, "queue") != 0)
                rc = cli_fail("--vc-by: '%s' is not partition, account (sacct) or queue (swf)", v);
        } else if ((got = cli_option(argc, argv, &i, "--attempts", &v)) > 0) {
            a->opt.attempts = v;
            if (strcmp(v, "sum") != 0 && strcmp(v, "span") != 0 && strcmp(v, "each") != 0)
                rc = cli_fail("--attempts: '%s' is not sum, span or each", v);
        } else if ((got = cli_option(argc, argv, &i, "--procs-per-gpu", &v)) > 0) {
            if (lucid_parse_f64(v, &a->opt.procs_per_gpu) < 0 || a->opt.procs_per_gpu <= 0 ||
                a->opt.procs_per_gpu > 1e6)
                rc = cli_fail("--procs-per-gpu: '%s' is not a positive number", v);
        } else if (got == 0 && argv[i][0] == '-' && argv[i][1] != '\0') {
            return cli_fail("trace import: unknown option '%s'", argv[i]) + 1;
        } else if (got == 0) {
            a->sources[a->nsources++] = argv[i];
        }
        if (got < 0)
            return 2; /* an option without its value: a usage error */
        if (rc)
            return 1;
    }
    if (!a->format || !a->out || a->nsources == 0) {
        import_usage(stderr);
        return 2;
    }
    a->opt.since = a->win.since;
    a->opt.until = a->win.until;
    return -1;
}

static const char *const import_files[] = {"trace.csv", "vc_config.csv", "experiment.ini",
                                           "MANIFEST"};

/* No command overwrites its own input: 1 (after printing) if a source is
 * one of the files the import would write. */
static int overwrites_input(const import_args *a)
{
    char dir_abs[PATH_MAX];
    if (!realpath(a->out, dir_abs))
        return 0; /* no folder yet: nothing in it can be a source */
    for (int s = 0; s < a->nsources; s++) {
        char real[PATH_MAX], mine[PATH_MAX + 32];
        if (!realpath(a->sources[s], real))
            continue; /* the converter reports it */
        for (int k = 0; k < 4; k++) {
            snprintf(mine, sizeof mine, "%s/%s", dir_abs, import_files[k]);
            if (strcmp(real, mine) == 0)
                return cli_fail("%s: is an input; choose another --out", mine);
        }
    }
    return 0;
}

/* Writes the four files whole or not at all: each to a temporary name,
 * renamed only when all are complete. */
static int write_folder(const lucid_import *imp, const import_args *a, const char *dir_abs,
                        const char *command, lucid_source_hashes *hashes)
{
    char tmp[4][PATH_MAX + 64], final[4][PATH_MAX + 64];
    FILE *f[4];
    int rc = 0;
    lucid_error err = {{0}};
    for (int k = 0; k < 4; k++) {
        snprintf(final[k], sizeof final[k], "%s/%s", dir_abs, import_files[k]);
        snprintf(tmp[k], sizeof tmp[k], "%s/.%s.%ld.tmp", dir_abs, import_files[k],
                 (long)getpid());
        f[k] = fopen(tmp[k], "w");
        if (!f[k] && rc == 0)
            rc = cli_fail("%s: cannot write: %s", tmp[k], strerror(errno));
    }
    if (rc == 0 && (lucid_import_write_trace(imp, &a->win, f[0]) < 0 ||
                    lucid_import_write_vcs(imp, f[1]) < 0))
        rc = cli_fail("%s: write error", dir_abs);
    if (rc == 0)
        rc = write_experiment(f[2], a->like, dir_abs, imp, a->start, a->have_start,
                              a->slurm_conf);
    if (rc == 0 && (lucid_source_hashes_wait(hashes, &err) < 0 ||
                    lucid_import_write_manifest(imp, &a->win, command, a->sources, a->nsources,
                                                hashes->hex ? hashes : NULL, f[3], &err) < 0))
        rc = cli_fail("%s", err.msg);
    for (int k = 0; k < 4; k++)
        if (f[k] && fclose(f[k]) != 0 && rc == 0)
            rc = cli_fail("%s: write error", tmp[k]);
    for (int k = 0; k < 4 && rc == 0; k++)
        if (rename(tmp[k], final[k]) < 0)
            rc = cli_fail("%s: cannot rename: %s", final[k], strerror(errno));
    if (rc)
        for (int k = 0; k < 4; k++)
            unlink(tmp[k]);
    return rc;
}

/* An import never sizes a VC silently: each size the sizing rule chose
 * (LUCID_IMPORT_TARGET_LOAD) and each VC asked for more than it can serve
 * is a warning with the offered load. */
static void warn_sizes(const lucid_import *imp)
{
    int32_t nvcs = imp->vc_names ? lucid_strtab_count(imp->vc_names) : 0;
    for (int32_t v = 0; imp->vc_load && v < nvcs; v++) {
        const char *name = lucid_strtab_get(imp->vc_names, v);
        double load = imp->vc_load[v];
        if (imp->vc_derived[v] && load != load)
            fprintf(stderr,
                    "lucid: warning: VC %s: the source gives no size; %lld GPUs, its largest "
                    "job's (one submission time: no offered load); --vc-size %s=GPUS sets it\n",
                    name, (long long)imp->vc_gpus[v], name);
        else if (imp->vc_derived[v])
            fprintf(stderr,
                    "lucid: warning: VC %s: the source gives no size; %lld GPUs by the sizing "
                    "rule (offered load %.2f, at most %.2f; docs/traces.md); --vc-size %s=GPUS "
                    "sets it\n",
                    name, (long long)imp->vc_gpus[v], load, LUCID_IMPORT_TARGET_LOAD, name);
        else if (load > 1)
            fprintf(stderr,
                    "lucid: warning: VC %s: offered load %.2f: its jobs ask for more than its "
                    "%lld GPUs can serve, so queues grow for as long as jobs arrive\n",
                    name, load, (long long)imp->vc_gpus[v]);
    }
}

static int import(int argc, char **argv, const char *command)
{
    import_args a = {.seed = 1, .start = -1,
                     .opt = {.since = INT64_MIN, .until = INT64_MAX},
                     .win = {INT64_MIN, INT64_MAX, INT64_MIN}};
    a.sources = calloc((size_t)argc + 1, sizeof *a.sources);
    if (!a.sources)
        return cli_fail("out of memory");
    int rc = parse_import_args(argc, argv, &a);
    const lucid_import_format *fmt = rc < 0 ? lucid_import_find(a.format) : NULL;
    if (rc < 0 && !fmt)
        rc = cli_fail("trace import: unknown format '%s' (see lucid trace import --help)",
                      a.format);
    if (rc < 0 && overwrites_input(&a))
        rc = 1;
    if (rc >= 0) {
        free(a.sources);
        return rc;
    }
    lucid_import imp;
    lucid_import_init(&imp, fmt);
    lucid_error err = {{0}};
    char dir_abs[PATH_MAX];
    rc = 0;
    /* Hash the sources while the converter reads them (2 cores: the
     * MANIFEST's checksums cost no wall time); -1: hashed at the end. */
    lucid_source_hashes hashes;
    if (lucid_source_hashes_start(&hashes, (const char *const *)a.sources, a.nsources) < 0)
        memset(&hashes, 0, sizeof hashes);
    if (fmt->read(&imp, a.sources, a.nsources, &a.opt, &err) < 0 ||
        (a.vc_sizes && lucid_import_set_vc_sizes(&imp, a.vc_sizes, &err) < 0) ||
        lucid_import_finish(&imp, &a.win, &err) < 0 ||
        (a.workload &&
         lucid_import_workload_from(&imp, a.workload, a.sample, (uint64_t)a.seed, &err) < 0))
        rc = cli_fail("%s", err.msg);
    /* The folder is made only once the sources have been read cleanly. */
    else if ((mkdir(a.out, 0777) < 0 && errno != EEXIST) || !realpath(a.out, dir_abs))
        rc = cli_fail("%s: cannot create: %s", a.out, strerror(errno));
    else if (a.have_start == 2 && (a.start -= a.win.origin) < 0)
        rc = cli_fail("--start is before --origin");
    else if (a.have_start == 1 && a.start < 0)
        rc = cli_fail("--start: %lld is negative", (long long)a.start);
    else
        rc = write_folder(&imp, &a, dir_abs, command, &hashes);
    lucid_source_hashes_free(&hashes);
    if (rc == 0) {
        printf("imported %zu jobs (%lld records read) into %s\n", imp.njobs,
               (long long)imp.records, a.out);
        warn_sizes(&imp);
    }
    lucid_import_free(&imp);
    free(a.sources);
    return rc;
}

int cmd_trace(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "synth") == 0)
        return synth(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "import") == 0) {
        /* The command line for the MANIFEST, quoted for a POSIX shell where
         * an argument needs it, so it can be pasted to redo the import. */
        size_t len = 16;
        for (int i = 0; i < argc; i++)
            len += 4 * strlen(argv[i]) + 3;
        char *command = malloc(len);
        if (!command)
            return cli_fail("out of memory");
        char *p = command + sprintf(command, "lucid");
        for (int i = 0; i < argc; i++) {
            int plain = *argv[i] != '\0';
            for (const char *c = argv[i]; *c; c++)
                plain &= strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                "0123456789-_./=:,+@%", *c) != NULL;
            *p++ = ' ';
            if (plain) {
                p += sprintf(p, "%s", argv[i]);
                continue;
            }
            *p++ = '\'';
            for (const char *c = argv[i]; *c; c++)
                p += *c == '\'' ? sprintf(p, "'\\''") : sprintf(p, "%c", *c);
            *p++ = '\'';
            *p = '\0';
        }
        int rc = import(argc - 1, argv + 1, command);
        free(command);
        return rc;
    }
    if (argc >= 2 && !cli_is_help(argv[1]))
        return cli_usage_error("trace: unknown subcommand '%s' (see lucid trace --help)", argv[1]);
    FILE *out = argc >= 2 ? stdout : stderr;
    fputs("usage: lucid trace synth --out DIR [options]\n"
          "       lucid trace import --format F SRC... --out DIR [options]\n"
          "\n"
          "  synth    a synthetic trace drawn from a base trace (the bundled Venus one)\n"
          "           at a chosen size and load        (lucid trace synth --help)\n"
          "  import   a public trace (helios, itp, philly, pai2020, acme, swf), Slurm\n"
          "           accounting (sacct) or lucidd's history, as a folder that\n"
          "           `lucid simulate DIR/experiment.ini` runs with all six policies\n"
          "                                            (lucid trace import --help)\n",
          out);
    return argc >= 2 ? 0 : 2;
}
