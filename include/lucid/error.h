/* error.h — the one way liblucid reports failure.
 *
 * Every fallible library function takes a `lucid_error *` as its last
 * argument and returns a negative value (or NULL) on failure after writing a
 * one-line message into it.  Input errors name the place they come from as
 * "file:line: field: reason" so that a user can go straight to the fault.
 * The library never prints and never exits; callers decide what to do. */
#ifndef LUCID_ERROR_H
#define LUCID_ERROR_H

#include <stddef.h>

#define LUCID_ERROR_MAX 1024

typedef struct lucid_error {
    char msg[LUCID_ERROR_MAX];
} lucid_error;

#if defined(__GNUC__)
#define LUCID_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define LUCID_PRINTF(a, b)
#endif

/* Writes a formatted message; returns -1 so callers can `return lucid_error_set(...)`.
 * A NULL `err` is allowed and ignored. */
int lucid_error_set(lucid_error *err, const char *fmt, ...) LUCID_PRINTF(2, 3);

/* "file:line: field: reason".  `line` <= 0 omits the line, NULL `field` omits the field. */
int lucid_error_at(lucid_error *err, const char *file, long line, const char *field,
                   const char *fmt, ...) LUCID_PRINTF(5, 6);

/* Clears the message. */
void lucid_error_clear(lucid_error *err);

#endif
