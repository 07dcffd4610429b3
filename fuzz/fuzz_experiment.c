/* fuzz_experiment.c — libFuzzer target: the experiment (INI) parser. */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return lucid_fuzz_experiment(data, size);
}
