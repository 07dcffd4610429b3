/* atomic.h — output files written whole or not at all, and the check that
 * an output is not one of the run's inputs.
 *
 * Every file a verb writes goes through a lucid_outfile: it is written under
 * a temporary name in the destination's own folder (so the final rename
 * stays on one file system) and renamed over the destination only when the
 * verb commits it.  A failed run aborts its outfiles, which removes the
 * temporary files and leaves the previous good output in place.  Several
 * outfiles of one run are committed together at the end (lucid_outfile_commit
 * on each), so a failure while writing the third file replaces none. */
#ifndef LUCID_ATOMIC_H
#define LUCID_ATOMIC_H

#include <stdio.h>

#include "lucid/error.h"

typedef struct lucid_outfile {
    FILE *f;    /* write here; NULL when not open */
    char *path; /* the destination */
    char *tmp;  /* the temporary file beside it */
} lucid_outfile;

/* Opens a temporary file beside `path` (mode 0666 less the umask, like
 * fopen); returns o->f or NULL with a message naming `path`. */
FILE *lucid_outfile_open(lucid_outfile *o, const char *path, lucid_error *err);
/* Closes the temporary file (checking every write) and puts it in place of
 * the destination in one step, a regular file there swapped out (renameat2
 * RENAME_EXCHANGE; plain rename where there is none, or where the file
 * system lacks it) rather than renamed over: rename over an existing file
 * makes ext4 allocate the new file's blocks at once (auto_da_alloc), 1-2 ms
 * a MB.  *old (the caller's to unlink and free) is then the hidden name the
 * previous content has, else NULL; a run that writes many files frees the
 * old ones on another thread (lucid simulate).  On failure the temporary
 * file is removed and the destination is untouched.  Frees o either way.
 * Nothing is fsynced. */
int lucid_outfile_commit_swap(lucid_outfile *o, char **old, lucid_error *err);
/* The same, the previous file deleted at once. */
int lucid_outfile_commit(lucid_outfile *o, lucid_error *err);
/* Removes the temporary file; the destination is untouched.  Safe on an
 * outfile that was never opened or is already committed (zeroed). */
void lucid_outfile_abort(lucid_outfile *o);

/* Writes `len` bytes to `path` through an outfile. */
int lucid_write_file_atomic(const char *path, const void *data, size_t len, lucid_error *err);

/* 1 when both paths name one existing file (same device and inode: hard
 * links, symlinks, "./x" and "x" all count), else 0. */
int lucid_same_file(const char *a, const char *b);
/* Refuses an output that is one of the inputs: returns -1 with
 * "<output>: is the input <what> (<input>); choose another output" when
 * `output` names the same file as inputs[i] (NULL entries skipped); `what`
 * (may be NULL) names the inputs' role in the message. */
int lucid_check_not_input(const char *output, const char *const *inputs, int ninputs,
                          const char *const *what, lucid_error *err);

#endif
