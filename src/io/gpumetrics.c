/* gpumetrics.c — per-job GPU sampling: NVML loaded with dlopen, a file-backed
 * test backend, and the "unavailable" state.  Only the handful of NVML types
 * and functions used here are declared (nvml.h is not needed to build, and
 * libnvidia-ml is never linked: a missing driver must not stop the program). */
#include "lucid/gpumetrics.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- the NVML subset (ABI as in NVIDIA's nvml.h) ---- */
typedef int nvml_return;          /* nvmlReturn_t: 0 is NVML_SUCCESS */
typedef struct nvml_device *nvml_device; /* nvmlDevice_t */
typedef struct {
    unsigned int gpu, memory; /* percent of time busy: SMs, memory controller */
} nvml_utilization;
typedef struct {
    unsigned long long total, free, used; /* bytes */
} nvml_memory;

typedef struct nvml_api {
    void *library;
    nvml_return (*init)(void);
    nvml_return (*shutdown)(void);
    nvml_return (*device_count)(unsigned int *count);
    nvml_return (*device_by_index)(unsigned int index, nvml_device *device);
    nvml_return (*utilization)(nvml_device device, nvml_utilization *rates);
    nvml_return (*memory)(nvml_device device, nvml_memory *memory);
    const char *(*error_string)(nvml_return result);
} nvml_api;

struct lucid_gpumetrics {
    lucid_gpumetrics_kind kind;
    nvml_api nvml;
    unsigned int device_count;
    char *dir; /* test-file backend */
    char description[LUCID_ERROR_MAX + 64];
};

static lucid_gpumetrics *metrics_new(lucid_gpumetrics_kind kind)
{
    lucid_gpumetrics *metrics = calloc(1, sizeof *metrics);
    if (metrics)
        metrics->kind = kind;
    return metrics;
}

/* dlsym returns void *; copying it into a function pointer through memcpy is
 * the portable spelling POSIX blesses. */
static int load_symbol(void *library, const char *name, void *fn_slot, lucid_error *err)
{
    void *symbol = dlsym(library, name);
    if (!symbol)
        return lucid_error_set(err, "metrics unavailable: NVML lacks %s", name);
    memcpy(fn_slot, &symbol, sizeof symbol);
    return 0;
}

static const char *nvml_error(const nvml_api *api, nvml_return rc)
{
    const char *text = api->error_string ? api->error_string(rc) : NULL;
    return text ? text : "unknown NVML error";
}

lucid_gpumetrics *lucid_gpumetrics_open_nvml(const char *library, lucid_error *err)
{
    const char *path = library ? library : "libnvidia-ml.so.1";
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        lucid_error_set(err, "metrics unavailable: cannot load %s (%s)", path, dlerror());
        return NULL;
    }
    nvml_api api = {.library = handle};
    if (load_symbol(handle, "nvmlInit_v2", &api.init, err) < 0 ||
        load_symbol(handle, "nvmlShutdown", &api.shutdown, err) < 0 ||
        load_symbol(handle, "nvmlDeviceGetCount_v2", &api.device_count, err) < 0 ||
        load_symbol(handle, "nvmlDeviceGetHandleByIndex_v2", &api.device_by_index, err) < 0 ||
        load_symbol(handle, "nvmlDeviceGetUtilizationRates", &api.utilization, err) < 0 ||
        load_symbol(handle, "nvmlDeviceGetMemoryInfo", &api.memory, err) < 0 ||
        load_symbol(handle, "nvmlErrorString", &api.error_string, err) < 0) {
        dlclose(handle);
        return NULL;
    }
    nvml_return rc = api.init();
    if (rc != 0) {
        lucid_error_set(err, "metrics unavailable: nvmlInit failed: %s", nvml_error(&api, rc));
        dlclose(handle);
        return NULL;
    }
    unsigned int count = 0;
    rc = api.device_count(&count);
    if (rc != 0) {
        lucid_error_set(err, "metrics unavailable: nvmlDeviceGetCount failed: %s",
                        nvml_error(&api, rc));
        api.shutdown();
        dlclose(handle);
        return NULL;
    }
    lucid_gpumetrics *metrics = metrics_new(LUCID_GPUMETRICS_NVML);
    if (!metrics) {
        api.shutdown();
        dlclose(handle);
        lucid_error_set(err, "out of memory");
        return NULL;
    }
    metrics->nvml = api;
    metrics->device_count = count;
    snprintf(metrics->description, sizeof metrics->description, "nvml (%s, %u GPUs)", path,
             count);
    return metrics;
}

