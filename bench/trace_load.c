/* trace_load.c — times the trace loader (issue 14's yardstick: one awk pass
 * over the same file).  Usage: trace_load TRACE.csv VCS.csv [RUNS [THREADS]]
 * Prints the median wall time of RUNS loads (default 5) and the rate;
 * THREADS (default 1) as lucid_trace_load_threads takes it. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "lucid/trace.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: trace_load TRACE.csv VCS.csv [RUNS [THREADS]]\n");
        return 2;
    }
    int runs = argc > 3 ? atoi(argv[3]) : 5;
    if (runs < 1 || runs > 100)
        runs = 5;
    int threads = argc > 4 ? atoi(argv[4]) : 1;
    lucid_error err = {{0}};
    lucid_vcs vcs;
    if (lucid_vcs_load(&vcs, argv[2], &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    double times[100];
    size_t jobs = 0;
    for (int r = 0; r < runs; r++) {
        lucid_trace trace;
        double t0 = now();
        if (lucid_trace_load_threads(&trace, argv[1], &vcs, threads, &err) < 0) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        times[r] = now() - t0;
        jobs = trace.njobs;
        lucid_trace_free(&trace);
    }
    qsort(times, (size_t)runs, sizeof *times, by_value);
    double median = times[runs / 2];
    printf("%zu jobs: median %.3f s of %d loads, %d thread%s (%.0f jobs/s)\n", jobs, median, runs,
           threads, threads == 1 ? "" : "s", (double)jobs / median);
    lucid_vcs_free(&vcs);
    return 0;
}
