/* gpumetrics.h — non-intrusive per-job GPU sampling for the profiler.
 *
 * Lucid profiles a job without touching its code: while it runs on the
 * profiling partition, the daemon samples the GPUs it holds (utilisation %,
 * memory used in MiB, memory-controller utilisation %) and keeps the mean as
 * the job's profile.  Two backends:
 *   - "nvml": libnvidia-ml.so.1 loaded with dlopen at run time (no link-time
 *     dependency: the program starts where NVIDIA's driver is absent);
 *   - "test-file": for machines without GPUs, samples are read from a file
 *     per job, DIR/<job_id>.gpu, whose last line is the current sample:
 *     "gpu_util_pct gmem_used_mib gmem_util_pct" (blank and '#' lines ignored).
 * When neither is available the handle reports "unavailable" and every
 * sample fails with a message, so the caller can carry on without metrics. */
#ifndef LUCID_GPUMETRICS_H
#define LUCID_GPUMETRICS_H

#include <stdint.h>

#include "lucid/error.h"

typedef struct lucid_gpu_sample {
    double gpu_util_pct;  /* mean over the job's GPUs */
    double gmem_used_mib; /* the largest over the job's GPUs (what must fit in one GPU) */
    double gmem_util_pct; /* mean over the job's GPUs */
} lucid_gpu_sample;

typedef enum lucid_gpumetrics_kind {
    LUCID_GPUMETRICS_UNAVAILABLE = 0,
    LUCID_GPUMETRICS_NVML,
    LUCID_GPUMETRICS_TEST_FILE,
} lucid_gpumetrics_kind;

typedef struct lucid_gpumetrics lucid_gpumetrics;

/* NVML through dlopen of `library` (NULL: "libnvidia-ml.so.1").  NULL with a
 * message when the library, a symbol or the driver is missing. */
lucid_gpumetrics *lucid_gpumetrics_open_nvml(const char *library, lucid_error *err);
/* The test backend reading DIR/<job_id>.gpu.  NULL if DIR is not a directory. */
lucid_gpumetrics *lucid_gpumetrics_open_test_file(const char *dir, lucid_error *err);
/* A handle whose samples always fail with `reason` (kept for status output). */
lucid_gpumetrics *lucid_gpumetrics_open_unavailable(const char *reason);
/* The daemon's choice: the test-file backend if `test_dir` is set, else NVML,
 * else unavailable (the reason is kept).  NULL only when out of memory. */
lucid_gpumetrics *lucid_gpumetrics_open_auto(const char *test_dir);
void lucid_gpumetrics_close(lucid_gpumetrics *metrics);

lucid_gpumetrics_kind lucid_gpumetrics_backend(const lucid_gpumetrics *metrics);
/* "nvml", "test-file" or "unavailable". */
const char *lucid_gpumetrics_backend_name(const lucid_gpumetrics *metrics);
/* Human-readable state: the NVML device count, the test directory, or why
 * metrics are unavailable. */
const char *lucid_gpumetrics_describe(const lucid_gpumetrics *metrics);

/* One sample of job `job_id` holding node-local GPUs `gpus[0..ngpus-1]`
 * (NVML reads those devices; the test backend reads the job's file).
 * 0 on success, -1 with a message. */
int lucid_gpumetrics_sample(lucid_gpumetrics *metrics, const char *job_id, const int *gpus,
                            int ngpus, lucid_gpu_sample *out, lucid_error *err);

/* A job's profile: the mean of its samples (memory used: the largest seen). */
typedef struct lucid_gpu_profile {
    int64_t samples;
    double gpu_util_sum, gmem_util_sum, gmem_max_mib;
} lucid_gpu_profile;

void lucid_gpu_profile_add(lucid_gpu_profile *profile, const lucid_gpu_sample *sample);
/* Mean utilisations and peak memory; all zero when there is no sample. */
lucid_gpu_sample lucid_gpu_profile_result(const lucid_gpu_profile *profile);

/* Parses node-local GPU indices as Slurm writes them ("0-2,5"; also "gpu:3(IDX:0-2)").
 * Returns the count written to gpus (at most max), or -1 with a message. */
int lucid_gpu_parse_indices(const char *text, int *gpus, int max, lucid_error *err);

#endif