lucid_gpumetrics *lucid_gpumetrics_open_test_file(const char *dir, lucid_error *err)
{
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        lucid_error_set(err, "metrics test backend: %s is not a directory", dir);
        return NULL;
    }
    lucid_gpumetrics *metrics = metrics_new(LUCID_GPUMETRICS_TEST_FILE);
    char *copy = strdup(dir);
    if (!metrics || !copy) {
        free(metrics);
        free(copy);
        lucid_error_set(err, "out of memory");
        return NULL;
    }
    metrics->dir = copy;
    snprintf(metrics->description, sizeof metrics->description,
             "test-file (samples from %s/<job>.gpu, not real GPUs)", dir);
    return metrics;
}

lucid_gpumetrics *lucid_gpumetrics_open_unavailable(const char *reason)
{
    lucid_gpumetrics *metrics = metrics_new(LUCID_GPUMETRICS_UNAVAILABLE);
    if (metrics)
        snprintf(metrics->description, sizeof metrics->description, "%s",
                 reason ? reason : "metrics unavailable");
    return metrics;
}

lucid_gpumetrics *lucid_gpumetrics_open_auto(const char *test_dir)
{
    lucid_error err = {{0}};
    lucid_gpumetrics *metrics = test_dir ? lucid_gpumetrics_open_test_file(test_dir, &err)
                                         : lucid_gpumetrics_open_nvml(NULL, &err);
    return metrics ? metrics : lucid_gpumetrics_open_unavailable(err.msg);
}

void lucid_gpumetrics_close(lucid_gpumetrics *metrics)
{
    if (!metrics)
        return;
    if (metrics->kind == LUCID_GPUMETRICS_NVML) {
        metrics->nvml.shutdown();
        dlclose(metrics->nvml.library);
    }
    free(metrics->dir);
    free(metrics);
}

lucid_gpumetrics_kind lucid_gpumetrics_backend(const lucid_gpumetrics *metrics)
{
    return metrics->kind;
}

const char *lucid_gpumetrics_backend_name(const lucid_gpumetrics *metrics)
{
    static const char *const names[] = {
        [LUCID_GPUMETRICS_UNAVAILABLE] = "unavailable",
        [LUCID_GPUMETRICS_NVML] = "nvml",
        [LUCID_GPUMETRICS_TEST_FILE] = "test-file",
    };
    return names[metrics->kind];
}

const char *lucid_gpumetrics_describe(const lucid_gpumetrics *metrics)
{
    return metrics->description;
}

static int sample_nvml(lucid_gpumetrics *metrics, const int *gpus, int ngpus,
                       lucid_gpu_sample *out, lucid_error *err)
{
    const nvml_api *api = &metrics->nvml;
    lucid_gpu_sample sum = {0};
    for (int i = 0; i < ngpus; i++) {
        if (gpus[i] < 0 || (unsigned)gpus[i] >= metrics->device_count)
            return lucid_error_set(err, "GPU %d: not present (this node has %u)", gpus[i],
                                   metrics->device_count);
        nvml_device device;
        nvml_utilization rates;
        nvml_memory memory;
        nvml_return rc = api->device_by_index((unsigned)gpus[i], &device);
        if (rc == 0)
            rc = api->utilization(device, &rates);
        if (rc == 0)
            rc = api->memory(device, &memory);
        if (rc != 0)
            return lucid_error_set(err, "GPU %d: %s", gpus[i], nvml_error(api, rc));
        sum.gpu_util_pct += rates.gpu;
        sum.gmem_util_pct += rates.memory;
        double used_mib = (double)memory.used / (1024.0 * 1024.0);
        if (used_mib > sum.gmem_used_mib)
            sum.gmem_used_mib = used_mib;
    }
    out->gpu_util_pct = sum.gpu_util_pct / ngpus;
    out->gmem_util_pct = sum.gmem_util_pct / ngpus;
    out->gmem_used_mib = sum.gmem_used_mib;
    return 0;
}

static int parse_sample_line(const char *line, lucid_gpu_sample *out)
{
    char *end;
    double values[3];
    const char *p = line;
    for (int i = 0; i < 3; i++) {
        errno = 0;
        values[i] = strtod(p, &end);
        if (end == p || errno != 0 || values[i] < 0)
            return -1;
        p = end;
    }
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    if (*p != '\0' || values[0] > 100 || values[2] > 100)
        return -1;
    out->gpu_util_pct = values[0];
    out->gmem_used_mib = values[1];
    out->gmem_util_pct = values[2];
    return 0;
}

