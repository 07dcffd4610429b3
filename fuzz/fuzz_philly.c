/* fuzz_philly.c — libFuzzer target: the trace importer's Philly JSON reader. */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return lucid_fuzz_philly(data, size); }
