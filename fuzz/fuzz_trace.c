/* fuzz_trace.c — libFuzzer target: the trace CSV reader. */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return lucid_fuzz_trace(data, size); }
