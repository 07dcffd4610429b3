/* manifest.c — an output folder's MANIFEST (manifest.h): ordered
 * "key = value" lines recording what produced the folder's files, with
 * FNV-1a hashes of the inputs and of every file written, read back by
 * `lucid report` to refuse files of another run. */
#include "lucid/manifest.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/atomic.h"
#include "lucid/util.h"

uint64_t lucid_hash_bytes(uint64_t hash, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        hash ^= p[i];
        hash *= 0x100000001b3ull;
    }
    return hash;
}

int lucid_hash_file(const char *path, uint64_t *hash, lucid_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return lucid_error_set(err, "%s: cannot open: %s", path, strerror(errno));
    unsigned char buf[65536];
    uint64_t h = LUCID_FNV_OFFSET;
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        h = lucid_hash_bytes(h, buf, n);
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return lucid_error_set(err, "%s: read failed", path);
    *hash = h;
    return 0;
}

void lucid_manifest_free(lucid_manifest *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->keys[i]);
        free(m->values[i]);
    }
    free(m->keys);
    free(m->values);
    memset(m, 0, sizeof *m);
}

static int append(lucid_manifest *m, const char *key, const char *value, lucid_error *err)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 32;
        char **keys = realloc(m->keys, cap * sizeof *keys);
        if (keys)
            m->keys = keys;
        char **values = realloc(m->values, cap * sizeof *values);
        if (values)
            m->values = values;
        if (!keys || !values)
            return lucid_error_set(err, "out of memory");
        m->cap = cap;
    }
    char *k = lucid_strdup(key), *v = lucid_strdup(value);
    if (!k || !v) {
        free(k);
        free(v);
        return lucid_error_set(err, "out of memory");
    }
    /* One line per entry: a newline in a value (a path) would split it. */
    for (char *c = v; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    m->keys[m->n] = k;
    m->values[m->n++] = v;
    return 0;
}

int lucid_manifest_add(lucid_manifest *m, lucid_error *err, const char *key, const char *fmt, ...)
{
    char value[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(value, sizeof value, fmt, ap);
    va_end(ap);
    return append(m, key, value, err);
}

int lucid_manifest_add_hash(lucid_manifest *m, const char *key, const char *path,
                            const char *label, lucid_error *err)
{
    uint64_t h;
    if (lucid_hash_file(path, &h, err) < 0)
        return -1;
    return lucid_manifest_add(m, err, key, "%s fnv1a64:%016" PRIx64, label ? label : path, h);
}

const char *lucid_manifest_get(const lucid_manifest *m, const char *key)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->keys[i], key) == 0)
            return m->values[i];
    return NULL;
}

int lucid_manifest_save(const lucid_manifest *m, const char *dir, lucid_error *err)
{
    char path[4352];
    snprintf(path, sizeof path, "%s/%s", dir, LUCID_MANIFEST_NAME);
    lucid_outfile o;
    FILE *f = lucid_outfile_open(&o, path, err);
    if (!f)
        return -1;
    fputs("# lucid run manifest: what produced the files in this folder (docs/formats.md).\n", f);
    for (size_t i = 0; i < m->n; i++)
        fprintf(f, "%s = %s\n", m->keys[i], m->values[i]);
    return lucid_outfile_commit(&o, err);
}

int lucid_manifest_load(lucid_manifest *m, const char *dir, lucid_error *err)
{
    char path[4352];
    snprintf(path, sizeof path, "%s/%s", dir, LUCID_MANIFEST_NAME);
    memset(m, 0, sizeof *m);
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT ? 1 : lucid_error_set(err, "%s: cannot open: %s", path,
                                                     strerror(errno));
    char line[9000];
    long lineno = 0;
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        char *s = lucid_trim(line), *eq = strchr(s, '=');
        if (!*s || *s == '#')
            continue;
        if (!eq || eq == s) {
            rc = lucid_error_at(err, path, lineno, NULL, "expected key = value");
            break;
        }
        *eq = '\0';
        rc = append(m, lucid_trim(s), lucid_trim(eq + 1), err);
    }
    if (rc == 0 && ferror(f))
        rc = lucid_error_set(err, "%s: read failed", path);
    fclose(f);
    if (rc < 0)
        lucid_manifest_free(m);
    return rc;
}

int lucid_manifest_check_file(const lucid_manifest *m, const char *dir, const char *name,
                              lucid_error *err)
{
    char path[4352];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len = strlen(name);
    const char *listed = NULL;
    for (size_t i = 0; i < m->n && !listed; i++)
        if (strcmp(m->keys[i], "file") == 0 && strncmp(m->values[i], name, len) == 0 &&
            m->values[i][len] == ' ')
            listed = m->values[i] + len + 1;
    if (!listed)
        return lucid_error_set(err, "%s: not written by the run recorded in %s/%s (a file of "
                                    "another run?); re-run lucid simulate into an empty folder",
                               path, dir, LUCID_MANIFEST_NAME);
    uint64_t h;
    if (lucid_hash_file(path, &h, err) < 0)
        return -1;
    char want[40];
    snprintf(want, sizeof want, "fnv1a64:%016" PRIx64, h);
    if (strcmp(listed, want) != 0)
        return lucid_error_set(err, "%s: changed since the run recorded in %s/%s wrote it "
                                    "(hash %s, recorded %s)",
                               path, dir, LUCID_MANIFEST_NAME, want, listed);
    return 0;
}