/* The test backend: the last sample line of DIR/<job_id>.gpu. */
static int sample_test_file(lucid_gpumetrics *metrics, const char *job_id,
                            lucid_gpu_sample *out, lucid_error *err)
{
    for (const char *c = job_id; *c; c++)
        if (*c == '/' || (c == job_id && *c == '.'))
            return lucid_error_set(err, "job id '%s' is not a file name", job_id);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.gpu", metrics->dir, job_id);
    FILE *file = fopen(path, "r");
    if (!file)
        return lucid_error_set(err, "%s: no samples yet (%s)", path, strerror(errno));
    char line[256];
    long number = 0, last_number = 0;
    lucid_gpu_sample last = {0};
    int rc = 0;
    while (fgets(line, sizeof line, file)) {
        number++;
        const char *p = line + strspn(line, " \t");
        if (*p == '#' || *p == '\n' || *p == '\r' || *p == '\0')
            continue;
        if (parse_sample_line(p, &last) < 0) {
            rc = lucid_error_at(err, path, number, NULL,
                                "expected \"gpu_util_pct gmem_used_mib gmem_util_pct\"");
            break;
        }
        last_number = number;
    }
    fclose(file);
    if (rc < 0)
        return rc;
    if (last_number == 0)
        return lucid_error_set(err, "%s: no samples yet", path);
    *out = last;
    return 0;
}

int lucid_gpumetrics_sample(lucid_gpumetrics *metrics, const char *job_id, const int *gpus,
                            int ngpus, lucid_gpu_sample *out, lucid_error *err)
{
    switch (metrics->kind) {
    case LUCID_GPUMETRICS_NVML:
        if (ngpus <= 0)
            return lucid_error_set(err, "job %s holds no GPU to sample", job_id);
        return sample_nvml(metrics, gpus, ngpus, out, err);
    case LUCID_GPUMETRICS_TEST_FILE:
        return sample_test_file(metrics, job_id, out, err);
    case LUCID_GPUMETRICS_UNAVAILABLE:
        break;
    }
    return lucid_error_set(err, "%s", metrics->description);
}

void lucid_gpu_profile_add(lucid_gpu_profile *profile, const lucid_gpu_sample *sample)
{
    profile->samples++;
    profile->gpu_util_sum += sample->gpu_util_pct;
    profile->gmem_util_sum += sample->gmem_util_pct;
    if (sample->gmem_used_mib > profile->gmem_max_mib)
        profile->gmem_max_mib = sample->gmem_used_mib;
}

lucid_gpu_sample lucid_gpu_profile_result(const lucid_gpu_profile *profile)
{
    lucid_gpu_sample result = {0};
    if (profile->samples > 0) {
        result.gpu_util_pct = profile->gpu_util_sum / (double)profile->samples;
        result.gmem_util_pct = profile->gmem_util_sum / (double)profile->samples;
        result.gmem_used_mib = profile->gmem_max_mib;
    }
    return result;
}

static int parse_index(const char **p, long *value)
{
    char *end;
    errno = 0;
    *value = strtol(*p, &end, 10);
    if (end == *p || errno != 0 || *value < 0 || *value > 1 << 20)
        return -1;
    *p = end;
    return 0;
}

int lucid_gpu_parse_indices(const char *text, int *gpus, int max, lucid_error *err)
{
    const char *p = text;
    const char *idx = strstr(text, "IDX:");
    if (idx)
        p = idx + 4;
    int count = 0;
    if (*p == '\0' || *p == ')')
        return 0;
    for (;;) {
        long first, last;
        if (*p < '0' || *p > '9' || parse_index(&p, &first) < 0)
            return lucid_error_set(err, "GPU list '%s': expected an index", text);
        last = first;
        if (*p == '-') {
            p++;
            if (*p < '0' || *p > '9' || parse_index(&p, &last) < 0 || last < first)
                return lucid_error_set(err, "GPU list '%s': bad range", text);
        }
        for (long k = first; k <= last; k++) {
            if (count >= max)
                return lucid_error_set(err, "GPU list '%s': more than %d GPUs", text, max);
            gpus[count++] = (int)k;
        }
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == '\0' || (idx && *p == ')'))
            return count;
        return lucid_error_set(err, "GPU list '%s': unexpected '%c'", text, *p);
    }
}
