/* reader.c — Slurm's jobs and nodes read on a thread of their own (reader.h). */
#include "reader.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct lucidd_reader {
    pthread_mutex_t lock;
    pthread_cond_t wake;      /* a read asked for, a read taken, or stop */
    pthread_cond_t published; /* a read kept */
    pthread_t thread;
    int threaded, stop;
    char partitions[256];
    char share_gres[64];
    int wanted;               /* a read asked for and not yet begun */
    slurm_job_list mine;      /* refreshed here; its array goes to the engine on a NEW take */
    /* The read kept for the next take (`has`). */
    int has;
    lucidd_read rc;
    lucid_error err;
    double began;
    slurm_job_list meta;      /* mine's counts as of that read (its array not used) */
    slurm_node *nodes;
    long nnodes;
    lucid_error nodes_err;
};

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One read (no lock held: only the reading thread touches `mine`), kept
 * for the next take with the lock held. */
static void read_once(lucidd_reader *r)
{
    lucid_error err = {{0}}, nodes_err = {{0}};
    double began = monotonic_s();
    int rc = slurm_io_jobs_refresh(&r->mine, &err);
    slurm_node *nodes = NULL;
    long nnodes = -1;
    if (rc >= 0)
        nnodes = slurm_io_nodes(r->partitions, r->share_gres[0] ? r->share_gres : NULL, &nodes,
                                &nodes_err);
    if (nnodes < 0)
        nodes = NULL;
    pthread_mutex_lock(&r->lock);
    /* A kept read not taken is replaced (the reader does not read over a
     * NEW one before its take: the wait in reader_thread). */
    free(r->nodes);
    r->has = 1;
    r->rc = rc < 0 ? LUCIDD_READ_FAILED : rc ? LUCIDD_READ_NEW : LUCIDD_READ_UNCHANGED;
    r->err = err;
    r->began = began;
    r->meta = r->mine;
    r->meta.jobs = NULL;
    r->nodes = nodes;
    r->nnodes = nnodes;
    r->nodes_err = nodes_err;
    pthread_cond_broadcast(&r->published);
    pthread_mutex_unlock(&r->lock);
}

static void *reader_thread(void *arg)
{
    lucidd_reader *r = arg;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        /* A NEW read not yet taken holds `mine`'s array: no read over it. */
        while (!r->stop && !(r->wanted && !(r->has && r->rc == LUCIDD_READ_NEW)))
            pthread_cond_wait(&r->wake, &r->lock);
        if (r->stop)
            break;
        r->wanted = 0;
        pthread_mutex_unlock(&r->lock);
        read_once(r);
        pthread_mutex_lock(&r->lock);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

lucidd_reader *lucidd_reader_new(const char *partitions, const char *share_gres, int threaded,
                                 lucid_error *err)
{
    lucidd_reader *r = calloc(1, sizeof *r);
    if (!r) {
        lucid_error_set(err, "lucidd: out of memory");
        return NULL;
    }
    snprintf(r->partitions, sizeof r->partitions, "%s", partitions);
    snprintf(r->share_gres, sizeof r->share_gres, "%s", share_gres ? share_gres : "");
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->wake, NULL);
    pthread_cond_init(&r->published, NULL);
    r->threaded = threaded;
    if (threaded) {
        int rc = pthread_create(&r->thread, NULL, reader_thread, r);
        if (rc != 0) {
            lucid_error_set(err, "lucidd: cannot start the reader thread: %s", strerror(rc));
            pthread_cond_destroy(&r->published);
            pthread_cond_destroy(&r->wake);
            pthread_mutex_destroy(&r->lock);
            free(r);
            return NULL;
        }
    }
    return r;
}

void lucidd_reader_free(lucidd_reader *r)
{
    if (!r)
        return;
    if (r->threaded) {
        pthread_mutex_lock(&r->lock);
        r->stop = 1;
        pthread_cond_signal(&r->wake);
        pthread_mutex_unlock(&r->lock);
        pthread_join(r->thread, NULL);
    }
    pthread_cond_destroy(&r->published);
    pthread_cond_destroy(&r->wake);
    pthread_mutex_destroy(&r->lock);
    slurm_io_job_list_free(&r->mine);
    free(r->nodes);
    free(r);
}

void lucidd_reader_wake(lucidd_reader *r)
{
    pthread_mutex_lock(&r->lock);
    r->wanted = 1;
    pthread_cond_signal(&r->wake);
    pthread_mutex_unlock(&r->lock);
}

void lucidd_reader_read(lucidd_reader *r)
{
    if (!r->threaded)
        read_once(r);
}

lucidd_read lucidd_reader_take(lucidd_reader *r, int wait, slurm_job_list *jobs, double *began,
                               slurm_node **nodes, long *nnodes, lucid_error *nodes_err,
                               lucid_error *err)
{
    if (wait && !r->threaded) {
        pthread_mutex_lock(&r->lock);
        int has = r->has;
        pthread_mutex_unlock(&r->lock);
        if (!has)
            read_once(r);
    }
    pthread_mutex_lock(&r->lock);
    if (wait && r->threaded && !r->has) {
        r->wanted = 1;
        pthread_cond_signal(&r->wake);
        while (!r->has && !r->stop)
            pthread_cond_wait(&r->published, &r->lock);
    }
    if (!r->has) {
        pthread_mutex_unlock(&r->lock);
        return LUCIDD_READ_NONE;
    }
    lucidd_read rc = r->rc;
    if (rc == LUCIDD_READ_NEW) {
        /* The reader is idle (it reads nothing over a NEW read before
         * this take): its array is the new listing. */
        slurm_job *array = jobs->jobs;
        long capacity = jobs->capacity;
        *jobs = r->meta;
        jobs->jobs = r->mine.jobs;
        r->mine.jobs = array;
        r->mine.capacity = capacity;
    } else {
        jobs->reads = r->meta.reads;
        jobs->unchanged = r->meta.unchanged;
    }
    if (rc == LUCIDD_READ_FAILED) {
        *err = r->err;
        free(r->nodes);
    } else {
        *began = r->began;
        free(*nodes);
        *nodes = r->nodes;
        *nnodes = r->nnodes;
        *nodes_err = r->nodes_err;
    }
    r->nodes = NULL;
    r->has = 0;
    pthread_cond_signal(&r->wake);
    pthread_mutex_unlock(&r->lock);
    return rc;
}
