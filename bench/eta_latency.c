/* eta_latency.c — lucidd's start-time estimates (decide_predict, the core's
 * lucid_eta_predict on a picture of the decision) for a full queue: 1,000
 * nodes x 8 GPUs kept busy by single-node jobs with duration estimates and
 * start times, 10,000 jobs waiting (1-32 GPUs), a ratio table of 2,000
 * actual/estimate ratios.  Reports p50 / p99 / max CPU time of one
 * prediction of every waiting job's P10/P50/P90, and of one decide_main()
 * with backfill=easy (the reservation built through the pass's hooks).
 *   eta_latency [nodes] [pending] [steps] [seed]
 * Results and the command that made them: docs/live.md. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decide_bench.h"
#include "lucid/backfill.h"
#include "lucid/eta.h"

static void report(const char *name, double *t, int steps, int nnodes, int npending, int nbusy)
{
    qsort(t, (size_t)steps, sizeof *t, cmp_double);
    printf("nodes=%d pending=%d busy=%d steps=%d %-26s p50 %.3f ms  p99 %.3f ms  max %.3f ms\n",
           nnodes, npending, nbusy, steps, name, 1e3 * t[steps / 2],
           1e3 * t[(steps * 99 + 99) / 100 - 1], 1e3 * t[steps - 1]);
}

int main(int argc, char **argv)
{
    int nnodes, npending, steps;
    uint64_t seed;
    if (bench_args(argc, argv, "eta_latency", 50, &nnodes, &npending, &steps, &seed) != 0)
        return 2;
    lucid_rng rng;
    lucid_rng_seed(&rng, seed);
    const int64_t now = 1700000000;
    decide_node *nodes = calloc((size_t)nnodes, sizeof *nodes);
    decide_node *work_nodes = calloc((size_t)nnodes, sizeof *work_nodes);
    decide_busy *busy = calloc((size_t)nnodes * 8, sizeof *busy);
    decide_job *pending = calloc((size_t)npending, sizeof *pending);
    decide_job *work = calloc((size_t)npending, sizeof *work);
    decide_eta *eta = calloc((size_t)npending, sizeof *eta);
    decide_result *results = calloc((size_t)npending, sizeof *results);
    double *t_predict = calloc((size_t)steps, sizeof *t_predict);
    double *t_backfill = calloc((size_t)steps, sizeof *t_backfill);
    if (!nodes || !work_nodes || !busy || !pending || !work || !eta || !results || !t_predict ||
        !t_backfill) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    /* Busy cluster: 4-GPU jobs (2 per node), 2 GPUs free on one node in ten. */
    int nbusy = 0;
    for (int n = 0; n < nnodes; n++) {
        snprintf(nodes[n].name, sizeof nodes[n].name, "n%d", n + 1);
        nodes[n].total_gpus = 8;
        nodes[n].free_gpus = n % 10 == 0 ? 2 : 0;
        for (int used = 0; used < 8 - nodes[n].free_gpus;) {
            int g = 8 - nodes[n].free_gpus - used >= 4 ? 4 : 8 - nodes[n].free_gpus - used;
            double est = (double)(60 + lucid_rng_below(&rng, 86400));
            busy[nbusy] = (decide_busy){.id = (uint32_t)(1000000 + nbusy), .gpus = g,
                                        .nnodes = 1, .node = {n}, .estimate_s = est,
                                        .start = now - (int64_t)lucid_rng_below(&rng, (uint64_t)(2 * est))};
            nbusy++;
            used += g;
        }
    }
    for (int j = 0; j < npending; j++)
        pending[j] = random_job(&rng, (uint32_t)(j + 1));
    /* Ratios actual/estimate of ended jobs: log-normal around 0.8. */
    lucid_eta_table table = {0};
    for (int i = 0; i < 2000; i++) {
        double u1 = ((double)lucid_rng_below(&rng, 1000000) + 0.5) / 1e6;
        double u2 = ((double)lucid_rng_below(&rng, 1000000) + 0.5) / 1e6;
        double z = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
        lucid_eta_table_add(&table, 0.8 * exp(z));
    }
    decide_horizon horizon = {.now = now, .busy = busy, .nbusy = nbusy, .table = &table};
    for (int s = 0; s < steps; s++) {
        memcpy(work, pending, (size_t)npending * sizeof *work);
        decide_params params = {.packing = 0};
        double t0 = now_s();
        if (decide_predict(work, npending, 0, nodes, nnodes, &params, &horizon, eta) < 0) {
            fprintf(stderr, "out of memory\n");
            return 1;
        }
        t_predict[s] = now_s() - t0;
        memcpy(work, pending, (size_t)npending * sizeof *work);
        memcpy(work_nodes, nodes, (size_t)nnodes * sizeof *work_nodes);
        decide_params bf = {.packing = 0, .gpu_memory_mib = 24576, .score_sum = 2,
                            .priority_ratio = 2, .backfill = LUCID_BACKFILL_EASY,
                            .backfill_margin = 1.2, .horizon = &horizon};
        t0 = now_s();
        decide_main(work, npending, NULL, 0, work_nodes, nnodes, &bf, results);
        t_backfill[s] = now_s() - t0;
        /* A new arrival replaces a random job: the queue changes each step. */
        pending[lucid_rng_below(&rng, (uint64_t)npending)] =
            random_job(&rng, (uint32_t)(npending + s + 1));
    }
    long predicted = 0;
    for (int j = 0; j < npending; j++)
        predicted += eta[j].p50 >= now;
    report("predict (P10/P50/P90):", t_predict, steps, nnodes, npending, nbusy);
    report("decide_main backfill=easy:", t_backfill, steps, nnodes, npending, nbusy);
    printf("jobs with a start estimate: %ld of %d\n", predicted, npending);
    lucid_eta_table_free(&table);
    free(nodes);
    free(work_nodes);
    free(busy);
    free(pending);
    free(work);
    free(eta);
    free(results);
    free(t_predict);
    free(t_backfill);
    return 0;
}
