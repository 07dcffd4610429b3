/* fairshare.h — the site's priority in lucid's queue order: Slurm's fair
 * share (and, in lucidd, the job's age) combined with Lucid's priority.
 * One implementation for both callers: lucidd (src/daemon/engine.c,
 * order_values) reads each association's factor from Slurm, the simulator
 * keeps its own ledger of the users' decayed GPU-seconds (below) and
 * computes the factor the way Slurm's classic multifactor plugin does
 * (the simulator's slurm policy ranks users by Fair Tree from the same
 * ledger, charged in Slurm's billing units: policy_slurm.c).
 * docs/fairshare.md has the definitions and the measured effect. */
#ifndef LUCID_FAIRSHARE_H
#define LUCID_FAIRSHARE_H

#include <stdint.h>

#include "lucid/error.h"

/* Slurm's PriorityDecayHalfLife default: 7 days. */
#define LUCID_FAIRSHARE_HALF_LIFE_DEFAULT 604800
/* Longest half-life a configuration may ask for: ten years. */
#define LUCID_FAIRSHARE_HALF_LIFE_MAX ((int64_t)3650 * 86400)
/* Largest fair-share weight: 10 spans ten orders of magnitude each way. */
#define LUCID_FAIRSHARE_WEIGHT_MAX 10
/* The simulator recomputes the order this often while jobs wait and run
 * (Slurm's PriorityCalcPeriod default, 5 minutes). */
#define LUCID_FAIRSHARE_PERIOD 300
/* The age factor saturates after this wait (Slurm's PriorityMaxAge default). */
#define LUCID_AGE_MAX_S (7.0 * 86400.0)

/* The order value of a queued job (lower runs first):
 *   priority x 10^(fs_weight x (1/2 - fs_factor))
 *            x 2^(-age_weight x min(wait_s, 7 days) / 7 days)
 * A factor is left out when its weight is not > 0, the fair-share factor
 * also when it is unknown (fs_factor < 0), the age factor when wait_s <= 0.
 * With both weights 0 the value is `priority` itself, bit for bit. */
/* The QOS term, applied to an order value by lucidd (the simulator has no
 * QOS): value x 10^(-qos_weight x qos_factor), where qos_factor is the
 * job's QOS priority over the largest QOS priority of the site (0..1,
 * Slurm's normalised QOS factor), so a job of the top QOS has its value
 * divided by 10^qos_weight.  Left out (value returned) when either is not
 * > 0. */
double lucid_order_qos(double value, double qos_weight, double qos_factor);

double lucid_order_value(double priority, double fs_weight, double fs_factor, double age_weight,
                         double wait_s);

/* A ledger of the users' decayed usage, in GPU-seconds: usage grows by the
 * GPUs a user's running jobs hold, per second, and decays with a
 * half-life; the value at any time is the exact integral
 *   U(t) = sum over the user's runs of gpus x integral 2^(-(t - s) / h) ds
 * (Slurm adds each calculation period's usage and then decays it, a step
 * approximation of the same integral).  Every user holds an equal share:
 * S = 1 / shares, `shares` being the users with an association (the
 * simulator: the users with jobs in the VC).  The fair-share factor is
 * Slurm's classic F = 2^(-(U / U_total) / S): 1 for a user who used
 * nothing (or when nobody used anything), 1/2 for one at its share,
 * towards 0 far above it.  Users are indexed 0..nusers-1. */
typedef struct lucid_fairshare_user {
    double usage;   /* decayed GPU-seconds at `as_of` */
    int64_t as_of;  /* the time `usage` is for */
    int64_t gpus;   /* GPUs its running jobs hold from `as_of` on */
} lucid_fairshare_user;

typedef struct lucid_fairshare {
    double half_life; /* seconds, > 0 */
    int32_t nusers;
    int32_t shares;   /* users with an equal share each (>= 1) */
    unsigned char *member; /* per slot: 1 for the users holding a share (lucid_fairshare_join) */
    lucid_fairshare_user *user;
    lucid_fairshare_user total; /* the sum over all users, kept the same way */
} lucid_fairshare;

/* The ledger slot of a trace's user id (a string id, -1 for none) in a
 * ledger of `nusers` slots: id + 1, and 0 for jobs without a user (or an id
 * past the ledger): those are one user of their own. */
static inline int32_t lucid_fairshare_slot(int32_t user, int32_t nusers)
{
    return user >= 0 && user < nusers - 1 ? user + 1 : 0;
}

/* 0, or -1 with a message (out of memory, half_life not > 0, nusers < 0). */
int lucid_fairshare_init(lucid_fairshare *f, int32_t nusers, int32_t shares, double half_life_s,
                         lucid_error *err);
void lucid_fairshare_free(lucid_fairshare *f);
/* Marks `user` as one of the users holding a share (Fair Tree ranks them). */
void lucid_fairshare_join(lucid_fairshare *f, int32_t user);
/* A job of `user` starts (gpus > 0) or stops (gpus < 0) holding GPUs at
 * `now`; times never go back. */
void lucid_fairshare_run(lucid_fairshare *f, int32_t user, int64_t gpus, int64_t now);
/* Adds GPU-seconds of usage at `now` at once (a finished job's record). */
void lucid_fairshare_charge(lucid_fairshare *f, int32_t user, double gpu_seconds, int64_t now);
/* The user's (user < 0: the total's) decayed usage at `now` >= its last change. */
double lucid_fairshare_usage(const lucid_fairshare *f, int32_t user, int64_t now);
/* The user's fair-share factor at `now`, in [0, 1]. */
double lucid_fairshare_factor(const lucid_fairshare *f, int32_t user, int64_t now);

#endif
