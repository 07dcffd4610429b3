/* writer.c — lucid's writes to Slurm on a thread of their own (writer.h). */
#include "writer.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "slurm_io.h"

struct lucidd_writer {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* a write queued, or stop */
    pthread_cond_t made; /* a write made */
    pthread_t thread;
    int threaded, stop;
    lucidd_write *queue; /* queue[0] is the one being made while `busy` */
    size_t nqueue, qcap;
    int busy;
    lucidd_write *done;  /* made, outcome not taken */
    size_t ndone, dcap;
};

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Makes `wr` (no lock held): Slurm's answer into its outcome. */
static void make(lucidd_write *wr)
{
    lucid_error err = {{0}};
    double began = monotonic_s();
    switch (wr->kind) {
    case LUCIDD_WRITE_HOLD:
        wr->rc = slurm_io_admin_hold(wr->job_id, &err);
        break;
    case LUCIDD_WRITE_MOVE:
        wr->rc = slurm_io_move(wr->job_id, wr->partition, &err);
        break;
    case LUCIDD_WRITE_START:
        wr->rc = slurm_io_start(wr->job_id, wr->partition, wr->nodes,
                                wr->packed_gpus[0] ? wr->packed_gpus : NULL, wr->share_tres,
                                wr->comment, wr->priority, &err);
        break;
    case LUCIDD_WRITE_AHEAD:
        wr->rc = slurm_io_release_ahead(wr->job_id, wr->partition, wr->nodes, wr->comment,
                                        wr->priority, &err);
        break;
    case LUCIDD_WRITE_PROMOTE:
        wr->rc = slurm_io_promote(wr->job_id, wr->comment, wr->priority,
                                  wr->narrow ? wr->nodes : NULL, &err);
        break;
    default:
        wr->rc = lucid_error_set(&err, "lucidd: job %u: unknown write %d", wr->job_id,
                                 (int)wr->kind);
        break;
    }
    wr->done_at = monotonic_s();
    wr->seconds = wr->done_at - began;
    if (wr->rc < 0)
        memcpy(wr->error, err.msg, sizeof wr->error);
    else
        wr->error[0] = '\0';
}

/* With the lock held: queue[0] made; moved to the outcomes. */
static void finish_head(lucidd_writer *w, const lucidd_write *made)
{
    if (w->ndone == w->dcap) {
        size_t cap = w->dcap ? 2 * w->dcap : 16;
        lucidd_write *grown = realloc(w->done, cap * sizeof *grown);
        if (grown) {
            w->done = grown;
            w->dcap = cap;
        }
    }
    /* Out of memory here loses only the outcome: the write was made, and
     * the engine reads what Slurm did at its next listing. */
    if (w->ndone < w->dcap)
        w->done[w->ndone++] = *made;
    w->nqueue--;
    memmove(w->queue, w->queue + 1, w->nqueue * sizeof *w->queue);
    w->busy = 0;
    pthread_cond_broadcast(&w->made);
}

/* With the lock held: makes queue[0], the lock released meanwhile. */
static void make_head(lucidd_writer *w)
{
    lucidd_write wr = w->queue[0];
    w->busy = 1;
    pthread_mutex_unlock(&w->lock);
    make(&wr);
    pthread_mutex_lock(&w->lock);
    finish_head(w, &wr);
}

static void *writer_thread(void *arg)
{
    lucidd_writer *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->nqueue && !w->stop)
            pthread_cond_wait(&w->wake, &w->lock);
        if (!w->nqueue)
            break; /* stopped, and nothing left to make */
        make_head(w);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

lucidd_writer *lucidd_writer_new(int threaded, lucid_error *err)
{
    lucidd_writer *w = calloc(1, sizeof *w);
    if (!w) {
        lucid_error_set(err, "lucidd: out of memory");
        return NULL;
    }
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    pthread_cond_init(&w->made, NULL);
    w->threaded = threaded;
    if (threaded) {
        int rc = pthread_create(&w->thread, NULL, writer_thread, w);
        if (rc != 0) {
            lucid_error_set(err, "lucidd: cannot start the writer thread: %s", strerror(rc));
            pthread_cond_destroy(&w->made);
            pthread_cond_destroy(&w->wake);
            pthread_mutex_destroy(&w->lock);
            free(w);
            return NULL;
        }
    }
    return w;
}

void lucidd_writer_free(lucidd_writer *w)
{
    if (!w)
        return;
    if (w->threaded) {
        pthread_mutex_lock(&w->lock);
        w->stop = 1;
        pthread_cond_signal(&w->wake);
        pthread_mutex_unlock(&w->lock);
        pthread_join(w->thread, NULL); /* after the queue is made */
    } else {
        lucidd_writer_flush(w);
    }
    pthread_cond_destroy(&w->made);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    free(w->queue);
    free(w->done);
    free(w);
}

int lucidd_writer_post(lucidd_writer *w, const lucidd_write *write)
{
    pthread_mutex_lock(&w->lock);
    if (w->nqueue == w->qcap) {
        size_t cap = w->qcap ? 2 * w->qcap : 16;
        lucidd_write *grown = realloc(w->queue, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&w->lock);
            return -1;
        }
        w->queue = grown;
        w->qcap = cap;
    }
    w->queue[w->nqueue++] = *write;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    return 0;
}

static int queued_locked(const lucidd_writer *w, uint32_t job_id)
{
    for (size_t i = 0; i < w->nqueue; i++)
        if (w->queue[i].job_id == job_id)
            return 1;
    return 0;
}

int lucidd_writer_pending(lucidd_writer *w, uint32_t job_id)
{
    pthread_mutex_lock(&w->lock);
    int pending = queued_locked(w, job_id);
    for (size_t i = 0; !pending && i < w->ndone; i++)
        pending = w->done[i].job_id == job_id;
    pthread_mutex_unlock(&w->lock);
    return pending;
}

void lucidd_writer_settle(lucidd_writer *w, uint32_t job_id)
{
    pthread_mutex_lock(&w->lock);
    while (queued_locked(w, job_id)) {
        if (w->threaded)
            pthread_cond_wait(&w->made, &w->lock);
        else
            make_head(w); /* in order: the writes ahead of the job's first */
    }
    pthread_mutex_unlock(&w->lock);
}

void lucidd_writer_flush(lucidd_writer *w)
{
    pthread_mutex_lock(&w->lock);
    while (w->nqueue) {
        if (w->threaded)
            pthread_cond_wait(&w->made, &w->lock);
        else
            make_head(w);
    }
    pthread_mutex_unlock(&w->lock);
}

size_t lucidd_writer_take(lucidd_writer *w, double before, lucidd_write **out)
{
    *out = NULL;
    pthread_mutex_lock(&w->lock);
    /* Answered in the order made: the ones taken are a prefix. */
    size_t n = 0;
    while (n < w->ndone && w->done[n].done_at < before)
        n++;
    if (n == w->ndone) {
        *out = w->done;
        w->done = NULL;
        w->ndone = w->dcap = 0;
    } else if (n > 0) {
        lucidd_write *taken = malloc(n * sizeof *taken);
        if (taken) { /* else taken at a later tick */
            memcpy(taken, w->done, n * sizeof *taken);
            w->ndone -= n;
            memmove(w->done, w->done + n, w->ndone * sizeof *w->done);
            *out = taken;
        } else {
            n = 0;
        }
    }
    pthread_mutex_unlock(&w->lock);
    return n;
}
