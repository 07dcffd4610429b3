/* reader.h — Slurm's jobs and nodes read on a thread of their own.
 *
 * A slurmctld busy with a burst takes up to a second or more to list its
 * jobs (its locks are held by its own scheduling passes), and read on the
 * decision thread each such read was a tick over a second (docs/live.md,
 * "Reads off the tick").  The reader reads when the engine asks (at the
 * end of each tick, after the tick's writes) and keeps the newest read for
 * the engine's next take; a tick with no newer read decides again on the
 * listing it has.
 *
 * A listing may so be older than lucid's latest writes.  Each read carries
 * the moment it began; the engine judges no job on a listing that began
 * before its latest write to that job was answered (engine.c, `stale`),
 * and takes only the writer's outcomes answered before that moment.
 *
 * Two arrays of jobs in all: the engine's and the reader's, swapped on the
 * take of a new read; until that take the reader reads nothing more (an
 * unchanged or failed read it replaces).
 *
 * Without a thread (`threaded` 0, for tests) a read is made by
 * lucidd_reader_read, or by a take that waits. */
#ifndef LUCIDD_READER_H
#define LUCIDD_READER_H

#include "lucid/error.h"
#include "slurm_io.h"

typedef struct lucidd_reader lucidd_reader;

/* What a take found. */
typedef enum lucidd_read {
    LUCIDD_READ_FAILED = -1, /* the read failed: `err` says why, nothing else changed */
    LUCIDD_READ_UNCHANGED = 0, /* the jobs are as the engine has them, as of `began` */
    LUCIDD_READ_NEW = 1,     /* the jobs read anew (swapped in), as of `began` */
    LUCIDD_READ_NONE = 2,    /* no read since the last take: nothing changed */
} lucidd_read;

/* A reader of the nodes of `partitions` (with the share GRES `share_gres`,
 * may be NULL), with its own thread (threaded 1) or none (0).  NULL with
 * `err`. */
lucidd_reader *lucidd_reader_new(const char *partitions, const char *share_gres, int threaded,
                                 lucid_error *err);
/* Stops the thread (after a read in progress) and frees. */
void lucidd_reader_free(lucidd_reader *r);
/* Asks for a read that begins after this call (a read in progress does not
 * count: the caller's writes may have come after its start). */
void lucidd_reader_wake(lucidd_reader *r);
/* Without a thread: one read now, kept for the next take. */
void lucidd_reader_read(lucidd_reader *r);
/* The newest read not yet taken.  On NEW, `jobs`'s array is swapped with
 * the reader's and its counts set; on NEW and UNCHANGED *began is the
 * moment the read began, and *nodes (malloc'ed, freed by the caller) and
 * *nnodes the nodes read after the jobs (*nodes NULL and *nnodes -1, with
 * `nodes_err`, when that read failed; whatever *nodes held is freed).
 * With `wait`, a take with no read kept asks for one and waits for it. */
lucidd_read lucidd_reader_take(lucidd_reader *r, int wait, slurm_job_list *jobs, double *began,
                               slurm_node **nodes, long *nnodes, lucid_error *nodes_err,
                               lucid_error *err);

#endif
