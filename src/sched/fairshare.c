/* fairshare.c — the order value that combines Lucid's priority with the
 * site's fair share and age, and the users' decayed-usage ledger the
 * simulator computes the fair-share factor from (fairshare.h).
 *
 * Usage is kept exactly, not stepped: between two changes a user's running
 * GPUs g are constant, so from U0 at t0 the usage at t is
 *   U0 x 2^(-dt/h) + g x (h / ln 2) x (1 - 2^(-dt/h)),  dt = t - t0,
 * which is what adding every second's g GPU-seconds and decaying it
 * continuously gives.  The total is kept the same way with the sum of the
 * GPUs, so no per-user sum is needed to normalize. */
#include "lucid/fairshare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double ln2 = 0.69314718055994530942;

double lucid_order_value(double priority, double fs_weight, double fs_factor, double age_weight,
                         double wait_s)
{
    double value = priority;
    if (fs_weight > 0 && fs_factor >= 0)
        value *= pow(10.0, fs_weight * (0.5 - fs_factor));
    if (age_weight > 0 && wait_s > 0) {
        double weeks = wait_s / LUCID_AGE_MAX_S;
        value *= pow(2.0, -age_weight * (weeks < 1 ? weeks : 1));
    }
    return value;
}

double lucid_order_qos(double value, double qos_weight, double qos_factor)
{
    if (qos_weight > 0 && qos_factor > 0)
        value *= pow(10.0, -qos_weight * (qos_factor < 1 ? qos_factor : 1));
    return value;
}

int lucid_fairshare_init(lucid_fairshare *f, int32_t nusers, int32_t shares, double half_life_s,
                         lucid_error *err)
{
    memset(f, 0, sizeof *f);
    if (!(half_life_s > 0))
        return lucid_error_set(err, "fair share: half-life %g s is not positive", half_life_s);
    if (nusers < 0)
        return lucid_error_set(err, "fair share: %d users", nusers);
    f->user = calloc((size_t)nusers + 1, sizeof *f->user);
    f->member = calloc((size_t)nusers + 1, 1);
    if (!f->user || !f->member) {
        free(f->user);
        free(f->member);
        f->user = NULL;
        f->member = NULL;
        return lucid_error_set(err, "out of memory");
    }
    f->half_life = half_life_s;
    f->nusers = nusers;
    f->shares = shares > 0 ? shares : 1;
    return 0;
}

void lucid_fairshare_free(lucid_fairshare *f)
{
    free(f->user);
    free(f->member);
    memset(f, 0, sizeof *f);
}

void lucid_fairshare_join(lucid_fairshare *f, int32_t user)
{
    if (user >= 0 && user < f->nusers)
        f->member[user] = 1;
}

/* The entry's usage at `now` (its GPUs held since as_of). */
static double usage_at(const lucid_fairshare *f, const lucid_fairshare_user *u, int64_t now)
{
    if (now <= u->as_of)
        return u->usage;
    double x = (double)(now - u->as_of) / f->half_life;
    double kept = exp2(-x);
    /* 1 - 2^-x without the cancellation of a short interval */
    double added = (double)u->gpus * (f->half_life / ln2) * -expm1(-x * ln2);
    return u->usage * kept + added;
}

/* Brings the entry up to `now` so that its GPUs may change. */
static void advance(const lucid_fairshare *f, lucid_fairshare_user *u, int64_t now)
{
    if (now <= u->as_of)
        return;
    u->usage = usage_at(f, u, now);
    u->as_of = now;
}

static lucid_fairshare_user *entry(lucid_fairshare *f, int32_t user)
{
    return user >= 0 && user < f->nusers ? &f->user[user] : NULL;
}

void lucid_fairshare_run(lucid_fairshare *f, int32_t user, int64_t gpus, int64_t now)
{
    lucid_fairshare_user *u = entry(f, user);
    if (!u)
        return;
    advance(f, u, now);
    advance(f, &f->total, now);
    u->gpus += gpus;
    f->total.gpus += gpus;
}

void lucid_fairshare_charge(lucid_fairshare *f, int32_t user, double gpu_seconds, int64_t now)
{
    lucid_fairshare_user *u = entry(f, user);
    if (!u)
        return;
    advance(f, u, now);
    advance(f, &f->total, now);
    u->usage += gpu_seconds;
    f->total.usage += gpu_seconds;
}

double lucid_fairshare_usage(const lucid_fairshare *f, int32_t user, int64_t now)
{
    if (user < 0)
        return usage_at(f, &f->total, now);
    return user < f->nusers ? usage_at(f, &f->user[user], now) : 0;
}

double lucid_fairshare_factor(const lucid_fairshare *f, int32_t user, int64_t now)
{
    double total = lucid_fairshare_usage(f, -1, now);
    if (!(total > 0))
        return 1;
    double normalized = lucid_fairshare_usage(f, user, now) / total;
    /* the share S = 1 / shares: F = 2^(-U / S) */
    double factor = exp2(-normalized * (double)f->shares);
    return factor < 1 ? factor : 1;
}
