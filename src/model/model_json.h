/* model_json.h — private JSON helpers shared by the model file writers and
 * readers (jansson stays out of the public headers). */
#ifndef LUCID_MODEL_JSON_H
#define LUCID_MODEL_JSON_H

#include <jansson.h>

#include "lucid/error.h"

/* A new object holding format, kind and version. */
json_t *lucid_model_file_header(const char *kind);
/* Text of `root`: keys in insertion order, reals with 17 digits, newline at end. */
char *lucid_model_file_dump(json_t *root, lucid_error *err);
/* Parses `text` (named `name` in messages) and checks format, version and
 * that the kind is `kind`. */
json_t *lucid_model_file_parse(const char *text, const char *name, const char *kind,
                               lucid_error *err);

#endif
