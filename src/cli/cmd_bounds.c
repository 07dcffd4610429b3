/* cmd_bounds.c — `lucid bounds TRACE`: the floors on the average JCT that
 * no schedule can beat on a trace, with what each assumes (bounds.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "lucid/bounds.h"
#include "lucid/csv.h"
#include "lucid/trace.h"

static const char usage_text[] =
    "usage: lucid bounds TRACE [--vcs VC_CONFIG] [--gpus-per-node N]\n"
    "\n"
    "Prints floors on the average JCT of TRACE (seconds) and what each assumes:\n"
    "  mean duration     every schedule that keeps job durations (all policies)\n"
    "  per-VC relaxation each VC as one machine of its GPUs, preemptive SRPT on\n"
    "                    GPU-seconds: schedules that run jobs only in their VC and\n"
    "                    never share a GPU (FIFO, SJF, SRTF, QSSF, Tiresias)\n"
    "  pooled relaxation the same over all GPUs: any schedule without packing\n"
    "VC_CONFIG defaults to vc_config.csv beside TRACE.\n";

int cmd_bounds(int argc, char **argv)
{
    const char *trace_path = NULL, *vcs_path = NULL;
    int64_t gpus_per_node = 8;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int got;
        if (strcmp(argv[i], "--help") == 0) {
            fputs(usage_text, stdout);
            return 0;
        }
        if ((got = cli_option(argc, argv, &i, "--vcs", &v)) != 0) {
            if (got < 0)
                return 2;
            vcs_path = v;
        } else if ((got = cli_option(argc, argv, &i, "--gpus-per-node", &v)) != 0) {
            if (got < 0 || cli_int("--gpus-per-node", v, &gpus_per_node) < 0)
                return 2;
            if (gpus_per_node < 1 || gpus_per_node > 1024)
                return cli_fail("--gpus-per-node: %lld out of range 1..1024",
                                (long long)gpus_per_node) + 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_fail("bounds: unknown option '%s'", argv[i]) + 1;
        } else if (!trace_path) {
            trace_path = argv[i];
        } else {
            return cli_fail("bounds: one trace at a time ('%s')", argv[i]) + 1;
        }
    }
    if (!trace_path) {
        fputs(usage_text, stderr);
        return 2;
    }
    char side[4096];
    if (!vcs_path) {
        const char *slash = strrchr(trace_path, '/');
        int dir = slash ? (int)(slash - trace_path) : 1;
        snprintf(side, sizeof side, "%.*s/vc_config.csv", dir, slash ? trace_path : ".");
        vcs_path = side;
    }
    lucid_error err = {{0}};
    lucid_vcs vcs;
    lucid_trace trace;
    lucid_bounds b;
    if (lucid_vcs_load(&vcs, vcs_path, &err) < 0)
        return cli_fail("%s", err.msg);
    if (lucid_trace_load(&trace, trace_path, &vcs, &err) < 0) {
        lucid_vcs_free(&vcs);
        return cli_fail("%s", err.msg);
    }
    if (lucid_bounds_compute(&trace, &vcs, (int32_t)gpus_per_node, &b, &err) < 0) {
        lucid_trace_free(&trace);
        lucid_vcs_free(&vcs);
        return cli_fail("%s", err.msg);
    }
    printf("%s: %lld jobs, %d VCs, %lld GPUs\n\n", trace_path, (long long)b.jobs, vcs.count,
           (long long)b.gpus);
    printf("average JCT floors (s):\n");
    printf("  mean duration       %12.1f  any schedule that keeps durations: a JCT is a wait\n"
           "                                    (>= 0) plus the job's duration\n",
           b.mean_duration);
    printf("  per-VC relaxation   %12.1f  jobs only in their VC, no packing: each VC as one\n"
           "                                    machine of its GPUs, preemptive SRPT on GPU-seconds\n"
           "                                    (optimal there), at least each VC's mean duration\n",
           b.per_vc);
    printf("  pooled relaxation   %12.1f  any schedule without packing: all GPUs as one machine\n",
           b.pooled);
    printf("\n%-12s %8s %6s %14s %14s\n", "vc", "jobs", "GPUs", "mean duration", "relaxation");
    for (int32_t v = 0; v < b.nvcs; v++)
        if (b.vc[v].jobs > 0)
            printf("%-12s %8lld %6lld %14.1f %14.1f\n", lucid_vcs_name(&vcs, v),
                   (long long)b.vc[v].jobs, (long long)b.vc[v].gpus, b.vc[v].mean_duration,
                   b.vc[v].relaxation);
    if (trace.skipped_cpu_jobs)
        printf("\n(%zu CPU-only rows of the trace left out, as the simulator does)\n",
               trace.skipped_cpu_jobs);
    lucid_bounds_free(&b);
    lucid_trace_free(&trace);
    lucid_vcs_free(&vcs);
    return 0;
}
