/* cmd_trace.c — `lucid trace synth`: synthetic Helios-like traces. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "lucid/csv.h"
#include "lucid/trace.h"

static const char usage_text[] =
    "usage: lucid trace synth --out DIR [options]\n"
    "\n"
    "Writes DIR/trace.csv, DIR/vc_config.csv, DIR/estimates.csv and DIR/experiment.ini:\n"
    "jobs drawn from a base trace (GPUs, duration and workload together), Poisson\n"
    "arrivals at the rate giving the target load, VCs in the base trace's proportions.\n"
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
    if (mkdir(out, 0777) < 0 && errno != EEXIST)
        return cli_fail("%s: cannot create: %s", out, strerror(errno));
    lucid_error err = {{0}};
    lucid_vcs vcs;
    lucid_trace base;
    if (lucid_vcs_load(&vcs, from_vcs, &err) < 0)
        return cli_fail("%s", err.msg);
    if (lucid_trace_load(&base, from, &vcs, &err) < 0) {
        lucid_vcs_free(&vcs);
        return cli_fail("%s", err.msg);
    }
    int rc = lucid_synth_write(&cfg, &base, &vcs, out, &err);
    lucid_trace_free(&base);
    lucid_vcs_free(&vcs);
    if (rc < 0)
        return cli_fail("%s", err.msg);
    int32_t profiler_nodes = (int32_t)((2LL * cfg.nodes + 134) / 135);
    if (profiler_nodes < 1)
        profiler_nodes = 1;
    int32_t profiler_factor = profiler_nodes >= 8 ? 1 : 8 / profiler_nodes;
    char path[4096];
    snprintf(path, sizeof path, "%s/experiment.ini", out);
    FILE *f = fopen(path, "w");
    if (!f)
        return cli_fail("%s: cannot write: %s", path, strerror(errno));
    fprintf(f,
            "# Synthetic trace: %lld jobs, %d nodes, %d VCs, load %.2f, seed %llu\n"
            "[trace]\njobs = trace.csv\nvcs = vc_config.csv\n\n"
            "[simulate]\npolicies = all\nout = results\n\n"
            "[qssf]\nestimates = estimates.csv\n\n"
            "[lucid]\nestimates = estimates.csv\n"
            "# The profiling cluster keeps Venus's proportion (2 of 135 nodes); its GPU\n"
            "# limit is profiler_nodes x profiler_factor.\nprofiler_nodes = %d\nprofiler_factor = %d\n",
            (long long)cfg.jobs, cfg.nodes, cfg.vcs, cfg.load, (unsigned long long)cfg.seed,
            profiler_nodes, profiler_factor);
    /* The base trace's sharing labels and co-location pairs, when beside it. */
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
    fclose(f);
    printf("wrote %s/{trace.csv,vc_config.csv,estimates.csv,experiment.ini}\n", out);
    return 0;
}

int cmd_trace(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "synth") == 0)
        return synth(argc - 1, argv + 1);
    if (argc >= 2 && !cli_is_help(argv[1]))
        return cli_usage_error("trace: unknown subcommand '%s' (see lucid trace --help)", argv[1]);
    fputs(usage_text, argc >= 2 ? stdout : stderr);
    return argc >= 2 ? 0 : 2;
}
