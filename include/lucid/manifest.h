/* manifest.h — the MANIFEST of an output folder: which inputs, semantics,
 * policies and knobs produced the files in it, with a hash of every input
 * and of every file written, so that a reader (`lucid report`) can refuse
 * files of another run.
 *
 * The file is text, one "key = value" a line, keys repeatable, in order:
 *   # comment
 *   lucid_version = 0.1.0
 *   input = /abs/trace.csv xxh64:0123456789abcdef
 *   file = jobs-fifo.csv xxh64:...
 * Hashes are XXH64 (seed 0) of the file's bytes (a check against mixing and
 * editing, not a cryptographic signature); folders written before issue
 * 14's speed work have 64-bit FNV-1a (`fnv1a64:`), which still verify. */
#ifndef LUCID_MANIFEST_H
#define LUCID_MANIFEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lucid/error.h"

#define LUCID_MANIFEST_NAME "MANIFEST"

typedef struct lucid_manifest {
    char **keys, **values;
    size_t n, cap;
} lucid_manifest;

void lucid_manifest_free(lucid_manifest *m);
/* Appends "key = value" (printf-style value; no newlines). */
int lucid_manifest_add(lucid_manifest *m, lucid_error *err, const char *key, const char *fmt, ...)
    LUCID_PRINTF(4, 5);
/* Appends "key = <label> xxh64:<hash of path>"; label NULL = path. */
int lucid_manifest_add_hash(lucid_manifest *m, const char *key, const char *path,
                            const char *label, lucid_error *err);
/* The first value of `key`, or NULL. */
const char *lucid_manifest_get(const lucid_manifest *m, const char *key);
/* Writes dir/MANIFEST whole (temporary file + rename). */
int lucid_manifest_save(const lucid_manifest *m, const char *dir, lucid_error *err);
/* Reads dir/MANIFEST; 0 = read, 1 = there is none, -1 = error (malformed
 * lines name the file and line). */
int lucid_manifest_load(lucid_manifest *m, const char *dir, lucid_error *err);
/* Checks that dir/name is listed as "file = name xxh64:..." (or, from
 * older runs, "fnv1a64:...") with the hash of its current bytes; the
 * message says which run it is not from. */
int lucid_manifest_check_file(const lucid_manifest *m, const char *dir, const char *name,
                              lucid_error *err);

enum { LUCID_HASH_FNV1A64 = 0, LUCID_HASH_XXH64 = 1 };
/* A file's hash of that kind (LUCID_HASH_*). */
int lucid_hash_file_as(const char *path, int kind, uint64_t *hash, lucid_error *err);
/* 64-bit FNV-1a of a file's bytes. */
int lucid_hash_file(const char *path, uint64_t *hash, lucid_error *err);
/* XXH64 (seed 0) of data[0..len). */
uint64_t lucid_xxh64(const void *data, size_t len);
/* The same over bytes that come in pieces (a file as it is written):
 * init, update with each piece in order, digest. */
typedef struct lucid_xxh64_state {
    uint64_t v[4], total;
    unsigned char mem[32];
    size_t nmem;
} lucid_xxh64_state;
void lucid_xxh64_init(lucid_xxh64_state *st);
void lucid_xxh64_update(lucid_xxh64_state *st, const void *data, size_t len);
uint64_t lucid_xxh64_digest(const lucid_xxh64_state *st);
/* Folds `value` into a running FNV-1a hash (start with LUCID_FNV_OFFSET). */
#define LUCID_FNV_OFFSET 0xcbf29ce484222325ull
uint64_t lucid_hash_bytes(uint64_t hash, const void *data, size_t len);

#endif
