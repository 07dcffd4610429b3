/* shares.c — sshare run as a child and read a little at each tick (shares.h). */
#include "shares.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lucid/util.h"

extern char **environ;

/* sshare's answer for a few thousand associations is well under this; a
 * child that writes more is not sshare as lucid knows it. */
#define SHARE_TEXT_MAX ((size_t)16 << 20)

static void reset(share_read *r)
{
    free(r->text);
    *r = (share_read){.fd = -1};
}

static void close_fd(share_read *r)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
}

int share_read_start(share_read *r, char *const argv[], double now, double timeout_s,
                     lucid_error *err)
{
    if (r->running)
        share_read_cancel(r);
    reset(r);
    snprintf(r->what, sizeof r->what, "%s", argv[0]);
    int fds[2];
    if (pipe(fds) < 0)
        return lucid_error_set(err, "%s: cannot make a pipe: %s", argv[0], strerror(errno));
    /* Only the child's copy of the write end survives exec (adddup2 clears
     * FD_CLOEXEC on its fd 1); lucidd's end never blocks. */
    if (fcntl(fds[0], F_SETFD, FD_CLOEXEC) < 0 || fcntl(fds[1], F_SETFD, FD_CLOEXEC) < 0 ||
        fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK) < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        return lucid_error_set(err, "%s: cannot set up its pipe: %s", argv[0], strerror(e));
    }
    posix_spawn_file_actions_t acts;
    int rc = posix_spawn_file_actions_init(&acts);
    if (rc == 0) {
        rc = posix_spawn_file_actions_addopen(&acts, 0, "/dev/null", O_RDONLY, 0);
        if (rc == 0)
            rc = posix_spawn_file_actions_adddup2(&acts, fds[1], 1);
        if (rc == 0)
            rc = posix_spawn_file_actions_addopen(&acts, 2, "/dev/null", O_WRONLY, 0);
        pid_t pid = 0;
        if (rc == 0)
            rc = posix_spawnp(&pid, argv[0], &acts, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&acts);
        if (rc == 0)
            r->pid = pid;
    }
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        return lucid_error_set(err, "%s: cannot run it: %s", argv[0], strerror(rc));
    }
    r->fd = fds[0];
    r->running = 1;
    r->deadline = now + timeout_s;
    return 0;
}

void share_read_cancel(share_read *r)
{
    if (r->running) { /* else fd is not ours (a zeroed share_read has fd 0) */
        if (r->pid > 0) {
            kill(r->pid, SIGKILL);
            while (waitpid(r->pid, NULL, 0) < 0 && errno == EINTR)
                ;
        }
        close_fd(r);
    }
    reset(r);
}

/* Reads what is there now; 0 more may come, 1 end of file, -1 error. */
static int drain(share_read *r, lucid_error *err)
{
    for (;;) {
        if (r->cap - r->len < 4096) {
            if (r->cap >= SHARE_TEXT_MAX)
                return lucid_error_set(err, "%s: over %zu bytes of output", r->what, SHARE_TEXT_MAX);
            size_t cap = r->cap ? r->cap * 2 : 8192;
            char *text = realloc(r->text, cap);
            if (!text)
                return lucid_error_set(err, "out of memory");
            r->text = text;
            r->cap = cap;
        }
        ssize_t n = read(r->fd, r->text + r->len, r->cap - r->len - 1);
        if (n > 0) {
            r->len += (size_t)n;
            continue;
        }
        if (n == 0)
            return 1;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        return lucid_error_set(err, "%s: cannot read its output: %s", r->what, strerror(errno));
    }
}

int share_read_poll_text(share_read *r, double now, char **text, lucid_error *err)
{
    *text = NULL;
    if (!r->running)
        return lucid_error_set(err, "%s: not running", r->what[0] ? r->what : "command");
    if (r->fd >= 0) {
        int d = drain(r, err);
        if (d < 0) {
            share_read_cancel(r);
            return -1;
        }
        if (d > 0)
            close_fd(r);
    }
    int status = 0;
    pid_t w = r->pid > 0 ? waitpid(r->pid, &status, WNOHANG) : 0;
    if (w == 0 || (w < 0 && errno == EINTR)) {
        if (now <= r->deadline)
            return 0;
        char what[sizeof r->what];
        snprintf(what, sizeof what, "%s", r->what);
        share_read_cancel(r);
        return lucid_error_set(err, "%s: no answer within its time (slurmctld busy?); killed", what);
    }
    r->pid = 0;
    if (r->fd >= 0) { /* exited while something still holds its pipe open */
        int d = drain(r, err);
        close_fd(r);
        if (d < 0) {
            reset(r);
            return -1;
        }
    }
    int failed = w < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    if (r->text)
        r->text[r->len] = '\0';
    if (!(failed && r->len == 0)) { /* failed silently: no accounting, or Slurm unreachable */
        *text = r->text ? r->text : calloc(1, 1);
        r->text = NULL;
        if (!*text) {
            reset(r);
            return lucid_error_set(err, "out of memory");
        }
    }
    reset(r);
    return 1;
}

int share_read_poll(share_read *r, double now, slurm_share **out, long *count, lucid_error *err)
{
    *out = NULL;
    *count = 0;
    char *text = NULL;
    int rc = share_read_poll_text(r, now, &text, err);
    if (rc <= 0)
        return rc;
    long n = share_parse(text ? text : "", out, err);
    free(text);
    if (n < 0)
        return -1;
    if (n == 0) {
        free(*out);
        *out = NULL;
    }
    *count = n;
    return 1;
}

long share_parse(const char *text, slurm_share **out, lucid_error *err)
{
    *out = NULL;
    size_t cap = 0, n = 0;
    slurm_share *shares = NULL;
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *bar1 = memchr(line, '|', len);
        const char *bar2 = bar1 ? memchr(bar1 + 1, '|', len - (size_t)(bar1 + 1 - line)) : NULL;
        if (bar2 && bar2 > bar1 + 1) { /* an account's own line has no user */
            const char *account = line;
            while (account < bar1 && *account == ' ')
                account++; /* sshare indents accounts by depth */
            char factor[64];
            size_t flen = len - (size_t)(bar2 + 1 - line);
            const char *bar3 = memchr(bar2 + 1, '|', flen);
            if (bar3)
                flen = (size_t)(bar3 - bar2 - 1);
            char *fend = NULL;
            double f = -1;
            if (flen > 0 && flen < sizeof factor) {
                memcpy(factor, bar2 + 1, flen);
                factor[flen] = '\0';
                f = strtod(factor, &fend);
            }
            size_t alen = (size_t)(bar1 - account), ulen = (size_t)(bar2 - bar1 - 1);
            if (fend && *fend == '\0' && f >= 0 && f <= 1 && alen < sizeof shares->account &&
                ulen < sizeof shares->user) {
                if (LUCID_GROW(shares, cap, n + 1) < 0) {
                    free(shares);
                    return lucid_error_set(err, "out of memory");
                }
                memcpy(shares[n].account, account, alen);
                shares[n].account[alen] = '\0';
                memcpy(shares[n].user, bar1 + 1, ulen);
                shares[n].user[ulen] = '\0';
                shares[n].factor = f;
                n++;
            }
        }
        line = end ? end + 1 : NULL;
    }
    *out = shares;
    return (long)n;
}
