/* fuzz_sacct.c — libFuzzer target: the trace importer's sacct reader. */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return lucid_fuzz_sacct(data, size); }
