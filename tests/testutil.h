/* testutil.h — helpers shared by the cmocka test programs. */
#ifndef LUCID_TESTUTIL_H
#define LUCID_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* Path under the source tree (static buffer per call site is not safe; the
 * result is written into buf). */
const char *test_path(char *buf, size_t size, const char *relative);
/* A fresh empty directory under the build tree for this test's outputs. */
const char *test_tmpdir(char *buf, size_t size, const char *name);
/* Writes `text` to dir/name and returns the path in buf. */
const char *test_write_file(char *buf, size_t size, const char *dir, const char *name,
                            const char *text);

#endif
