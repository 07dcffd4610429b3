/* fake_nvml.c — a stand-in libnvidia-ml for tests on machines without GPUs:
 * exports the few NVML entry points lucid's gpumetrics loads, with two fake
 * devices whose readings are fixed (device i: SM busy 10*(i+1) %, memory
 * controller busy 5*(i+1) %, (i+1) GiB used).  Built as a module and loaded
 * by path, exactly as the real library would be. */
#include <stddef.h>

typedef struct nvml_device *nvml_device;
typedef struct {
    unsigned int gpu, memory;
} nvml_utilization;
typedef struct {
    unsigned long long total, free, used;
} nvml_memory;

int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlDeviceGetCount_v2(unsigned int *count);
int nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvml_device *device);
int nvmlDeviceGetUtilizationRates(nvml_device device, nvml_utilization *rates);
int nvmlDeviceGetMemoryInfo(nvml_device device, nvml_memory *memory);
const char *nvmlErrorString(int result);

enum { FAKE_DEVICES = 2, NVML_ERROR_INVALID_ARGUMENT = 2, NVML_ERROR_UNINITIALIZED = 1 };
static int initialised;
static char devices[FAKE_DEVICES];

int nvmlInit_v2(void) { initialised = 1; return 0; }
int nvmlShutdown(void) { initialised = 0; return 0; }

int nvmlDeviceGetCount_v2(unsigned int *count)
{
    if (!initialised)
        return NVML_ERROR_UNINITIALIZED;
    *count = FAKE_DEVICES;
    return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvml_device *device)
{
    if (index >= FAKE_DEVICES)
        return NVML_ERROR_INVALID_ARGUMENT;
    *device = (nvml_device)(void *)&devices[index];
    return 0;
}

static unsigned int device_index(nvml_device device)
{
    return (unsigned int)((char *)(void *)device - devices);
}

int nvmlDeviceGetUtilizationRates(nvml_device device, nvml_utilization *rates)
{
    unsigned int i = device_index(device);
    rates->gpu = 10 * (i + 1);
    rates->memory = 5 * (i + 1);
    return 0;
}

int nvmlDeviceGetMemoryInfo(nvml_device device, nvml_memory *memory)
{
    unsigned long long gib = 1024ULL * 1024 * 1024;
    memory->total = 80 * gib;
    memory->used = (device_index(device) + 1) * gib;
    memory->free = memory->total - memory->used;
    return 0;
}

const char *nvmlErrorString(int result)
{
    return result == NVML_ERROR_INVALID_ARGUMENT ? "Invalid Argument" : "Uninitialized";
}
