/* targets.h — parser entry points shared by the libFuzzer targets and the
 * regression test that replays the saved corpus. */
#ifndef LUCID_FUZZ_TARGETS_H
#define LUCID_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

/* Each parses the input and frees everything; never crashes. */
int lucid_fuzz_trace(const uint8_t *data, size_t size);
int lucid_fuzz_experiment(const uint8_t *data, size_t size);
/* The trace importers' own readers: Philly's streamed JSON and sacct's
 * '|'-separated rows (then the shared rules and writers). */
int lucid_fuzz_philly(const uint8_t *data, size_t size);
int lucid_fuzz_sacct(const uint8_t *data, size_t size);
/* lucidd's reader of the site's GPU limits (sacctmgr's QOS and association
 * lines, src/daemon/limits.c), then a decision's book and its checks. */
int lucid_fuzz_limits(const uint8_t *data, size_t size);

#endif
