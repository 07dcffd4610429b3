/* decide_bench.h — what the benchmarks of lucidd's decision step share
 * (bench/decide_latency.c, bench/eta_latency.c): the clock they read and
 * the random waiting jobs they queue. */
#ifndef LUCID_DECIDE_BENCH_H
#define LUCID_DECIDE_BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../src/daemon/decide.h"
#include "lucid/util.h"

/* CPU time of this thread: the development machine is shared, and wall
 * time there measures the neighbours; on an idle core the two agree. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The benches' arguments: [nodes] [pending] [steps] [seed]; 0, or 2 after
 * printing the usage line (`name`). */
static int bench_args(int argc, char **argv, const char *name, int default_steps, int *nnodes,
                      int *npending, int *steps, uint64_t *seed)
{
    *nnodes = argc > 1 ? atoi(argv[1]) : 1000;
    *npending = argc > 2 ? atoi(argv[2]) : 10000;
    *steps = argc > 3 ? atoi(argv[3]) : default_steps;
    *seed = argc > 4 ? strtoull(argv[4], NULL, 10) : 42;
    if (*nnodes <= 0 || *npending <= 0 || *steps <= 0) {
        fprintf(stderr, "usage: %s [nodes] [pending] [steps] [seed]\n", name);
        return 2;
    }
    return 0;
}

static const int sizes[] = {1, 1, 1, 2, 2, 4, 4, 8, 8, 16, 32};

/* 1-32 GPUs, an estimate of 1 min to 1 day, priority estimate x GPUs. */
static decide_job random_job(lucid_rng *rng, uint32_t id)
{
    decide_job job = {.id = id};
    job.gpus = sizes[lucid_rng_below(rng, sizeof sizes / sizeof sizes[0])];
    job.nodes = job.gpus > 8 ? job.gpus / 8 : 1;
    job.estimate_s = (double)(60 + lucid_rng_below(rng, 86400));
    job.priority = job.estimate_s * job.gpus;
    job.sharing_score = (int)lucid_rng_below(rng, 3);
    job.gmem_mib = (double)(1000 + lucid_rng_below(rng, 20000));
    return job;
}

#endif
