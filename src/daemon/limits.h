/* limits.h — the site's GPU limits, as Slurm's accounting holds them, and
 * which of them apply to a job.
 *
 * Slurm enforces QOS and association limits (AccountingStorageEnforce=
 * limits) when it schedules a released job: a job over one stays pending
 * (QOSMaxGRESPerUser...).  lucid used to learn of them only from that
 * reason, after it had placed the job and held GPUs for it.  lucidd reads
 * the limits on gres/gpu in the background (`sacctmgr -n -P show qos` and
 * `show assoc`, engine.c, every LIMITS_READ_S) and books, for each decision,
 * what runs against each limit; fit.h's fit_limits_ever / fit_limits_now
 * then say whether a job can start at all, or now.
 *
 * Which limits apply (Slurm's resource_limits: for each kind, the first
 * place that sets it wins):
 *   per job:  the job's QOS MaxTRESPerJob, else its user association's
 *             MaxTRES, else the nearest account above it that sets MaxTRES;
 *   per user: the QOS's MaxTRESPerUser (the user's running GPUs in it);
 *   per account: the QOS's MaxTRESPerAccount;
 *   group:    the QOS's GrpTRES (every job of the QOS), else the GrpTRES of
 *             the user association and of each account above it (each
 *             counts its own subtree).
 * Not read: partition QOS, typed GPU limits (gres/gpu:a100=N), limits on
 * other TRES, minutes (GrpTRESMins) and job counts; those still show as
 * Slurm's reason after a release and are taken back (engine.c). */
#ifndef LUCIDD_LIMITS_H
#define LUCIDD_LIMITS_H

#include <stddef.h>

#include "fit.h"
#include "lucid/error.h"

#define LIMIT_NONE (-1)

/* `sacctmgr -n -P show qos format=Name,MaxTRES,MaxTRESPU,MaxTRESPA,GrpTRES,
 * Priority`: GPUs, or LIMIT_NONE; the QOS's priority (0 when not given). */
typedef struct limit_qos {
    char name[64];
    int per_job, per_user, per_account, group;
    int priority;
} limit_qos;


/* `sacctmgr -n -P show assoc format=Account,User,Partition,ParentName,
 * MaxTRES,GrpTRES`: an account's own line has no user (its parent is then
 * ParentName); a user's line names its account. */
typedef struct limit_assoc {
    char account[64], user[64], partition[64], parent[64];
    int per_job, group;
} limit_assoc;

typedef struct slurm_limits {
    limit_qos *qos;
    long nqos;
    limit_assoc *assoc;
    long nassoc;
} slurm_limits;

/* A QOS's priority factor as Slurm normalises it: its priority over the
 * largest of the site's (0..1; 0 for an unknown QOS or when none has one). */
double limits_qos_factor(const slurm_limits *site, const char *qos);
/* The largest QOS priority of the site (0: none has one). */
int limits_qos_top(const slurm_limits *site);

/* Parse sacctmgr's parsable output (`-P`: fields split by '|', one record
 * a line; extra fields after the expected ones are ignored).  A line with too few fields, or a
 * gres/gpu value that is not a whole number, is skipped or read as no
 * limit, and the first such problem is written to `bad` (one line naming
 * the record and the field; "" when none).  Records that set no GPU limit
 * are kept (an association's parent chain needs them).  Count in *out
 * (malloc'ed), or -1 out of memory. */
long limits_parse_qos(const char *text, limit_qos **out, char *bad, size_t size,
                      lucid_error *err);
long limits_parse_assoc(const char *text, limit_assoc **out, char *bad, size_t size,
                        lucid_error *err);

/* GPUs of a TRES list ("cpu=4,gres/gpu=8"): the count, LIMIT_NONE when it
 * names no untyped gres/gpu, -2 when the gres/gpu value is unreadable. */
int limits_tres_gpus(const char *tres);

/* 1 if any record sets a GPU limit. */
int limits_any(const slurm_limits *site);
void limits_free(slurm_limits *site);

/* A job as the limits see it. */
typedef struct limits_job {
    const char *user, *account, *qos, *partition;
    int gpus;
} limits_job;

/* The limits that apply to a job (above), written to out[] (at most
 * FIT_LIMITS) with `used` 0; returns how many. */
int limits_of_job(const slurm_limits *site, const limits_job *job, fit_limit *out);

/* One decision's table of limits: every limit some waiting job is under,
 * with the GPUs the running jobs use against it. */
typedef struct limits_book {
    fit_limit *limits; /* sorted by name, then whose */
    size_t count;
} limits_book;

/* Fills the book from the site's limits, the waiting jobs (each gets its
 * fit_limits in per_job[k], pointing into the book) and the jobs that
 * count now (running, or released and not started yet).  0, or -1 out of
 * memory (then every per_job[k] is empty: no limit is applied). */
int limits_book_build(limits_book *book, const slurm_limits *site, const limits_job *waiting,
                      size_t nwaiting, fit_limits *per_job, const limits_job *running,
                      size_t nrunning, lucid_error *err);
void limits_book_free(limits_book *book);

#endif
