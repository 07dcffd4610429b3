/* shares.h — Slurm's fair-share factors, read without stalling a tick.
 *
 * libslurm 22.05 has no public call for the association shares `sshare`
 * prints, so lucidd runs sshare.  sshare asks slurmctld, which on a busy
 * cluster can take seconds (or not answer while it restarts); run inline it
 * would stop every decision for that long.  So the command runs as a child
 * whose output lucidd collects a little at each tick (non-blocking), killed
 * if it outlasts its time.  The same reader runs sacctmgr for the site's
 * GPU limits (limits.h): share_read_poll_text hands back the text. */
#ifndef LUCIDD_SHARES_H
#define LUCIDD_SHARES_H

#include <stddef.h>
#include <sys/types.h>

#include "lucid/error.h"

/* One association's fair-share factor, as `sshare -P -o Account,User,
 * FairShare` reports it: 1 under-served .. 0 over-served. */
typedef struct slurm_share {
    char account[64];
    char user[64];
    double factor;
} slurm_share;

/* A command in flight; zero-initialized means none. */
typedef struct share_read {
    char what[32];   /* the command's name, for messages */
    int running;     /* 1 from start until poll or cancel ends it */
    pid_t pid;       /* the child (0 once reaped) */
    int fd;          /* its standard output, non-blocking (-1 at end of file) */
    char *text;      /* what it has written so far */
    size_t len, cap;
    double deadline; /* monotonic seconds: killed after this */
} share_read;

/* Starts argv (argv[0] looked up in PATH) with its stdout to a pipe, stdin
 * and stderr to /dev/null.  0, or -1 with err set (nothing left running). */
int share_read_start(share_read *r, char *const argv[], double now, double timeout_s,
                     lucid_error *err);

/* Collects what the child wrote without waiting.  0: still running; 1: it
 * ended, *out (malloc'ed, may be NULL) holds *count shares (0 when it
 * failed without printing any: Slurm keeps no accounting); -1: it failed
 * or outlasted its time (then killed), err says which. */
int share_read_poll(share_read *r, double now, slurm_share **out, long *count, lucid_error *err);

/* The same, for any command: 1 it ended, *text (malloc'ed, NUL-terminated)
 * holds what it wrote, NULL when it failed without writing anything; 0
 * still running; -1 failed or outlasted its time (err says which). */
int share_read_poll_text(share_read *r, double now, char **text, lucid_error *err);

/* Kills and reaps a running child and frees what it wrote. */
void share_read_cancel(share_read *r);

/* Parses sshare's parsable output (Account|User|FairShare per line); an
 * account's own line (no user) is skipped, as is a line whose factor is not
 * a number from 0 to 1.  Count of shares in *out (malloc'ed), -1 out of
 * memory. */
long share_parse(const char *text, slurm_share **out, lucid_error *err);

#endif
