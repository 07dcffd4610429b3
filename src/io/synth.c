/* synth.c — Helios-like synthetic traces of any size for scale tests.
 *
 * Each job copies a uniformly drawn job of a base trace (its GPU count,
 * duration and workload columns together, so their correlation survives);
 * arrivals are a Poisson process whose rate makes the offered load
 * (GPU-seconds asked per GPU-second available) equal the target; VCs keep
 * the base trace's relative sizes.  Estimates are the true duration times
 * log-normal noise: a stand-in for a duration model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/atomic.h"
#include "lucid/trace.h"

static double normal(lucid_rng *rng)
{
    double u1 = lucid_rng_unit(rng), u2 = lucid_rng_unit(rng);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static int32_t *vc_sizes(const lucid_synth_config *cfg, const lucid_vcs *base)
{
    int32_t *sizes = calloc((size_t)cfg->vcs + 1, sizeof *sizes);
    if (!sizes)
        return NULL;
    /* Base VC sizes, largest first, cycled if more VCs are asked for. */
    int32_t *order = malloc(((size_t)base->count + 1) * sizeof *order);
    if (!order) {
        free(sizes);
        return NULL;
    }
    for (int32_t i = 0; i < base->count; i++)
        order[i] = base->nodes[i];
    for (int32_t i = 1; i < base->count; i++)
        for (int32_t k = i; k > 0 && order[k] > order[k - 1]; k--) {
            int32_t t = order[k];
            order[k] = order[k - 1];
            order[k - 1] = t;
        }
    double weight_sum = 0;
    for (int32_t v = 0; v < cfg->vcs; v++)
        weight_sum += order[v % base->count] > 0 ? order[v % base->count] : 1;
    int32_t assigned = 0;
    for (int32_t v = 0; v < cfg->vcs; v++) {
        double w = order[v % base->count] > 0 ? order[v % base->count] : 1;
        sizes[v] = (int32_t)floor((double)cfg->nodes * w / weight_sum);
        if (sizes[v] < 1)
            sizes[v] = 1;
        assigned += sizes[v];
    }
    sizes[0] += cfg->nodes - assigned; /* rounding goes to the largest VC */
    if (sizes[0] < 1)
        sizes[0] = 1;
    free(order);
    return sizes;
}

int32_t *lucid_synth_vc_sizes(const lucid_synth_config *cfg, const lucid_vcs *base_vcs)
{
    return vc_sizes(cfg, base_vcs);
}

static const char *str_or_empty(const lucid_trace *t, int32_t id)
{
    return id >= 0 ? lucid_strtab_get(t->strings, id) : "";
}

static void print_metric(FILE *f, double v)
{
    if (v == v)
        fprintf(f, "%g", v);
}

int lucid_synth_write_files(const lucid_synth_config *cfg, const lucid_trace *base,
                            const lucid_vcs *base_vcs, FILE *trace, FILE *vcs, FILE *est,
                            lucid_error *err)
{
    if (cfg->jobs < 1 || cfg->nodes < 1 || cfg->vcs < 1 || cfg->vcs > cfg->nodes ||
        cfg->load <= 0 || cfg->gpus_per_node < 1)
        return lucid_error_set(err,
                               "need jobs >= 1, 1 <= vcs <= nodes and load > 0 (got %lld jobs, "
                               "%d VCs, %d nodes)",
                               (long long)cfg->jobs, cfg->vcs, cfg->nodes);
    int32_t *sizes = vc_sizes(cfg, base_vcs);
    if (!sizes)
        return lucid_error_set(err, "out of memory");
    double mean_work = 0;
    for (size_t i = 0; i < base->njobs; i++)
        mean_work += (double)base->jobs[i].gpu_num * (double)base->jobs[i].duration;
    mean_work /= (double)base->njobs;
    double total_gpus = (double)cfg->nodes * cfg->gpus_per_node;
    double rate = cfg->load * total_gpus / mean_work; /* jobs per second */
    /* Cumulative VC weights for drawing a job's VC. */
    int64_t *cumulative = malloc(((size_t)cfg->vcs + 1) * sizeof *cumulative);
    if (!cumulative) {
        free(sizes);
        return lucid_error_set(err, "out of memory");
    }
    int64_t sum = 0;
    fputs("vc,nodes\n", vcs);
    for (int32_t v = 0; v < cfg->vcs; v++) {
        sum += sizes[v];
        cumulative[v] = sum;
        fprintf(vcs, "vc%04d,%d\n", v, sizes[v]);
    }
    lucid_rng rng;
    lucid_rng_seed(&rng, cfg->seed);
    fputs("job_id,user,vc,gpu_num,cpu_num,submit_time,duration,dataset,model,batchsize,amp,"
          "speed,gpu_util,gmem_util,gmem\n",
          trace);
    fputs("job_id,priority\n", est);
    double clock = 0;
    for (int64_t k = 0; k < cfg->jobs; k++) {
        clock += -log(1.0 - lucid_rng_unit(&rng)) / rate;
        uint64_t pick = lucid_rng_below(&rng, (uint64_t)sum);
        int32_t vc = 0;
        while ((int64_t)pick >= cumulative[vc])
            vc++;
        int64_t capacity = (int64_t)sizes[vc] * cfg->gpus_per_node;
        const lucid_job *j = NULL;
        for (int tries = 0; tries < 1000; tries++) {
            j = &base->jobs[lucid_rng_below(&rng, base->njobs)];
            if (j->gpu_num <= capacity)
                break;
        }
        int32_t gpus = j->gpu_num <= capacity ? j->gpu_num : (int32_t)capacity;
        fprintf(trace, "%lld,%s,vc%04d,%d,%d,%lld,%lld,%s,%s,", (long long)(k + 1),
                str_or_empty(base, j->user), vc, gpus, j->cpu_num, (long long)floor(clock),
                (long long)j->duration, str_or_empty(base, j->workload.dataset),
                str_or_empty(base, j->workload.model));
        if (j->workload.batchsize >= 0)
            fprintf(trace, "%d", j->workload.batchsize);
        fputc(',', trace);
        if (j->workload.amp >= 0)
            fprintf(trace, "%d", j->workload.amp);
        fputc(',', trace);
        print_metric(trace, j->speed);
        fputc(',', trace);
        print_metric(trace, j->gpu_util);
        fputc(',', trace);
        print_metric(trace, j->gmem_util);
        fputc(',', trace);
        print_metric(trace, j->gmem);
        fputc('\n', trace);
        double noisy = (double)j->duration * exp(cfg->estimate_noise * normal(&rng));
        fprintf(est, "%lld,%.1f\n", (long long)(k + 1), noisy);
    }
    free(cumulative);
    free(sizes);
    return 0;
}

int lucid_synth_write(const lucid_synth_config *cfg, const lucid_trace *base,
                      const lucid_vcs *base_vcs, const char *dir, lucid_error *err)
{
    static const char *const names[3] = {"trace.csv", "vc_config.csv", "estimates.csv"};
    lucid_outfile files[3];
    memset(files, 0, sizeof files);
    int rc = 0;
    for (int k = 0; k < 3 && rc == 0; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        if (!lucid_outfile_open(&files[k], path, err))
            rc = -1;
    }
    if (rc == 0)
        rc = lucid_synth_write_files(cfg, base, base_vcs, files[0].f, files[1].f, files[2].f, err);
    for (int k = 0; k < 3; k++)
        if (rc == 0)
            rc = lucid_outfile_commit(&files[k], err);
        else
            lucid_outfile_abort(&files[k]);
    return rc;
}
