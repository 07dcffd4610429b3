/* exptest.h — experiment files from text in tests: load with defaults, and
 * expect a refusal naming the file ("exp.ini"), line and key. */
#ifndef LUCID_EXPTEST_H
#define LUCID_EXPTEST_H

#include <string.h>

#include "lucid/experiment.h"
#include "testutil.h"

static inline int exptest_load(lucid_experiment *exp, const char *text, lucid_error *err)
{
    lucid_experiment_defaults(exp);
    return lucid_experiment_load_mem(exp, "exp.ini", "/d", text, err);
}

/* The text is refused with an error that contains `message`. */
static inline void exptest_refused(const char *text, const char *message)
{
    lucid_experiment exp;
    lucid_error err = {{0}};
    if (exptest_load(&exp, text, &err) == 0)
        fail_msg("accepted: %s", text);
    if (!strstr(err.msg, message))
        fail_msg("'%s' does not say '%s'", err.msg, message);
    lucid_experiment_free(&exp);
}

#endif
