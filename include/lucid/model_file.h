/* model_file.h — what every lucid model file shares.
 *
 * A model file is one JSON object whose first keys are
 * "format": "lucid-model", "kind": "ebm" | "cart", "version": 1 (or 2: an
 * EBM whose target is transformed, ebm.h).  A file is written with the
 * lowest version that holds it, so models without the newer fields keep
 * their version-1 bytes; every version up to LUCID_MODEL_VERSION is read.
 * Each model module reads and writes the rest; this module reads and writes
 * whole files and tells which kind a file holds. */
#ifndef LUCID_MODEL_FILE_H
#define LUCID_MODEL_FILE_H

#include "lucid/error.h"

#define LUCID_MODEL_FORMAT "lucid-model"
#define LUCID_MODEL_VERSION 2 /* the newest version read */

/* The whole file as a NUL-terminated string (caller frees), or NULL. */
char *lucid_model_file_read(const char *path, lucid_error *err);
/* Writes `text` to `path` (replacing it).  0 or -1. */
int lucid_model_file_write(const char *path, const char *text, lucid_error *err);
/* Checks format and version and copies the kind ("ebm", "cart") into buf. */
int lucid_model_file_kind(const char *path, char *buf, size_t size, lucid_error *err);

#endif
