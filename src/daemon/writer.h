/* writer.h — lucid's writes to Slurm that must not hold the decision tick.
 *
 * slurmctld holds an update of a job a whole second while slurmdbd is
 * giving it its accounting record (daemon.h, LUCIDD_ACCOUNTING_GRACE_S),
 * and a profiled job's move to main and its start there fall in that
 * window after its requeue.  Made on the decision thread, each such write
 * was a tick over a second (docs/live.md, "Writes off the tick").  The
 * writer makes them on a thread of its own, in the order they were posted;
 * the engine takes their outcomes at the start of its next tick, before
 * it reads Slurm's jobs, so a job with a write not yet taken is never
 * judged on a listing older than the write.
 *
 * Without a thread (`threaded` 0, for tests) writes wait in the queue
 * until lucidd_writer_flush or lucidd_writer_settle makes them. */
#ifndef LUCIDD_WRITER_H
#define LUCIDD_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "lucid/error.h"

typedef enum lucidd_write_kind {
    LUCIDD_WRITE_HOLD = 1, /* slurm_io_admin_hold */
    LUCIDD_WRITE_MOVE,     /* slurm_io_move to `partition` */
    LUCIDD_WRITE_START,    /* slurm_io_start with every field below */
    LUCIDD_WRITE_AHEAD,    /* slurm_io_release_ahead: `nodes` the nodes it excludes */
    LUCIDD_WRITE_PROMOTE,  /* slurm_io_promote: `nodes` the exclusion, if `narrow` */
} lucidd_write_kind;

typedef struct lucidd_write {
    lucidd_write_kind kind;
    uint32_t job_id;
    int64_t decision;      /* the recorded decision it applies (0: none) */
    char partition[64];
    char nodes[256];
    char packed_gpus[64];  /* "" not packed */
    char share_tres[64];   /* "" none */
    char comment[256];
    uint32_t priority;
    int narrow;            /* PROMOTE: set the exclusion to `nodes` */
    /* The outcome, set by the writer. */
    int rc;                /* 0 made, -1 failed (error says why) */
    char error[LUCID_ERROR_MAX];
    double seconds;        /* how long Slurm took to answer */
    double done_at;        /* monotonic time of the answer */
} lucidd_write;

typedef struct lucidd_writer lucidd_writer;

/* A writer with its own thread (threaded 1) or none (0).  NULL with `err`. */
lucidd_writer *lucidd_writer_new(int threaded, lucid_error *err);
/* Makes every write still queued, stops the thread, frees; outcomes not
 * taken are lost (take them first: lucidd_writer_flush). */
void lucidd_writer_free(lucidd_writer *w);
/* Queues a copy of `write`: 0, or -1 out of memory (the caller makes it
 * itself). */
int lucidd_writer_post(lucidd_writer *w, const lucidd_write *write);
/* Whether `job_id` has a write queued, being made, or made and its
 * outcome not yet taken. */
int lucidd_writer_pending(lucidd_writer *w, uint32_t job_id);
/* Returns once no write of `job_id` is queued or being made, so a write
 * the caller makes next reaches Slurm after them. */
void lucidd_writer_settle(lucidd_writer *w, uint32_t job_id);
/* Returns once the queue is empty (without a thread: makes every queued
 * write now, in order). */
void lucidd_writer_flush(lucidd_writer *w);
/* The outcomes of the writes answered before `before` (monotonic; INFINITY
 * for all) and not yet taken, in order: *out malloc'ed (the caller frees),
 * NULL when none.  Count.  Those answered later stay pending. */
size_t lucidd_writer_take(lucidd_writer *w, double before, lucidd_write **out);

#endif
