/* model_file.c — reading, writing and recognising model files (model_file.h). */
#include "lucid/model_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/atomic.h"
#include "model_json.h"

json_t *lucid_model_file_header(const char *kind)
{
    json_t *root = json_object();
    json_object_set_new(root, "format", json_string(LUCID_MODEL_FORMAT));
    json_object_set_new(root, "kind", json_string(kind));
    json_object_set_new(root, "version", json_integer(1));
    return root;
}

char *lucid_model_file_dump(json_t *root, lucid_error *err)
{
    char *text = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    if (!text) {
        lucid_error_set(err, "out of memory while writing the model");
        return NULL;
    }
    size_t n = strlen(text);
    char *out = realloc(text, n + 2);
    if (!out) {
        free(text);
        lucid_error_set(err, "out of memory while writing the model");
        return NULL;
    }
    out[n] = '\n';
    out[n + 1] = '\0';
    return out;
}

json_t *lucid_model_file_parse(const char *text, const char *name, const char *kind,
                               lucid_error *err)
{
    json_error_t jerr;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        lucid_error_at(err, name, jerr.line, NULL, "not a valid model file (%s)", jerr.text);
        return NULL;
    }
    const char *format = json_string_value(json_object_get(root, "format"));
    const char *k = json_string_value(json_object_get(root, "kind"));
    json_t *version = json_object_get(root, "version");
    if (!json_is_object(root) || !format || strcmp(format, LUCID_MODEL_FORMAT) != 0)
        lucid_error_at(err, name, 0, "format", "not a lucid model file");
    else if (!json_is_integer(version))
        lucid_error_at(err, name, 0, "version", "missing or not an integer");
    else if (json_integer_value(version) < 1 || json_integer_value(version) > LUCID_MODEL_VERSION)
        lucid_error_at(err, name, 0, "version",
                       "version %lld is not supported (this build reads versions 1 to %d)",
                       (long long)json_integer_value(version), LUCID_MODEL_VERSION);
    else if (!k || (kind && strcmp(k, kind) != 0))
        lucid_error_at(err, name, 0, "kind", "expected a model of kind \"%s\", found \"%s\"",
                       kind ? kind : "?", k ? k : "(none)");
    else
        return root;
    json_decref(root);
    return NULL;
}

char *lucid_model_file_read(const char *path, lucid_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        lucid_error_set(err, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1)
            break;
        char *grown = realloc(buf, cap * 2);
        if (!grown) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        lucid_error_set(err, "%s: cannot read the file", path);
        return NULL;
    }
    buf[n] = '\0';
    if (strlen(buf) != n) {
        free(buf);
        lucid_error_set(err, "%s: not a text file (contains NUL bytes)", path);
        return NULL;
    }
    return buf;
}

int lucid_model_file_write(const char *path, const char *text, lucid_error *err)
{
    /* Whole or not at all: a failed write leaves the previous model. */
    return lucid_write_file_atomic(path, text, strlen(text), err);
}

int lucid_model_file_kind(const char *path, char *buf, size_t size, lucid_error *err)
{
    char *text = lucid_model_file_read(path, err);
    if (!text)
        return -1;
    json_t *root = lucid_model_file_parse(text, path, NULL, err);
    free(text);
    if (!root)
        return -1;
    snprintf(buf, size, "%s", json_string_value(json_object_get(root, "kind")));
    json_decref(root);
    return 0;
}
