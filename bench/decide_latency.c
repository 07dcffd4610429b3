/* decide_latency.c — lucidd's decision step on a simulated cluster: 1,000
 * nodes x 8 GPUs kept busy, 10,000 jobs waiting, a few jobs ending between
 * decisions.  Reports p50 / p99 / max of one decide_main() call, with the
 * packing switch off (strict order) and on (every job tried, packing first)
 * under lucidd's default pair rule (score sum 2, priority ratio 2), and the
 * worst cases for packing, where no running job may take a partner: a pair
 * rule nobody satisfies (score sum 0, priority ratio 0), and every node
 * holding a release Slurm has not started (all candidates ineligible);
 * then with the site's rules, and with lucidd's Slurm pair rule as well
 * (a pair only where Slurm would start the packed job: fit_pack_ok).
 *   decide_latency [nodes] [pending] [steps] [seed]
 * Results and the command that made them: docs/live.md. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decide_bench.h"

typedef struct bench_case {
    const char *name;
    int packing, score_sum;
    double priority_ratio;
    int settling; /* every node has a release Slurm has not started: no pair may form */
    int site;     /* every job asks CPUs and memory (fit.h), every node's room is checked,
                   * and one node in seven with free GPUs has too few CPUs for any job */
    int slurm;    /* lucidd's Slurm pair rule too (fit_pack_ok): a node's free GPUs as
                   * Slurm's, 8 share units on two nodes in three, none on the third */
} bench_case;

static void run(int nnodes, int npending, int steps, uint64_t seed, const bench_case *bc)
{
    lucid_rng rng;
    lucid_rng_seed(&rng, seed);
    decide_node *nodes = calloc((size_t)nnodes, sizeof *nodes);
    decide_job *pending = calloc((size_t)npending, sizeof *pending);
    decide_job *work = calloc((size_t)npending, sizeof *work);
    decide_result *results = calloc((size_t)npending, sizeof *results);
    int max_running = nnodes * 8;
    decide_running *running = calloc((size_t)max_running, sizeof *running);
    double *latency = calloc((size_t)steps, sizeof *latency);
    if (!nodes || !pending || !work || !results || !running || !latency) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    /* Busy cluster: every node runs single-node jobs; 2 GPUs per node free
     * on one node in ten, so a few placements succeed each step. */
    int nrunning = 0;
    for (int n = 0; n < nnodes; n++) {
        snprintf(nodes[n].name, sizeof nodes[n].name, "n%d", n + 1);
        nodes[n].total_gpus = 8;
        nodes[n].free_gpus = n % 10 == 0 ? 2 : 0;
        for (int used = 0; used < 8 - nodes[n].free_gpus && nrunning < max_running;) {
            decide_running *r = &running[nrunning++];
            r->job = random_job(&rng, (uint32_t)(1000000 + nrunning));
            r->job.gpus = 8 - nodes[n].free_gpus - used >= 4 ? 4 : 8 - nodes[n].free_gpus - used;
            r->job.nodes = 1;
            r->node = n;
            snprintf(r->gpu_list, sizeof r->gpu_list, "%d-%d", used, used + r->job.gpus - 1);
            used += r->job.gpus;
        }
    }
    for (int j = 0; j < npending; j++)
        pending[j] = random_job(&rng, (uint32_t)(j + 1));
    for (int s = 0; s < steps; s++) {
        /* Between decisions a few jobs end somewhere: free GPUs appear. */
        for (int k = 0; k < 5; k++) {
            decide_node *node = &nodes[lucid_rng_below(&rng, (uint64_t)nnodes)];
            if (node->free_gpus < 8)
                node->free_gpus++;
        }
        memcpy(work, pending, (size_t)npending * sizeof *work);
        static const fit_request site_request = {.cpus_node = 4, .mem_node_mib = 16000};
        for (int n = 0; n < nnodes; n++) {
            nodes[n].settling = bc->settling;
            nodes[n].slurm_free = nodes[n].free_gpus;
            nodes[n].share_free = n % 3 == 0 ? -1 : 8;
            nodes[n].room = (fit_room){.cpus_free = n % 7 == 0 ? 2 : 4 * nodes[n].free_gpus + 4,
                                       .cpus_total = 64,
                                       .mem_free_mib = 16000 * (int64_t)(nodes[n].free_gpus + 1)};
        }
        if (bc->site)
            for (int j = 0; j < npending; j++)
                work[j].fit = &site_request;
        decide_params params = {.packing = bc->packing, .gpu_memory_mib = 24576,
                                .score_sum = bc->score_sum,
                                .priority_ratio = bc->priority_ratio,
                                .slurm_packing = bc->slurm};
        double t0 = now_s();
        decide_main(work, npending, running, nrunning, nodes, nnodes, &params, results);
        latency[s] = now_s() - t0;
        /* Started jobs are replaced by new arrivals: the queue stays full. */
        for (int j = 0; j < npending; j++)
            if (results[j].start)
                for (int p = 0; p < npending; p++)
                    if (pending[p].id == results[j].id) {
                        pending[p] = random_job(&rng, (uint32_t)(npending + s * 1000 + j + 1));
                        break;
                    }
    }
    qsort(latency, (size_t)steps, sizeof *latency, cmp_double);
    printf("nodes=%d pending=%d running=%d steps=%d %-40s p50 %.3f ms  p99 %.3f ms  max %.3f ms\n",
           nnodes, npending, nrunning, steps, bc->name, 1e3 * latency[steps / 2],
           1e3 * latency[(steps * 99 + 99) / 100 - 1], 1e3 * latency[steps - 1]);
    free(nodes);
    free(pending);
    free(work);
    free(results);
    free(running);
    free(latency);
}

int main(int argc, char **argv)
{
    int nnodes, npending, steps;
    uint64_t seed;
    if (bench_args(argc, argv, "decide_latency", 200, &nnodes, &npending, &steps, &seed) != 0)
        return 2;
    /* lucidd's defaults (lucidd.c): score sum 2, priority ratio 2. */
    static const bench_case cases[] = {
        {"packing=off:", 0, 2, 2, 0, 0, 0},
        {"packing=on  (defaults 2/2):", 1, 2, 2, 0, 0, 0},
        {"packing=on  (no partner: rule 0/0):", 1, 0, 0, 0, 0, 0},
        {"packing=on  (no partner: all settling):", 1, 2, 2, 1, 0, 0},
        {"packing=off, site rules (CPUs, memory):", 0, 2, 2, 0, 1, 0},
        {"packing=on, site rules (CPUs, memory):", 1, 2, 2, 0, 1, 0},
        {"packing=on, site + Slurm's pair rule:", 1, 2, 2, 0, 1, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        run(nnodes, npending, steps, seed, &cases[c]);
    return 0;
}
