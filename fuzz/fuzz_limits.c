/* fuzz_limits.c — libFuzzer target: lucidd's reader of the site's GPU limits (sacctmgr). */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return lucid_fuzz_limits(data, size); }
