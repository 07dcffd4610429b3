/* manifest.c — an output folder's MANIFEST (manifest.h): ordered
 * "key = value" lines recording what produced the folder's files, with
 * hashes (XXH64; FNV-1a in folders written before) of the inputs and of
 * every file written, read back by `lucid report` to refuse files of
 * another run. */
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

/* ---- XXH64 (seed 0), streaming: the xxHash specification's 64-bit hash
 * (github.com/Cyan4973/xxHash, doc/xxhash_spec.md).  Four independent
 * lanes of 8 bytes per round, so ~8x fewer dependent multiplies than
 * FNV-1a's one per byte, which was a tenth of a Venus command. */
#define XXH_P1 0x9E3779B185EBCA87ull
#define XXH_P2 0xC2B2AE3D27D4EB4Full
#define XXH_P3 0x165667B19E3779F9ull
#define XXH_P4 0x85EBCA77C2B2AE63ull
#define XXH_P5 0x27D4EB2F165667C5ull

static uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

/* Little-endian loads, whatever the machine's order. */
static uint64_t load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static uint32_t load32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}

static uint64_t xxh_round(uint64_t acc, uint64_t input)
{
    acc += input * XXH_P2;
    acc = rotl64(acc, 31);
    return acc * XXH_P1;
}

static uint64_t xxh_merge(uint64_t acc, uint64_t val)
{
    acc ^= xxh_round(0, val);
    return acc * XXH_P1 + XXH_P4;
}

void lucid_xxh64_init(lucid_xxh64_state *st)
{
    memset(st, 0, sizeof *st);
    st->v[0] = XXH_P1 + XXH_P2;
    st->v[1] = XXH_P2;
    st->v[2] = 0;
    st->v[3] = 0 - XXH_P1;
}

static const unsigned char *xxh64_stripes(lucid_xxh64_state *st, const unsigned char *p,
                                          const unsigned char *end)
{
    uint64_t v0 = st->v[0], v1 = st->v[1], v2 = st->v[2], v3 = st->v[3];
    for (; end - p >= 32; p += 32) {
        v0 = xxh_round(v0, load64(p));
        v1 = xxh_round(v1, load64(p + 8));
        v2 = xxh_round(v2, load64(p + 16));
        v3 = xxh_round(v3, load64(p + 24));
    }
    st->v[0] = v0, st->v[1] = v1, st->v[2] = v2, st->v[3] = v3;
    return p;
}

void lucid_xxh64_update(lucid_xxh64_state *st, const void *data, size_t len)
{
    const unsigned char *p = data, *end = p + len;
    st->total += len;
    if (st->nmem + len < 32) {
        memcpy(st->mem + st->nmem, p, len);
        st->nmem += len;
        return;
    }
    if (st->nmem > 0) {
        size_t take = 32 - st->nmem;
        memcpy(st->mem + st->nmem, p, take);
        xxh64_stripes(st, st->mem, st->mem + 32);
        p += take;
        st->nmem = 0;
    }
    p = xxh64_stripes(st, p, end);
    st->nmem = (size_t)(end - p);
    memcpy(st->mem, p, st->nmem);
}

uint64_t lucid_xxh64_digest(const lucid_xxh64_state *st)
{
    uint64_t h;
    if (st->total >= 32) {
        h = rotl64(st->v[0], 1) + rotl64(st->v[1], 7) + rotl64(st->v[2], 12) +
            rotl64(st->v[3], 18);
        for (int i = 0; i < 4; i++)
            h = xxh_merge(h, st->v[i]);
    } else {
        h = XXH_P5; /* seed 0 */
    }
    h += st->total;
    const unsigned char *p = st->mem, *end = p + st->nmem;
    for (; end - p >= 8; p += 8) {
        h ^= xxh_round(0, load64(p));
        h = rotl64(h, 27) * XXH_P1 + XXH_P4;
    }
    if (end - p >= 4) {
        h ^= (uint64_t)load32(p) * XXH_P1;
        h = rotl64(h, 23) * XXH_P2 + XXH_P3;
        p += 4;
    }
    for (; p < end; p++) {
        h ^= (uint64_t)*p * XXH_P5;
        h = rotl64(h, 11) * XXH_P1;
    }
    h ^= h >> 33;
    h *= XXH_P2;
    h ^= h >> 29;
    h *= XXH_P3;
    h ^= h >> 32;
    return h;
}

uint64_t lucid_xxh64(const void *data, size_t len)
{
    lucid_xxh64_state st;
    lucid_xxh64_init(&st);
    lucid_xxh64_update(&st, data, len);
    return lucid_xxh64_digest(&st);
}

int lucid_hash_file_as(const char *path, int kind, uint64_t *hash, lucid_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return lucid_error_set(err, "%s: cannot open: %s", path, strerror(errno));
    unsigned char buf[65536];
    uint64_t h = LUCID_FNV_OFFSET;
    lucid_xxh64_state st;
    lucid_xxh64_init(&st);
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        if (kind == LUCID_HASH_FNV1A64)
            h = lucid_hash_bytes(h, buf, n);
        else
            lucid_xxh64_update(&st, buf, n);
    }
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return lucid_error_set(err, "%s: read failed", path);
    *hash = kind == LUCID_HASH_FNV1A64 ? h : lucid_xxh64_digest(&st);
    return 0;
}

int lucid_hash_file(const char *path, uint64_t *hash, lucid_error *err)
{
    return lucid_hash_file_as(path, LUCID_HASH_FNV1A64, hash, err);
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
    if (lucid_hash_file_as(path, LUCID_HASH_XXH64, &h, err) < 0)
        return -1;
    return lucid_manifest_add(m, err, key, "%s xxh64:%016" PRIx64, label ? label : path, h);
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
    /* The hash the run recorded: xxh64 since issue 14's speed work,
     * fnv1a64 before (such folders still verify). */
    int kind = strncmp(listed, "xxh64:", 6) == 0     ? LUCID_HASH_XXH64
               : strncmp(listed, "fnv1a64:", 8) == 0 ? LUCID_HASH_FNV1A64
                                                     : -1;
    if (kind < 0)
        return lucid_error_set(err, "%s/%s: file %s: unknown hash '%s' (expected xxh64:HASH "
                                    "or fnv1a64:HASH)",
                               dir, LUCID_MANIFEST_NAME, name, listed);
    uint64_t h;
    if (lucid_hash_file_as(path, kind, &h, err) < 0)
        return -1;
    char want[40];
    snprintf(want, sizeof want, "%s:%016" PRIx64, kind == LUCID_HASH_XXH64 ? "xxh64" : "fnv1a64",
             h);
    if (strcmp(listed, want) != 0)
        return lucid_error_set(err, "%s: changed since the run recorded in %s/%s wrote it "
                                    "(hash %s, recorded %s)",
                               path, dir, LUCID_MANIFEST_NAME, want, listed);
    return 0;
}
