/* atomic.c — output files written whole or not at all (temporary file in
 * the destination's folder, renamed on commit) and the same-file check that
 * keeps a verb from writing over its own input.  One implementation for
 * every verb (simulate, tune, report, model) and the chart writers. */
#define _GNU_SOURCE /* renameat2, RENAME_EXCHANGE */
#include "lucid/atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lucid/util.h"

FILE *lucid_outfile_open(lucid_outfile *o, const char *path, lucid_error *err)
{
    memset(o, 0, sizeof *o);
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    size_t n = strlen(path) + 48;
    o->path = lucid_strdup(path);
    o->tmp = malloc(n);
    if (!o->path || !o->tmp) {
        lucid_outfile_abort(o);
        lucid_error_set(err, "out of memory");
        return NULL;
    }
    /* A hidden name in the same folder, unique per process and attempt;
     * O_EXCL so that two runs never share one. */
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        snprintf(o->tmp, n, "%.*s.%s.%ld.%d.tmp", (int)dirlen, path, path + dirlen,
                 (long)getpid(), attempt);
        fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        lucid_error_set(err, "%s: cannot write: %s", path, strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        lucid_outfile_abort(o);
        return NULL;
    }
    if (!(o->f = fdopen(fd, "w"))) {
        close(fd);
        lucid_error_set(err, "%s: cannot write: %s", path, strerror(errno));
        lucid_outfile_abort(o);
        return NULL;
    }
    return o->f;
}

void lucid_outfile_abort(lucid_outfile *o)
{
    if (o->f)
        fclose(o->f);
    if (o->tmp)
        unlink(o->tmp);
    free(o->tmp);
    free(o->path);
    memset(o, 0, sizeof *o);
}

/* Closes o->f, checking every write; -1 (o aborted) on a failed one. */
static int outfile_close(lucid_outfile *o, lucid_error *err)
{
    if (!o->f)
        return lucid_error_set(err, "%s: not open for writing", o->path ? o->path : "?");
    int bad = ferror(o->f) != 0;
    bad |= fclose(o->f) != 0;
    o->f = NULL;
    if (bad) {
        lucid_error_set(err, "%s: write failed", o->path);
        lucid_outfile_abort(o);
        return -1;
    }
    return 0;
}

int lucid_outfile_commit_swap(lucid_outfile *o, char **old, lucid_error *err)
{
    *old = NULL;
    if (outfile_close(o, err) < 0)
        return -1;
#ifdef RENAME_EXCHANGE
    /* Only a regular file is swapped out (a folder or a link in the way
     * gets rename's own answer below). */
    struct stat st;
    if (lstat(o->path, &st) == 0 && S_ISREG(st.st_mode) &&
        renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_EXCHANGE) == 0) {
        if (lstat(o->tmp, &st) == 0 && S_ISREG(st.st_mode)) {
            *old = o->tmp;
            o->tmp = NULL;
            lucid_outfile_abort(o);
            return 0;
        }
        /* Something else took the name between the two calls: put it back. */
        if (renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_EXCHANGE) != 0) {
            lucid_error_set(err, "%s: cannot replace: %s", o->path, strerror(errno));
            free(o->tmp); /* the other thing is there now: not ours to remove */
            o->tmp = NULL;
            lucid_outfile_abort(o);
            return -1;
        }
    }
#endif
    if (rename(o->tmp, o->path) != 0) {
        lucid_error_set(err, "%s: cannot replace: %s", o->path, strerror(errno));
        lucid_outfile_abort(o);
        return -1;
    }
    free(o->tmp);
    o->tmp = NULL;
    lucid_outfile_abort(o);
    return 0;
}

int lucid_outfile_commit(lucid_outfile *o, lucid_error *err)
{
    char *old;
    if (lucid_outfile_commit_swap(o, &old, err) < 0)
        return -1;
    if (old) /* the destination is already the new file: a leftover only costs space */
        unlink(old);
    free(old);
    return 0;
}

int lucid_write_file_atomic(const char *path, const void *data, size_t len, lucid_error *err)
{
    lucid_outfile o;
    FILE *f = lucid_outfile_open(&o, path, err);
    if (!f)
        return -1;
    if (len && fwrite(data, 1, len, f) != len) {
        lucid_outfile_abort(&o);
        return lucid_error_set(err, "%s: write failed", path);
    }
    return lucid_outfile_commit(&o, err);
}

int lucid_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!a || !b || stat(a, &sa) != 0 || stat(b, &sb) != 0)
        return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int lucid_check_not_input(const char *output, const char *const *inputs, int ninputs,
                          const char *const *what, lucid_error *err)
{
    for (int i = 0; i < ninputs; i++)
        if (inputs[i] && lucid_same_file(output, inputs[i]))
            return what && what[i]
                       ? lucid_error_set(err, "%s: is the input %s (%s); choose another output",
                                         output, what[i], inputs[i])
                       : lucid_error_set(err, "%s: is one of the inputs (%s); choose another "
                                              "output",
                                         output, inputs[i]);
    return 0;
}
