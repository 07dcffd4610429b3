/* test_engine.c — lucidd's tick (src/daemon/engine.c) against an in-memory
 * Slurm (tests/fakes/fake_slurm_io.c): what lucid does to each job, and
 * what it records, worked out by hand for small clusters. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../src/daemon/daemon.h"
#include "../../src/daemon/models.h"
#include "../fakes/fake_slurm_io.h"
#include "testutil.h"

void lucidd_log(const char *fmt, ...)
{
    (void)fmt; /* the engine's log lines are not what these tests check */
}

void lucidd_log_level(int priority, const char *fmt, ...)
{
    (void)priority;
    (void)fmt;
}

static lucidd d; /* large (latency ring): not on the stack */
static char dir[512];

static void pause_s(double s)
{
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* A daemon on a fresh state store: profiling node p1 (8 GPUs), main nodes
 * n1, n2 (8 each), packing off, profiling limit 0.3 s, 100 ms ticks. */
static int setup(void **state)
{
    (void)state;
    fake_reset();
    fake_node("p1", "profiling", 8);
    fake_node("n1", "main", 8);
    fake_node("n2", "main", 8);
    memset(&d, 0, sizeof d);
    test_tmpdir(dir, sizeof dir, "lucidd-engine");
    static char db[600], heartbeat[600];
    snprintf(db, sizeof db, "%s/state.db", dir);
    snprintf(heartbeat, sizeof heartbeat, "%s/heartbeat", dir);
    d.cfg = (lucidd_config){.state_path = db, .main_partition = "main",
                            .profiling_partition = "profiling", .profile_limit_s = 0.3,
                            .gpu_limit = 8, .gpu_memory_mib = 24576, .score_sum = 2,
                            .priority_ratio = 2, .packing_mode = 0, .tick_ms = 100,
                            .default_estimate_s = 3600, .retrain_period_s = 604800,
                            .min_history = 1000, .heartbeat_path = heartbeat,
                            .forget_ended_s = 3600};
    lucid_error err = {{0}};
    d.state = lucid_state_open(db, &err);
    assert_non_null(d.state);
    d.metrics = lucid_gpumetrics_open_auto(dir);
    lucidd_models_config models = {.retrain_period_s = 604800, .min_history = 1000, .bags = 1,
                                   .seed = 42, .vc = "main"};
    d.models = lucidd_models_open(&models, d.state, 1000, &err);
    assert_non_null(d.models);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    lucidd_models_close(d.models);
    lucid_gpumetrics_close(d.metrics);
    lucid_state_close(d.state);
    engine_free(&d);
    return 0;
}

static const lucid_job_record *rec(uint32_t id)
{
    lucidd_job *job = engine_find(&d, id);
    assert_non_null(job);
    return &job->rec;
}

static void assert_phase(uint32_t id, lucid_phase phase)
{
    if (rec(id)->phase != phase)
        fail_msg("job %u: phase %s, want %s (%s)", id, lucid_phase_name(rec(id)->phase),
                 lucid_phase_name(phase), rec(id)->reason);
}

static unsigned long heartbeat_intake(void)
{
    char path[700], line[128] = "";
    snprintf(path, sizeof path, "%s/heartbeat", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    const char *at = strstr(line, " intake=");
    assert_non_null(at);
    return strtoul(at + 8, NULL, 10);
}

/* Job 1 (1 GPU) in the profiler and job 2 (16 GPUs) running on both main
 * nodes, after one tick: a job submitted next waits in the profile queue. */
static void fill_profiler_and_main(void)
{
    fake_submit(1, "alice", 1, 1, 1);
    fake_submit(2, "bob", 16, 8, 2);
    engine_tick(&d);
    fake_run(2, 1100);
}

/* Every job taken in is put on an operator's hold (its owner cannot
 * release it); the heartbeat names the highest such job. */
static void intake_holds_as_operator_and_places(void **state)
{
    (void)state;
    fake_submit(1, "alice", 1, 1, 1);
    fake_submit(2, "bob", 16, 8, 2);
    engine_tick(&d);
    assert_true(fake_called("hold 1") && fake_called("hold 2"));
    assert_true(fake_called("start 1 profiling p1"));
    assert_true(fake_called("start 2 main n1,n2"));
    assert_phase(1, LUCID_PHASE_PROFILING);
    assert_phase(2, LUCID_PHASE_RUNNING);
    assert_true(engine_find(&d, 2)->releasing); /* Slurm has not started it yet */
    assert_int_equal(heartbeat_intake(), 2);
    /* Released by an operator behind lucid's back while waiting: held again. */
    fake_submit(3, "carol", 8, 8, 1); /* main nodes are taken: it waits */
    fake_run(2, 1100);
    engine_tick(&d);
    assert_phase(3, LUCID_PHASE_PROFILE_QUEUE); /* the profiler is busy with job 1 */
    fake.log[0] = '\0';
    fake_job(3)->held = fake_job(3)->admin_held = 0;
    engine_tick(&d);
    assert_true(fake_called("hold 3"));
    assert_phase(3, LUCID_PHASE_PROFILE_QUEUE);
}

/* Slurm holds an update of a job a whole second while slurmdbd is giving it
 * its accounting record: a job submitted (or requeued) within the grace
 * keeps the plugin's hold and comment, the heartbeat's watermark below it
 * (so the plugin still refuses its owner's release); after the grace lucid
 * holds it and writes its comment.  A job already taken in that is found
 * on an owner's hold (a requeue's) is held at once. */
static void new_jobs_wait_out_slurms_accounting(void **state)
{
    (void)state;
    fill_profiler_and_main();
    assert_int_equal(heartbeat_intake(), 2);
    time_t now = time(NULL);
    fake_submit(3, "carol", 8, 8, 1)->submit_time = now - 2; /* waits: main is full */
    fake_submit(4, "carol", 8, 8, 1)->submit_time = now;
    fake_submit(5, "dave", 8, 8, 1); /* an array task split from an old array */
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_phase(3, LUCID_PHASE_PROFILE_QUEUE);
    assert_phase(4, LUCID_PHASE_PROFILE_QUEUE);
    assert_false(fake_called("hold 3") || fake_called("hold 4"));
    assert_true(fake_called("hold 5"));
    assert_false(fake_job(3)->admin_held);
    assert_string_equal(fake_job(3)->admin_comment, "");
    assert_true(strncmp(fake_job(5)->admin_comment, "lucid: profile-queue", 20) == 0);
    assert_int_equal(heartbeat_intake(), 2); /* job 5's hold does not lift the guard on 3 */
    /* Past the grace: held and commented, the watermark over both. */
    fake_job(3)->submit_time = now - LUCIDD_ACCOUNTING_GRACE_S - 1;
    fake_job(4)->submit_time = now - LUCIDD_ACCOUNTING_GRACE_S - 1;
    engine_tick(&d);
    assert_true(fake_job(3)->admin_held && fake_job(4)->admin_held);
    assert_true(strncmp(fake_job(3)->admin_comment, "lucid: profile-queue", 20) == 0);
    assert_int_equal(heartbeat_intake(), 5);
    /* Taken in, then on its owner's hold with a fresh SubmitTime (as a
     * requeue leaves it): held again at once. */
    fake_job(3)->admin_held = 0;
    fake_job(3)->submit_time = time(NULL);
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_true(fake_called("hold 3"));
}

/* A burst: at most HOLD_TIME_S (0.1 s) of a tick goes to lucid's holds
 * (each 30 ms here); the rest keep the plugin's hold, oldest held first at
 * the next ticks, the watermark just below the first one left. */
static void a_burst_is_held_a_slice_a_tick(void **state)
{
    (void)state;
    for (uint32_t id = 1; id <= 12; id++)
        fake_submit(id, "alice", 8, 8, 1);
    fake.hold_us = 30000;
    fake.log[0] = '\0';
    engine_tick(&d);
    char entry[32];
    int held = 0;
    for (uint32_t id = 1; id <= 12; id++) {
        snprintf(entry, sizeof entry, "hold %u", id);
        if (!fake_called(entry))
            break;
        held++;
    }
    for (uint32_t id = (uint32_t)held + 1; id <= 12; id++) {
        snprintf(entry, sizeof entry, "hold %u", id);
        assert_false(fake_called(entry));
        assert_false(fake_job(id)->admin_held);
    }
    assert_true(held >= 1 && held <= 5);
    assert_int_equal(heartbeat_intake(), held);
    for (int tick = 0; tick < 12 && !fake_called("hold 12"); tick++)
        engine_tick(&d);
    for (uint32_t id = 1; id <= 12; id++) {
        snprintf(entry, sizeof entry, "hold %u", id);
        assert_true(fake_called(entry));
    }
    assert_int_equal(heartbeat_intake(), 12);
}

/* The limit counts only time lucid saw the job run with Slurm answering;
 * a job that ended just before the requeue reached Slurm is not requeued. */
static void profiling_limit_counts_observed_time(void **state)
{
    (void)state;
    fake_submit(1, "alice", 1, 1, 1);
    fake_submit(2, "alice", 1, 1, 1);
    engine_tick(&d);
    fake_run(1, 1000);
    fake_run(2, 1000);
    engine_tick(&d);
    /* Slurm unreachable for 0.5 s (> the limit): nothing counted. */
    fake.up = 0;
    for (int i = 0; i < 5; i++) {
        pause_s(0.1);
        engine_tick(&d);
    }
    assert_true(d.slurm_down_since > 0);
    fake.up = 1;
    engine_tick(&d);
    assert_true(rec(1)->profiled_s < 0.15);
    assert_phase(1, LUCID_PHASE_PROFILING);
    /* Slurm is back (no grace in this test: the job's start is long before). */
    d.slurm_back_at = 0;
    fake.ends_at_requeue = 2;
    for (int i = 0; i < 6 && rec(1)->phase == LUCID_PHASE_PROFILING; i++) {
        pause_s(0.1);
        engine_tick(&d);
    }
    assert_true(rec(1)->profiled_s >= 0.3 && rec(1)->profiled_s < 0.8);
    assert_true(fake_called("requeue 1"));
    assert_phase(1, LUCID_PHASE_MOVING);
    assert_true(fake_called("norequeue 2")); /* it ended as lucid checked */
    engine_tick(&d);
    assert_true(fake_called("move 1 main"));
    assert_true(fake_called("start 1 main n1")); /* main is empty: it starts at once */
    assert_phase(2, LUCID_PHASE_DONE_IN_PROFILER);
    assert_string_equal(rec(2)->outcome, "completed");
    assert_false(fake_called("requeue 2"));
}

/* The writes queued off the tick are made while slurmctld is down: each
 * is refused; slurmctld answers again after. */
static void refused_writes(void)
{
    fake.down_at_call = fake.job_calls + 1;
    lucidd_writer_flush(d.writer);
    fake.up = 1;
    fake.down_at_call = 0;
}

/* Decisions recorded and not yet acknowledged (what a restart re-applies). */
static long unacknowledged(void)
{
    lucid_decision_record *list = NULL;
    lucid_error err = {{0}};
    long n = lucid_state_list_decisions(d.state, 0, &list, &err);
    assert_true(n >= 0);
    free(list);
    return n;
}

/* --async-writes: a start or a move of a job inside Slurm's accounting
 * window (submitted or requeued seconds ago, where slurmctld may hold an
 * update a second) is written off the tick.  The tick records it and goes
 * on; lucid's record is what it decided; the job is not judged on Slurm's
 * listings (still held there) until the write's outcome is taken, and then
 * its decision is acknowledged.  A start Slurm refused is placed again, a
 * move made again; stopping makes the writes still queued. */
static void writes_in_the_accounting_window_leave_the_tick(void **state)
{
    (void)state;
    lucid_error err = {{0}};
    d.writer = lucidd_writer_new(0, &err); /* no thread: writes wait for a flush */
    assert_non_null(d.writer);
    d.cfg.gpu_limit = 0; /* nothing profiled, for now */
    engine_tick(&d);
    /* Job 1, submitted long ago: written by the tick, as without a writer. */
    fake_submit(1, "a", 8, 8, 1);
    engine_tick(&d);
    assert_true(fake_called("start 1 main n1"));
    assert_int_equal(unacknowledged(), 0);
    /* Job 2, submitted now: recorded, not written. */
    slurm_job *j2 = fake_submit(2, "b", 8, 8, 1);
    j2->submit_time = time(NULL);
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_phase(2, LUCID_PHASE_RUNNING);
    assert_false(fake_called("start 2"));
    assert_true(fake_job(2)->held);
    assert_int_equal(unacknowledged(), 1);
    /* Slurm still holds it, and the write is not made: not taken back,
     * not written twice. */
    engine_tick(&d);
    engine_tick(&d);
    assert_false(fake_called("take-back 2"));
    assert_false(fake_called("start 2"));
    assert_phase(2, LUCID_PHASE_RUNNING);
    lucidd_writer_flush(d.writer);
    assert_true(fake_called("start 2 main n2"));
    assert_false(fake_job(2)->held);
    engine_tick(&d);
    assert_int_equal(unacknowledged(), 0);
    assert_int_equal(d.writes_made, 1);
    assert_false(engine_find(&d, 2)->start_unapplied);
    fake_run(1, time(NULL));
    fake_run(2, time(NULL));
    engine_tick(&d);
    assert_phase(2, LUCID_PHASE_RUNNING);

    /* Job 3 is profiled while main is full, and requeued: Slurm's
     * SubmitTime is the requeue's, so its move is written off the tick. */
    d.cfg.gpu_limit = 8;
    fake_submit(3, "c", 1, 1, 1);
    engine_tick(&d);
    assert_true(fake_called("start 3 profiling p1"));
    fake_run(3, time(NULL));
    for (int i = 0; i < 8 && rec(3)->phase == LUCID_PHASE_PROFILING; i++) {
        pause_s(0.1);
        engine_tick(&d);
    }
    assert_phase(3, LUCID_PHASE_MOVING);
    fake_job(3)->submit_time = time(NULL);
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_false(fake_called("move 3"));
    /* Still moving, also in the store, until Slurm has moved it: a lucidd
     * killed now moves it again at its restart. */
    assert_phase(3, LUCID_PHASE_MOVING);
    lucid_job_record stored;
    assert_int_equal(lucid_state_get_job(d.state, 3, &stored, &err), 1);
    assert_int_equal(stored.phase, LUCID_PHASE_MOVING);
    /* Refused (slurmctld stopped as it was made): moved again from Slurm's
     * state at the next tick, off it again. */
    refused_writes();
    assert_false(fake_called("move 3"));
    engine_tick(&d);
    assert_int_equal(d.writes_failed, 1);
    assert_phase(3, LUCID_PHASE_MOVING);
    engine_tick(&d); /* Slurm answers again: the move is made again (posted) */
    assert_false(fake_called("move 3"));
    lucidd_writer_flush(d.writer);
    assert_true(fake_called("move 3 main"));
    engine_tick(&d);
    assert_phase(3, LUCID_PHASE_MAIN_QUEUE);
    assert_string_equal(fake_job(3)->partition, "main");

    /* Main frees: job 3's start falls in the window too.  Refused, it is
     * placed again (taken back, then started). */
    fake_end(1, SJ_COMPLETED, "COMPLETED", time(NULL));
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_phase(3, LUCID_PHASE_RUNNING);
    assert_false(fake_called("start 3"));
    refused_writes();
    engine_tick(&d);
    assert_int_equal(d.writes_failed, 2);
    engine_tick(&d);
    assert_true(fake_called("take-back 3"));
    assert_int_equal(unacknowledged(), 1); /* the refused start: a restart would re-apply it */
    /* Placed again (n1 is avoided a moment: on n2, now free), off the
     * tick; lucidd stops before it is made: the stop makes it and
     * acknowledges it. */
    fake_end(2, SJ_COMPLETED, "COMPLETED", time(NULL));
    for (int i = 0; i < 3 && !lucidd_writer_pending(d.writer, 3); i++)
        engine_tick(&d);
    assert_true(lucidd_writer_pending(d.writer, 3));
    engine_stop_io(&d);
    assert_null(d.writer);
    assert_true(fake_called("start 3 main n2"));
    assert_false(fake_job(3)->held);
    assert_int_equal(unacknowledged(), 1); /* only the refused start */
}

/* --async-writes on: every start, move and release ahead is written off the
 * tick, not only those inside Slurm's accounting window (a busy slurmctld
 * takes each of a start's three updates tens of ms).  A start's wait for
 * Slurm (--release-timeout) counts from when Slurm had it, not from the
 * decision. */
static void every_write_leaves_the_tick_with_async_writes_on(void **state)
{
    (void)state;
    lucid_error err = {{0}};
    d.writer = lucidd_writer_new(0, &err); /* no thread: writes wait for a flush */
    assert_non_null(d.writer);
    d.cfg.async_writes = LUCIDD_WRITES_ALL;
    d.cfg.gpu_limit = 0; /* nothing profiled */
    d.cfg.release_timeout_s = 0.3;
    fake_submit(1, "a", 8, 8, 1); /* submitted long ago: outside the window */
    engine_tick(&d);
    assert_phase(1, LUCID_PHASE_RUNNING);
    assert_false(fake_called("start 1"));
    assert_true(lucidd_writer_pending(d.writer, 1));
    assert_int_equal(unacknowledged(), 1);
    pause_s(0.4); /* the writer is behind: longer than the timeout */
    lucidd_writer_flush(d.writer);
    assert_true(fake_called("start 1 main n1"));
    fake.log[0] = '\0';
    engine_tick(&d);
    /* Taken: acknowledged, and Slurm has had it a moment only. */
    assert_int_equal(unacknowledged(), 0);
    assert_int_equal(d.writes_made, 1);
    assert_false(fake_called("take-back 1"));
    assert_phase(1, LUCID_PHASE_RUNNING);
    pause_s(0.4);
    engine_tick(&d);
    assert_true(fake_called("take-back 1")); /* now past the timeout, Slurm's */
    /* With the window only (the config zeroed in code), a job submitted
     * long ago is written by the tick. */
    d.cfg.async_writes = LUCIDD_WRITES_WINDOW;
    lucidd_writer_flush(d.writer);
    engine_tick(&d);
    fake_submit(2, "b", 8, 8, 1);
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_true(fake_called("start 2 main n1")); /* on the tick: job 1 went to n2 */
}

/* --async-reads: the tick decides on the newest listing the reader has,
 * which may have been read before the writes of the tick before.  A job
 * lucid wrote to after that read began is not judged on it (its start is
 * not taken for one that never reached Slurm) and keeps its GPUs; a
 * listing read after the writes judges it. */
static void a_listing_older_than_a_write_judges_nothing_of_it(void **state)
{
    (void)state;
    lucid_error err = {{0}};
    d.reader = lucidd_reader_new("main,profiling", NULL, 0, &err); /* reads when told */
    assert_non_null(d.reader);
    d.cfg.gpu_limit = 0; /* nothing profiled */
    fake_submit(9, "x", 8, 8, 1);
    fake_submit(10, "x", 8, 8, 1);
    engine_tick(&d); /* the first listing is waited for */
    assert_true(fake_called("start 9 main n1"));
    assert_true(fake_called("start 10 main n2"));
    fake_run(9, time(NULL));
    fake_run(10, time(NULL));
    fake_submit(1, "a", 8, 8, 1);
    fake_submit(2, "b", 8, 8, 1);
    fake_submit(3, "c", 8, 8, 1);
    lucidd_reader_read(d.reader);
    engine_tick(&d); /* taken in, on lucid's hold; main is full */
    assert_phase(1, LUCID_PHASE_MAIN_QUEUE);
    assert_true(fake_job(1)->admin_held);
    fake_end(9, SJ_COMPLETED, "COMPLETED", time(NULL));
    fake_end(10, SJ_COMPLETED, "COMPLETED", time(NULL));
    lucidd_reader_read(d.reader);
    engine_tick(&d);
    assert_true(fake_called("start 1 main n1"));
    assert_true(fake_called("start 2 main n2"));
    assert_phase(3, LUCID_PHASE_MAIN_QUEUE);
    /* No read since: the same listing, where jobs 1 and 2 are on lucid's
     * hold (judged on it, their starts would look lost: taken back). */
    fake_submit(4, "d", 8, 8, 1);
    fake.log[0] = '\0';
    engine_tick(&d);
    engine_tick(&d);
    assert_false(fake_called("take-back 1"));
    assert_false(fake_called("take-back 2"));
    assert_phase(1, LUCID_PHASE_RUNNING);
    assert_phase(2, LUCID_PHASE_RUNNING);
    assert_false(fake_called("start 3")); /* n1 and n2 are taken */
    assert_null(engine_find(&d, 4));      /* not in that listing */
    /* A listing read now: jobs 1 and 2 released, job 4 new. */
    lucidd_reader_read(d.reader);
    engine_tick(&d);
    assert_true(engine_find(&d, 1)->releasing);
    assert_phase(4, LUCID_PHASE_MAIN_QUEUE);
    assert_false(fake_called("take-back 1"));
    assert_false(fake_called("start 3"));
    /* Job 1 ends in Slurm: seen only at a read after. */
    fake_run(1, time(NULL));
    fake_run(2, time(NULL));
    fake_end(1, SJ_COMPLETED, "COMPLETED", time(NULL));
    engine_tick(&d);
    assert_phase(1, LUCID_PHASE_RUNNING);
    lucidd_reader_read(d.reader);
    engine_tick(&d);
    assert_phase(1, LUCID_PHASE_DONE);
    assert_true(fake_called("start 3 main n1"));
    assert_int_equal(d.listing.reads, 5);
}

/* A start written off the tick keeps its GPUs: until Slurm has it, Slurm's
 * listing shows the job held and its GPUs free, and the next tick must not
 * give them to another job (found in review: only a released job's GPUs
 * were counted as promised). */
static void a_start_off_the_tick_keeps_its_gpus(void **state)
{
    (void)state;
    lucid_error err = {{0}};
    d.writer = lucidd_writer_new(0, &err); /* no thread: writes wait for a flush */
    assert_non_null(d.writer);
    d.cfg.gpu_limit = 0; /* nothing profiled */
    fake_submit(1, "a", 8, 8, 1)->submit_time = time(NULL); /* in the accounting window */
    engine_tick(&d);
    assert_phase(1, LUCID_PHASE_RUNNING);
    assert_string_equal(rec(1)->node_list, "n1");
    assert_true(lucidd_writer_pending(d.writer, 1));
    fake_submit(2, "b", 8, 8, 1);
    fake_submit(3, "c", 8, 8, 1);
    fake.log[0] = '\0';
    engine_tick(&d);
    /* Job 2 takes n2; job 3 finds no node: n1 is job 1's. */
    assert_true(fake_called("start 2 main n2"));
    assert_false(fake_called("start 3"));
    assert_phase(3, LUCID_PHASE_MAIN_QUEUE);
    lucidd_writer_flush(d.writer);
    assert_true(fake_called("start 1 main n1"));
    engine_tick(&d);
    assert_phase(3, LUCID_PHASE_MAIN_QUEUE);
    assert_false(fake_called("start 3"));
}

/* A waiting job's reason changes whenever the job ahead of it does (in a
 * burst, for a thousand jobs a tick): clients read it from memory, and the
 * state store gets a change of reason alone at most every
 * ENGINE_REASON_STORE_S; a phase change is stored at once. */
static void a_reason_alone_is_stored_at_most_every_30_s(void **state)
{
    (void)state;
    fake_submit(1, "a", 8, 8, 1); /* fills the profiler */
    fake_submit(2, "b", 16, 8, 2); /* fills main */
    engine_tick(&d);
    fake_run(1, time(NULL));
    fake_run(2, time(NULL));
    fake_submit(3, "c", 4, 4, 1);
    engine_tick(&d);
    assert_phase(3, LUCID_PHASE_PROFILE_QUEUE);
    lucid_job_record stored;
    lucid_error err = {{0}};
    /* Taken in and stored ("waiting for the profiler"); the decision's
     * reason in the same tick waits its turn. */
    assert_int_equal(lucid_state_get_job(d.state, 3, &stored, &err), 1);
    assert_string_equal(stored.reason, "waiting for the profiler");
    assert_string_equal(rec(3)->reason, "waiting for 4 free GPUs on the profiling partition");
    engine_find(&d, 3)->stored_at -= ENGINE_REASON_STORE_S;
    engine_tick(&d);
    assert_int_equal(lucid_state_get_job(d.state, 3, &stored, &err), 1);
    assert_string_equal(stored.reason, rec(3)->reason);
    char first[sizeof stored.reason];
    snprintf(first, sizeof first, "%s", stored.reason);
    fake_submit(4, "d", 2, 2, 1); /* fewer GPUs: the profiler's new head */
    engine_tick(&d);
    assert_non_null(strstr(rec(3)->reason, "behind job 4"));
    assert_int_equal(lucid_state_get_job(d.state, 3, &stored, &err), 1);
    assert_string_equal(stored.reason, first); /* not yet */
    engine_find(&d, 3)->stored_at -= ENGINE_REASON_STORE_S;
    engine_tick(&d);
    assert_int_equal(lucid_state_get_job(d.state, 3, &stored, &err), 1);
    assert_string_equal(stored.reason, rec(3)->reason);
    /* At most so many reasons alone a tick (here 2 of jobs 3, 5, 6, 7);
     * the rest at the next. */
    for (uint32_t id = 5; id <= 7; id++)
        fake_submit(id, "e", 4, 4, 1);
    engine_tick(&d);
    fake_submit(8, "f", 1, 1, 1); /* the profiler's new head: every reason changes */
    engine_tick(&d);
    d.reasons_per_flush = 2;
    int changed = 0;
    for (uint32_t id = 3; id <= 7; id++) {
        if (id == 4)
            continue;
        assert_true(engine_find(&d, id)->reason_dirty);
        engine_find(&d, id)->stored_at -= ENGINE_REASON_STORE_S;
    }
    engine_tick(&d);
    for (uint32_t id = 3; id <= 7; id++) {
        if (id == 4)
            continue;
        assert_int_equal(lucid_state_get_job(d.state, id, &stored, &err), 1);
        changed += strcmp(stored.reason, rec(id)->reason) == 0;
    }
    assert_int_equal(changed, 2);
    engine_tick(&d);
    changed = 0;
    for (uint32_t id = 3; id <= 7; id++) {
        if (id == 4)
            continue;
        assert_int_equal(lucid_state_get_job(d.state, id, &stored, &err), 1);
        changed += strcmp(stored.reason, rec(id)->reason) == 0;
    }
    assert_int_equal(changed, 4);
    /* A phase change is stored at once. */
    fake_end(1, SJ_COMPLETED, "COMPLETED", time(NULL));
    engine_tick(&d);
    assert_phase(4, LUCID_PHASE_PROFILING);
    assert_int_equal(lucid_state_get_job(d.state, 4, &stored, &err), 1);
    assert_int_equal(stored.phase, LUCID_PHASE_PROFILING);
}

/* The reader's own thread: a take that waits gets a read begun after it
 * asked; a take with nothing read since gets NONE; a new read's jobs come
 * with their nodes and the read's moment; a failed read says why and
 * leaves the listing as it was. */
static void the_reader_thread_reads_when_asked(void **state)
{
    (void)state;
    fake_submit(1, "a", 8, 8, 1);
    fake_submit(2, "a", 8, 8, 1);
    lucid_error err = {{0}}, nodes_err = {{0}};
    lucidd_reader *r = lucidd_reader_new("main,profiling", NULL, 1, &err);
    assert_non_null(r);
    slurm_job_list jobs = {0};
    slurm_node *nodes = NULL;
    long nnodes = 0;
    double began = 0;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double asked = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    assert_int_equal(lucidd_reader_take(r, 1, &jobs, &began, &nodes, &nnodes, &nodes_err, &err),
                     LUCIDD_READ_NEW);
    assert_true(began >= asked);
    assert_int_equal(jobs.count, 2);
    assert_int_equal(jobs.jobs[1].id, 2);
    assert_int_equal(nnodes, 3);
    assert_non_null(nodes);
    assert_string_equal(nodes[1].name, "n1");
    assert_int_equal(lucidd_reader_take(r, 0, &jobs, &began, &nodes, &nnodes, &nodes_err, &err),
                     LUCIDD_READ_NONE);
    /* A third job; asked again: the new listing, its moment later. */
    fake_submit(3, "a", 8, 8, 1);
    double first = began;
    lucidd_reader_wake(r);
    assert_int_equal(lucidd_reader_take(r, 1, &jobs, &began, &nodes, &nnodes, &nodes_err, &err),
                     LUCIDD_READ_NEW);
    assert_true(began > first);
    assert_int_equal(jobs.count, 3);
    assert_int_equal(jobs.jobs[2].id, 3);
    assert_int_equal(jobs.reads, 2);
    /* slurmctld down: FAILED with Slurm's error, the listing kept. */
    fake.up = 0;
    lucidd_reader_wake(r);
    err = (lucid_error){{0}};
    assert_int_equal(lucidd_reader_take(r, 1, &jobs, &began, &nodes, &nnodes, &nodes_err, &err),
                     LUCIDD_READ_FAILED);
    assert_true(err.msg[0] != '\0');
    assert_int_equal(jobs.count, 3);
    assert_non_null(nodes);
    fake.up = 1;
    /* "No change": UNCHANGED, the listing kept, the nodes read anew. */
    fake.unchanged = 1;
    fake.nodes[1].gpus_used = 4;
    lucidd_reader_wake(r);
    assert_int_equal(lucidd_reader_take(r, 1, &jobs, &began, &nodes, &nnodes, &nodes_err, &err),
                     LUCIDD_READ_UNCHANGED);
    assert_int_equal(jobs.count, 3);
    assert_int_equal(jobs.jobs[2].id, 3);
    assert_int_equal(nodes[1].gpus_used, 4);
    assert_int_equal(jobs.unchanged, 1);
    lucidd_reader_free(r);
    slurm_io_job_list_free(&jobs);
    free(nodes);
}

/* Outcomes are taken up to a moment (the listing's read began then): those
 * answered later stay pending, in order. */
static void writes_are_taken_up_to_a_moment(void **state)
{
    (void)state;
    fake_submit(5, "a", 1, 1, 1);
    fake_submit(6, "a", 1, 1, 1);
    lucid_error err = {{0}};
    lucidd_writer *w = lucidd_writer_new(0, &err);
    assert_non_null(w);
    lucidd_write hold5 = {.kind = LUCIDD_WRITE_HOLD, .job_id = 5};
    lucidd_write hold6 = {.kind = LUCIDD_WRITE_HOLD, .job_id = 6};
    assert_int_equal(lucidd_writer_post(w, &hold5), 0);
    lucidd_writer_flush(w);
    pause_s(0.01);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double between = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    pause_s(0.01);
    assert_int_equal(lucidd_writer_post(w, &hold6), 0);
    lucidd_writer_flush(w);
    lucidd_write *done = NULL;
    assert_int_equal(lucidd_writer_take(w, between, &done), 1);
    assert_int_equal(done[0].job_id, 5);
    assert_true(done[0].done_at < between);
    free(done);
    assert_false(lucidd_writer_pending(w, 5));
    assert_true(lucidd_writer_pending(w, 6));
    assert_int_equal(lucidd_writer_take(w, between, &done), 0);
    assert_int_equal(lucidd_writer_take(w, INFINITY, &done), 1);
    assert_int_equal(done[0].job_id, 6);
    free(done);
    assert_false(lucidd_writer_pending(w, 6));
    lucidd_writer_free(w);
}

/* The writer's own thread: a job's writes reach Slurm in the order posted;
 * settle returns once that job's are made (others may still wait); a
 * write's outcome is pending until taken; the outcomes come in order. */
static void the_writer_thread_keeps_order(void **state)
{
    (void)state;
    fake_submit(5, "a", 1, 1, 1);
    fake_submit(6, "b", 1, 1, 1);
    lucid_error err = {{0}};
    lucidd_writer *w = lucidd_writer_new(1, &err);
    assert_non_null(w);
    fake.hold_us = 50000; /* a busy slurmctld: each hold takes 50 ms */
    lucidd_write hold = {.kind = LUCIDD_WRITE_HOLD, .job_id = 5};
    lucidd_write move = {.kind = LUCIDD_WRITE_MOVE, .job_id = 5, .partition = "main"};
    lucidd_write start = {.kind = LUCIDD_WRITE_START, .job_id = 6, .decision = 9,
                          .partition = "main", .nodes = "n2", .comment = "lucid: running"};
    lucidd_write hold6 = {.kind = LUCIDD_WRITE_HOLD, .job_id = 6};
    assert_int_equal(lucidd_writer_post(w, &hold), 0);
    assert_int_equal(lucidd_writer_post(w, &move), 0);
    assert_int_equal(lucidd_writer_post(w, &start), 0);
    assert_int_equal(lucidd_writer_post(w, &hold6), 0);
    lucidd_writer_settle(w, 5);
    assert_non_null(strstr(fake.log, "hold 5;move 5 main"));
    assert_true(lucidd_writer_pending(w, 5)); /* made, outcome not taken */
    lucidd_writer_flush(w);
    assert_non_null(strstr(fake.log, "hold 5;move 5 main;start 6 main n2;hold 6"));
    lucidd_write *done = NULL;
    size_t n = lucidd_writer_take(w, 0.0, &done); /* none answered before time 0 */
    assert_int_equal(n, 0);
    assert_null(done);
    assert_true(lucidd_writer_pending(w, 5));
    n = lucidd_writer_take(w, INFINITY, &done);
    assert_int_equal(n, 4);
    assert_int_equal(done[0].kind, LUCIDD_WRITE_HOLD);
    assert_int_equal(done[2].job_id, 6);
    assert_int_equal(done[2].decision, 9);
    assert_int_equal(done[2].rc, 0);
    assert_true(done[0].seconds >= 0.04);
    free(done);
    assert_false(lucidd_writer_pending(w, 5));
    assert_false(lucidd_writer_pending(w, 6));
    /* A write Slurm refuses comes back with its error; queued writes are
     * made before the writer is freed. */
    fake.hold_us = 0;
    lucidd_write gone = {.kind = LUCIDD_WRITE_MOVE, .job_id = 77, .partition = "main"};
    assert_int_equal(lucidd_writer_post(w, &gone), 0);
    lucidd_writer_flush(w);
    n = lucidd_writer_take(w, INFINITY, &done);
    assert_int_equal(n, 1);
    assert_int_equal(done[0].rc, -1);
    assert_non_null(strstr(done[0].error, "77"));
    free(done);
    fake.log[0] = '\0';
    assert_int_equal(lucidd_writer_post(w, &hold6), 0);
    lucidd_writer_free(w);
    assert_true(fake_called("hold 6"));
}

/* A slurmctld that just restarted may list as running a job that ended
 * while it was down: no requeue of a job it recovered (started before it)
 * until the grace has passed; a job it started itself is requeued. */
static void no_requeue_of_recovered_jobs_right_after_slurmctld_starts(void **state)
{
    (void)state;
    fake_submit(1, "alice", 1, 1, 1);
    fake_submit(2, "alice", 1, 1, 1);
    engine_tick(&d);
    time_t now = time(NULL);
    fake_run(1, now - 100); /* recovered from before the restart */
    fake_run(2, now - 1);   /* started by the new slurmctld */
    fake.ctld_started = now - 5;
    for (int i = 0; i < 6; i++) {
        pause_s(0.1);
        engine_tick(&d);
    }
    assert_true(rec(1)->profiled_s >= 0.3 && rec(2)->profiled_s >= 0.3);
    assert_false(fake_called("requeue 1"));
    assert_true(fake_called("requeue 2"));
    fake.ctld_started = now - 120;
    engine_tick(&d);
    assert_true(fake_called("requeue 1"));
}

/* Where and how each job ended; only the ones that completed are done. */
static void outcomes_say_where_and_how(void **state)
{
    (void)state;
    d.cfg.gpu_limit = 1; /* 8-GPU jobs go straight to main */
    fake_submit(1, "a", 1, 1, 1); /* completes in the profiler */
    fake_submit(2, "a", 8, 8, 1); /* fails on main */
    fake_submit(3, "a", 8, 8, 1); /* runs on main: outcome from accounting */
    fake_submit(4, "a", 8, 8, 1); /* cancelled while held */
    fake_submit(5, "a", 8, 8, 1); /* released when job 2 ends, then vanishes: no accounting */
    engine_tick(&d);
    fake_run(1, 1000);
    fake_run(2, 1000);
    fake_run(3, 1000);
    engine_tick(&d);
    fake_end(1, SJ_COMPLETED, "COMPLETED", 1001);
    fake_end(2, SJ_FAILED, "FAILED", 1002);
    fake_end(4, SJ_FAILED, "CANCELLED", 1003);
    fake_purge(3);
    fake.accounting[fake.naccounting++] = (fake_accounting){3, "COMPLETED", 1000, 1500};
    engine_tick(&d);
    assert_phase(1, LUCID_PHASE_DONE_IN_PROFILER);
    assert_phase(2, LUCID_PHASE_FAILED);
    assert_string_equal(rec(2)->outcome, "failed");
    assert_string_equal(rec(2)->ended_in, "main");
    assert_phase(3, LUCID_PHASE_DONE);
    assert_int_equal(rec(3)->end_time, 1500);
    assert_phase(4, LUCID_PHASE_FAILED);
    assert_string_equal(rec(4)->outcome, "cancelled");
    assert_string_equal(rec(4)->ended_in, "queue");
    fake_purge(5);
    engine_tick(&d);
    assert_phase(5, LUCID_PHASE_ENDED_UNKNOWN);
    assert_string_equal(rec(5)->outcome, "unknown");
    lucidd_ended ended[16];
    int n = lucidd_ended_counts(d.jobs, d.njobs, ended, 0, 16);
    int seen = 0;
    for (int i = 0; i < n; i++) {
        char key[48];
        snprintf(key, sizeof key, "%.15s/%.23s=%ld", ended[i].where, ended[i].outcome,
                 ended[i].count);
        seen += strcmp(key, "profiler/completed=1") == 0 || strcmp(key, "main/failed=1") == 0 ||
                strcmp(key, "main/completed=1") == 0 || strcmp(key, "queue/cancelled=1") == 0 ||
                strcmp(key, "main/unknown=1") == 0; /* released, never started, purged */
    }
    assert_int_equal(n, 5);
    assert_int_equal(seen, 5);
}

/* Jobs Slurm itself would not run yet take no GPUs: a dependency, a
 * --begin in the future, their owner's own hold. */
static void dependencies_begin_and_user_holds_take_no_capacity(void **state)
{
    (void)state;
    fake_submit(1, "a", 8, 8, 1);
    engine_tick(&d); /* job 1 into the profiler */
    slurm_job *ok = fake_submit(2, "a", 8, 8, 1);
    snprintf(ok->dependency, sizeof ok->dependency, "afterok:1(unfulfilled)");
    slurm_job *any = fake_submit(3, "a", 8, 8, 1);
    snprintf(any->dependency, sizeof any->dependency, "afterany:1(unfulfilled)");
    slurm_job *later = fake_submit(4, "a", 8, 8, 1);
    later->start_time = time(NULL) + 3600;
    slurm_job *mine = fake_submit(5, "a", 8, 8, 1);
    snprintf(mine->admin_comment, sizeof mine->admin_comment, "lucid-user-hold");
    mine->uid = 1000;
    engine_tick(&d);
    assert_string_equal(engine_find(&d, 2)->waits_for, "dependency");
    assert_string_equal(engine_find(&d, 4)->waits_for, "begin");
    assert_string_equal(engine_find(&d, 5)->waits_for, "user-hold");
    assert_false(fake_called("start 2 profiling p1") || fake_called("start 4 profiling p1") ||
                 fake_called("start 5 profiling p1") || fake_called("start 3 profiling p1"));
    char reply[300];
    assert_int_equal(engine_release(&d, 5, 1001, reply, sizeof reply), -1); /* not the owner */
    assert_non_null(strstr(reply, "only its owner"));
    assert_int_equal(engine_release(&d, 5, 1000, reply, sizeof reply), 0);
    /* Job 1 fails: afterok can never be satisfied, afterany is. */
    fake_run(1, 1000);
    engine_tick(&d);
    fake_end(1, SJ_FAILED, "FAILED", 1001);
    engine_tick(&d);
    assert_string_equal(engine_find(&d, 2)->waits_for, "dependency");
    assert_non_null(strstr(rec(2)->reason, "can never be satisfied"));
    assert_string_equal(engine_find(&d, 3)->waits_for, "");
    assert_true(fake_called("start 3 profiling p1") || fake_called("start 5 profiling p1"));
    assert_string_equal(engine_find(&d, 4)->waits_for, "begin");
}

/* -w / --exclude are honoured; a request no allowed node set can hold goes
 * back to Slurm untouched. */
static void node_choices_are_honoured_or_handed_back(void **state)
{
    (void)state;
    slurm_job *w = fake_submit(1, "a", 2, 2, 1);
    snprintf(w->req_nodes, sizeof w->req_nodes, "n2");
    slurm_job *x = fake_submit(2, "a", 2, 2, 1);
    snprintf(x->exc_nodes, sizeof x->exc_nodes, "n1,n2");
    fake_submit(3, "a", 9, 9, 1); /* 9 GPUs on one node: none has 9 */
    engine_tick(&d);
    assert_phase(1, LUCID_PHASE_RUNNING);
    assert_true(fake_called("start 1 main n2"));
    assert_true(fake_called("handback 2") && fake_called("handback 3"));
    assert_phase(2, LUCID_PHASE_HANDED_BACK);
    assert_phase(3, LUCID_PHASE_HANDED_BACK);
}

/* --gpus=16 without -N: placement chooses two nodes. */
static void per_job_gpus_choose_their_nodes(void **state)
{
    (void)state;
    slurm_job *j = fake_submit(1, "a", 16, 0, 1);
    j->nodes_fixed = 0;
    snprintf(j->gpu_request, sizeof j->gpu_request, "tpj=gres:gpu:16");
    engine_tick(&d);
    assert_true(fake_called("start 1 main n1,n2"));
}

/* Array records are split into one job per task; a held job whose
 * request changed is examined again. */
static void arrays_split_and_resizes_reexamined(void **state)
{
    (void)state;
    slurm_job *arr = fake_submit(20, "a", 1, 1, 1);
    arr->array_job_id = 20;
    arr->array_task_id = UINT32_MAX;
    snprintf(arr->array_tasks, sizeof arr->array_tasks, "0-2");
    fake_submit(21, "a", 1, 1, 1);
    fake_node("p2", "none", 0); /* not lucid's */
    fake.nodes[0].gpus_used = 8; /* the profiler is full: jobs wait */
    engine_tick(&d);
    assert_true(fake_called("split 20_0") && fake_called("split 20_1"));
    assert_false(fake_called("split 20_2"));
    assert_null(engine_find(&d, 20)); /* the record of several tasks is not a job */
    assert_phase(21, LUCID_PHASE_PROFILE_QUEUE);
    slurm_job *grown = fake_job(21);
    grown->gpus = 16;
    grown->gpus_per_node = 8;
    grown->nodes = 2;
    fake.nodes[1].gpus_used = fake.nodes[2].gpus_used = 8;
    engine_tick(&d);
    assert_phase(21, LUCID_PHASE_MAIN_QUEUE);
    assert_int_equal(rec(21)->gpus, 16);
    assert_non_null(engine_find(&d, 1000)); /* split tasks are jobs now */
}

/* After a lost state file: a job lucid had pinned to the profiler is not
 * taken for one that chose its node; a job that ran and ended while lucidd
 * was away is recorded with Slurm's outcome; an owner's release of a
 * handed-back job lifts the owner's hold. */
static void what_a_returning_lucidd_finds(void **state)
{
    (void)state;
    slurm_job *pinned = fake_submit(1, "a", 1, 1, 1);
    pinned->held = pinned->admin_held = 0; /* lucid released it, then lost its state */
    snprintf(pinned->partition, sizeof pinned->partition, "profiling");
    snprintf(pinned->req_nodes, sizeof pinned->req_nodes, "p1");
    snprintf(pinned->admin_comment, sizeof pinned->admin_comment, "lucid: profiling: profiling on p1");
    slurm_job *ran = fake_submit(2, "a", 2, 2, 1);
    ran->req_nodes[0] = '\0';
    fake_run(2, 1000);
    fake_end(2, SJ_COMPLETED, "COMPLETED", 1010);
    slurm_job *mine = fake_submit(3, "a", 1, 1, 1);
    snprintf(mine->admin_comment, sizeof mine->admin_comment, "lucid-user-hold");
    fake.nodes[0].gpus_used = 8; /* the profiler is busy: nothing starts */
    engine_tick(&d);
    assert_true(fake_called("hold 1"));
    assert_string_equal(engine_find(&d, 1)->user_nodes, "");
    assert_phase(1, LUCID_PHASE_PROFILE_QUEUE);
    assert_phase(2, LUCID_PHASE_DONE);
    assert_string_equal(rec(2)->ended_in, "main");
    assert_int_equal(rec(2)->main_start, 1000);
    assert_true(rec(3)->user_hold);
    /* The watchdog gave job 3 back as the owner's hold; the owner released it. */
    fake_job(3)->held = fake_job(3)->admin_held = 0;
    engine_tick(&d);
    assert_false(rec(3)->user_hold);
    assert_true(fake_job(3)->admin_held);
    assert_string_equal(engine_find(&d, 3)->waits_for, "");
}

/* An ended job stays in memory while Slurm lists it and --forget-ended
 * after its end, then leaves: still counted, still in the store, still the
 * answer to a dependency on it; a restarted lucidd loads only what it keeps
 * and takes a stored job Slurm still lists back from the store as it is. */
static void ended_jobs_leave_memory(void **state)
{
    (void)state;
    d.cfg.forget_ended_s = 0; /* as soon as Slurm no longer lists them */
    fake_submit(1, "a", 8, 8, 1);
    fake_submit(2, "a", 8, 8, 1);
    d.cfg.gpu_limit = 1; /* straight to main */
    engine_tick(&d);
    fake_run(1, 1000);
    fake_run(2, 1000);
    engine_tick(&d);
    fake_end(1, SJ_COMPLETED, "COMPLETED", 1100);
    fake_end(2, SJ_FAILED, "FAILED", 1100);
    engine_tick(&d);
    assert_phase(1, LUCID_PHASE_DONE);
    d.forgot_at = 0; /* the next tick's pass is due */
    engine_tick(&d);
    assert_non_null(engine_find(&d, 1)); /* Slurm lists them: kept */
    fake_purge(1);
    d.forgot_at = 0;
    engine_tick(&d);
    assert_null(engine_find(&d, 1));
    assert_non_null(engine_find(&d, 2));
    assert_int_equal(d.njobs, 1);
    assert_int_equal(d.forgotten_jobs, 1);
    lucidd_ended ended[16];
    memcpy(ended, d.forgotten, sizeof ended);
    int n = lucidd_ended_counts(d.jobs, d.njobs, ended, d.nforgotten, 16);
    assert_int_equal(n, 2);
    long completed = 0, failed = 0;
    for (int k = 0; k < n; k++) {
        assert_string_equal(ended[k].where, "main");
        completed += strcmp(ended[k].outcome, "completed") == 0 ? ended[k].count : 0;
        failed += strcmp(ended[k].outcome, "failed") == 0 ? ended[k].count : 0;
    }
    assert_int_equal(completed, 1);
    assert_int_equal(failed, 1);
    lucid_job_record stored;
    lucid_error err = {{0}};
    assert_int_equal(lucid_state_get_job(d.state, 1, &stored, &err), 1);
    assert_int_equal(stored.phase, LUCID_PHASE_DONE);
    /* Dependencies on the forgotten job are answered from the store. */
    snprintf(fake_submit(3, "a", 1, 1, 1)->dependency, sizeof fake.jobs[0].dependency,
             "afterok:1(unfulfilled)");
    snprintf(fake_submit(4, "a", 1, 1, 1)->dependency, sizeof fake.jobs[0].dependency,
             "afternotok:1(unfulfilled)");
    engine_tick(&d);
    assert_string_equal(engine_find(&d, 3)->waits_for, "");
    assert_string_equal(engine_find(&d, 4)->waits_for, "dependency");
    assert_non_null(strstr(rec(4)->reason, "can never be satisfied"));
    /* A restart: job 1 is counted, not loaded; job 2 (still listed) comes
     * back from the store at the first tick, not taken in again. */
    char reason2[256];
    snprintf(reason2, sizeof reason2, "%s", rec(2)->reason);
    int64_t since2 = rec(2)->phase_since;
    engine_free(&d);
    memset(d.forgotten, 0, sizeof d.forgotten);
    memset(d.forgotten_by_phase, 0, sizeof d.forgotten_by_phase);
    d.nforgotten = 0;
    d.forgotten_profiled = 0;
    d.forgotten_jobs = 0;
    assert_int_equal(engine_load(&d, &err), 0);
    assert_null(engine_find(&d, 1));
    assert_null(engine_find(&d, 2));
    assert_int_equal(d.nforgotten, 2);
    assert_int_equal(d.forgotten_by_phase[LUCID_PHASE_DONE], 1);
    assert_int_equal(d.forgotten_by_phase[LUCID_PHASE_FAILED], 1);
    engine_tick(&d);
    assert_non_null(engine_find(&d, 2));
    assert_phase(2, LUCID_PHASE_FAILED);
    assert_string_equal(rec(2)->reason, reason2);
    assert_int_equal(rec(2)->phase_since, since2);
    assert_null(engine_find(&d, 1));
}

/* While slurmctld does not accept connections a tick asks it nothing and
 * ends at once: the tick counter keeps its rate. */
static void ticks_go_on_while_slurmctld_is_down(void **state)
{
    (void)state;
    fake.up = 0;
    uint64_t before = d.ticks;
    for (int i = 0; i < 5; i++)
        engine_tick(&d);
    assert_int_equal(d.ticks, before + 5);
    assert_false(d.slurm_up);
    assert_true(d.slurm_down_since > 0);
}

/* slurmctld stops in the middle of a tick (between the listing and the
 * holds): the call that failed is the tick's last call to Slurm (each
 * further one would wait libslurm's connect retries, MessageTimeout - 1 s),
 * and the next ticks probe until it answers.  While Slurm answers there is
 * no probe: slurmctld logs each one as an error. */
static void slurmctld_lost_in_a_tick_ends_its_calls(void **state)
{
    (void)state;
    engine_tick(&d); /* the first tick probes: Slurm is not known up yet */
    engine_tick(&d);
    engine_tick(&d);
    assert_int_equal(fake.probes, 1);
    assert_true(d.slurm_up);
    for (uint32_t id = 1; id <= 3; id++)
        fake_submit(id, "alice", 8, 8, 1);
    fake.down_at_call = fake.job_calls + 2; /* hold 1 works, hold 2 meets a stopped slurmctld */
    engine_tick(&d);
    assert_true(fake_called("hold 1"));
    assert_int_equal(fake.job_calls, fake.down_at_call); /* no hold 3, no start, no comment */
    assert_false(d.slurm_up);
    assert_true(d.slurm_down_since > 0);
    assert_int_equal(fake.probes, 2); /* one, after the failed call */
    int calls = fake.job_calls;
    engine_tick(&d); /* down: a probe and nothing else */
    assert_int_equal(fake.probes, 3);
    assert_int_equal(fake.job_calls, calls);
    fake.up = 1;
    fake.down_at_call = 0;
    engine_tick(&d); /* back: one probe, then the tick's work */
    assert_int_equal(fake.probes, 4);
    assert_true(d.slurm_up);
    assert_true(fake_called("hold 2") && fake_called("hold 3"));
    assert_true(fake_called("start 1 profiling p1"));
    engine_tick(&d);
    assert_int_equal(fake.probes, 4);
}

/* Start-time estimates, worked out by hand: n1 runs job 1 (8 GPUs,
 * estimate 3600 s, the default) since T, n2 job 9 (8 GPUs, 10,000 min: it
 * ends long after); job 2 (8 GPUs) waits.  With no ended job yet the ratio table answers its prior (0.25,
 * 1, 4 at P10/P50/P90, eta.h), all above elapsed/estimate, so job 1 is
 * expected to end at T + 900, T + 3600, T + 14400: job 2's interval.  A job
 * with a dependency gets none, and says why; the AdminComment carries it. */
static void waiting_jobs_get_start_estimates(void **state)
{
    (void)state;
    d.cfg.gpu_limit = 1; /* no profiling: straight to main */
    fake_submit(1, "alice", 8, 8, 1);
    fake_submit(9, "alice", 8, 8, 1)->time_limit_min = 10000;
    engine_tick(&d);
    assert_phase(1, LUCID_PHASE_RUNNING);
    assert_true(fake_called("start 1 main n1"));
    time_t t = time(NULL) - 100;
    fake_run(1, t);
    fake_run(9, t);
    fake_submit(2, "bob", 8, 8, 1);
    slurm_job *dep = fake_submit(3, "bob", 8, 8, 1);
    snprintf(dep->dependency, sizeof dep->dependency, "afterok:1(unfulfilled)");
    engine_tick(&d);
    assert_phase(2, LUCID_PHASE_MAIN_QUEUE);
    assert_int_equal(rec(1)->main_start, t);
    const lucidd_job *job = engine_find(&d, 2);
    assert_int_equal(job->eta_p10, t + 900);
    assert_int_equal(job->eta_p50, t + 3600);
    assert_int_equal(job->eta_p90, t + 14400);
    assert_int_equal(job->eta_ahead, 0);
    assert_string_equal(job->eta_none, "");
    const lucidd_job *waits = engine_find(&d, 3);
    assert_int_equal(waits->eta_p50, 0);
    assert_string_equal(waits->eta_none, "waits for its dependency");
    /* scontrol show job: the reason, then the start estimate. */
    assert_non_null(strstr(fake_job(2)->admin_comment, "; start ~"));
    assert_non_null(strstr(fake_job(3)->admin_comment, "; no start estimate: waits for its dependency"));
    /* Job 1 ends: job 2 starts ("now"), job 1's ratio is learnt (a table of
     * fewer than 20 ratios still answers the prior). */
    fake_end(1, SJ_COMPLETED, "COMPLETED", t + 200);
    engine_tick(&d);
    assert_int_equal(d.eta_table.n, 1);
    assert_true(fabs(d.eta_table.ratios[0] - 200.0 / 3600.0) < 1e-12);
    assert_phase(2, LUCID_PHASE_RUNNING);
    assert_int_equal(engine_find(&d, 2)->eta_p50, 0);
}

/* The same case with jobs 1 and 9 started by Slurm while lucidd was away
 * (running at its first look: adopted).  Their nodes are Slurm's, so job 1's
 * GPUs free at its estimated end in job 2's estimate, as when lucid started
 * it: T + 900 / 3600 / 14400.  Before, an adopted job had no node in
 * lucid's record, its GPUs were busy for good in the estimates, and job 2
 * had none ("no start in sight"). */
static void an_adopted_job_frees_its_gpus_in_the_estimates(void **state)
{
    (void)state;
    d.cfg.gpu_limit = 1;
    time_t t = time(NULL) - 100;
    snprintf(fake_submit(1, "alice", 8, 8, 1)->req_nodes, sizeof fake_job(1)->req_nodes, "n1");
    slurm_job *long_one = fake_submit(9, "alice", 8, 8, 1);
    long_one->time_limit_min = 10000;
    snprintf(long_one->req_nodes, sizeof long_one->req_nodes, "n2");
    fake_run(1, t);
    fake_run(9, t);
    engine_tick(&d);
    assert_phase(1, LUCID_PHASE_RUNNING);
    assert_phase(9, LUCID_PHASE_RUNNING);
    fake_submit(2, "bob", 8, 8, 1);
    engine_tick(&d);
    assert_string_equal(rec(1)->node_list, "n1");
    assert_string_equal(rec(9)->node_list, "n2");
    assert_phase(2, LUCID_PHASE_MAIN_QUEUE);
    const lucidd_job *job = engine_find(&d, 2);
    assert_string_equal(job->eta_none, "");
    assert_int_equal(job->eta_p10, t + 900);
    assert_int_equal(job->eta_p50, t + 3600);
    assert_int_equal(job->eta_p90, t + 14400);
}

/* An adopted job on two nodes, listed as Slurm compresses it ("n[1-2]"):
 * both nodes free at its end in the estimates (job 2's, as above). */
static void an_adopted_job_on_a_host_range_frees_every_node(void **state)
{
    (void)state;
    d.cfg.gpu_limit = 1;
    time_t t = time(NULL) - 100;
    slurm_job *wide = fake_submit(1, "alice", 16, 8, 2);
    snprintf(wide->req_nodes, sizeof wide->req_nodes, "n[1-2]");
    fake_run(1, t);
    for (int k = 0; k < fake.nnodes; k++) /* the fake counts single names only */
        if (strcmp(fake.nodes[k].partition, "main") == 0)
            fake.nodes[k].gpus_used = 8;
    engine_tick(&d);
    assert_phase(1, LUCID_PHASE_RUNNING);
    fake_submit(2, "bob", 8, 8, 1);
    engine_tick(&d);
    assert_string_equal(rec(1)->node_list, "n[1-2]");
    const lucidd_job *job = engine_find(&d, 2);
    assert_string_equal(job->eta_none, "");
    assert_int_equal(job->eta_p10, t + 900);
    assert_int_equal(job->eta_p50, t + 3600);
    assert_int_equal(job->eta_p90, t + 14400);
}

/* The ratio table is rebuilt from the state store at start: 25 jobs that
 * held their GPUs twice their estimate make every quantile 2, so a job
 * running since T with estimate 3600 ends at T + 7200 in all three (job 9
 * holds n2 for 10,000 min x 2). */
static void ratio_table_is_rebuilt_from_the_store(void **state)
{
    (void)state;
    lucid_error err = {{0}};
    for (uint32_t id = 100; id < 125; id++) {
        lucid_job_record r = {.job_id = id, .phase = LUCID_PHASE_DONE, .gpus = 1, .nodes = 1,
                              .estimate_s = 500, .main_start = 1000, .end_time = 2000};
        snprintf(r.ended_in, sizeof r.ended_in, "main");
        snprintf(r.outcome, sizeof r.outcome, "completed");
        assert_int_equal(lucid_state_put_job(d.state, &r, &err), 0);
    }
    assert_int_equal(engine_load(&d, &err), 0);
    assert_int_equal(d.eta_table.n, 25);
    d.cfg.gpu_limit = 1;
    fake_submit(1, "alice", 8, 8, 1);
    fake_submit(9, "alice", 8, 8, 1)->time_limit_min = 10000;
    engine_tick(&d);
    time_t t = time(NULL) - 100;
    fake_run(1, t);
    fake_run(9, t);
    fake_submit(2, "bob", 8, 8, 1);
    engine_tick(&d);
    const lucidd_job *job = engine_find(&d, 2);
    assert_int_equal(job->eta_p10, t + 7200);
    assert_int_equal(job->eta_p50, t + 7200);
    assert_int_equal(job->eta_p90, t + 7200);
}

/* The backfill tests' start: EASY with `margin`, no profiling; job 1 (8
 * GPUs, time limit `limit_min`, 0: none) runs on n1 since the returned T;
 * job 2 (16 GPUs, 1 min) and job 3 (8 GPUs, 121 min) are submitted. */
static time_t backfill_behind_job1(double margin, uint32_t limit_min)
{
    d.cfg.gpu_limit = 1;
    d.cfg.backfill = 1; /* LUCID_BACKFILL_EASY */
    d.cfg.backfill_margin = margin;
    fake_submit(1, "alice", 8, 8, 1)->time_limit_min = limit_min;
    engine_tick(&d);
    assert_phase(1, LUCID_PHASE_RUNNING);
    time_t t = time(NULL);
    fake_run(1, t);
    fake_submit(2, "bob", 16, 8, 2)->time_limit_min = 1;
    fake_submit(3, "carol", 8, 8, 1)->time_limit_min = 121;
    return t;
}

/* backfill = easy, priorities estimate x GPUs (lower first), estimates
 * from time limits: job 1 (8 GPUs, 3600 s) runs on n1 since T.  Job 2 (16
 * GPUs, 1 min: priority 960) cannot start; it is reserved n1,n2 from T +
 * 3600.  Job 4 (8 GPUs, 10 min: 4800) comes after it, fits n2 now and ends,
 * x margin 1.2, long before T + 3600: backfilled on n2.  Job 3 (8 GPUs, 121
 * min: 58080) would delay the reservation: it waits.  Without backfill none
 * of them would start (job 2 blocks the head of the line). */
static void backfill_honours_the_reservation(void **state)
{
    (void)state;
    time_t t = backfill_behind_job1(1.2, 0);
    fake_submit(4, "dave", 8, 8, 1)->time_limit_min = 10;
    engine_tick(&d);
    assert_phase(2, LUCID_PHASE_MAIN_QUEUE);
    const lucidd_job *big = engine_find(&d, 2);
    assert_int_equal(big->reserved_at, t + 3600);
    assert_string_equal(big->reserved_nodes, "n1,n2");
    assert_phase(4, LUCID_PHASE_RUNNING);
    assert_true(fake_called("start 4 main n2"));
    assert_phase(3, LUCID_PHASE_MAIN_QUEUE);
    /* The records keep the time limits Slurm shows (for a replay). */
    assert_int_equal(rec(3)->time_limit_s, 121 * 60);
    assert_int_equal(rec(4)->time_limit_s, 10 * 60);
    assert_int_equal(rec(1)->time_limit_s, 0);
    /* Job 4 took n2's GPUs: job 3 waits for GPUs, behind job 2. */
    assert_string_equal(rec(3)->reason,
                        "waiting for 8 free GPUs on 1 node (priority 58080), behind the "
                        "reservation of job 2");
    assert_int_equal(engine_find(&d, 3)->reserved_at, 0); /* EASY: only the first */
    assert_int_equal(rec(3)->reserved_since, 0);
    assert_true(rec(2)->reserved_since > 0 && rec(2)->reserved_since <= time(NULL));
    /* Its start estimate is the reservation (P50: job 1 ends by estimate). */
    assert_int_equal(big->eta_p50, t + 3600);
}


/* A reservation once given is kept, also by a restarted lucidd (easy,
 * window 1200 s, margin 1; estimates from time limits): job 1 (8 GPUs, 15
 * min) runs on n1 since T.  Job 2 (16 GPUs, 1 min: priority 960) cannot
 * start; its earliest start, T + 900, is within the window: reserved
 * n1,n2 from T + 900, and the state store says since when.  Job 3 (8 GPUs,
 * 121 min) would delay it: it waits.  lucidd restarts (its job table
 * rebuilt from the store) with a window of 60 s, which job 2's start no
 * longer meets: job 2 keeps its reservation and job 3 still waits.  When
 * job 2 then waits for a begin time (Slurm would not run it) the
 * reservation is dropped, in the store too, and job 3 starts on n2. */
static void a_reservation_survives_a_restart(void **state)
{
    (void)state;
    d.cfg.backfill_window = 1200;
    time_t t = backfill_behind_job1(1, 15);
    time_t before = time(NULL);
    engine_tick(&d);
    assert_int_equal(engine_find(&d, 2)->reserved_at, t + 900);
    assert_string_equal(engine_find(&d, 2)->reserved_nodes, "n1,n2");
    assert_phase(3, LUCID_PHASE_MAIN_QUEUE);
    lucid_error err = {{0}};
    lucid_job_record stored;
    assert_int_equal(lucid_state_get_job(d.state, 2, &stored, &err), 1);
    assert_true(stored.reserved_since >= before && stored.reserved_since <= time(NULL));

    engine_free(&d); /* the restart: only the store remains */
    d.cfg.backfill_window = 60;
    assert_int_equal(engine_load(&d, &err), 0);
    assert_int_equal(rec(2)->reserved_since, stored.reserved_since);
    engine_tick(&d);
    assert_phase(2, LUCID_PHASE_MAIN_QUEUE);
    assert_int_equal(engine_find(&d, 2)->reserved_at, t + 900);
    assert_int_equal(rec(2)->reserved_since, stored.reserved_since);
    assert_phase(3, LUCID_PHASE_MAIN_QUEUE);
    assert_string_equal(rec(3)->reason,
                        "waiting: starting it now would delay the reservation of job 2");

    fake_job(2)->start_time = time(NULL) + 3600;
    engine_tick(&d);
    assert_string_equal(engine_find(&d, 2)->waits_for, "begin");
    assert_int_equal(rec(2)->reserved_since, 0);
    assert_int_equal(lucid_state_get_job(d.state, 2, &stored, &err), 1);
    assert_int_equal(stored.reserved_since, 0);
    assert_phase(3, LUCID_PHASE_RUNNING);
    assert_true(fake_called("start 3 main n2"));
}

/* lucidd notes each job it takes in at its submission (d.eta_table's
 * arrivals), dropping those that left LUCID_ETA_GHOST_WINDOW, and with
 * packing on its predictions mirror them as arrivals to come, as the
 * simulator's Lucid replay does.  Packing on, no profiling: R1 (job 1, 8
 * GPUs, 10 min: priority 4800) runs on n1 since T, R2 (job 2, 10,000 min)
 * on n2; W (job 3, 8 GPUs, 60 min: 28800) waits; no job is profiled
 * (sharing score -1: no pairs).  The prior ratios: R1 (elapsed well under
 * a quarter of its estimate) ends at T + 150 / 600 / 2400, and W starts
 * then.  R1 was submitted 100 s ago: its copy arrives 100 s from now, goes
 * ahead of W (better priority) at R1's P90 end and runs 600 x 4 s: W's P90
 * is T + 4800.  Submitted 7 h ago instead, R1 is no recent arrival: W's
 * P90 is T + 2400. */
static void arrivals_are_noted_and_mirrored(void **state)
{
    (void)state;
    for (int recent = 0; recent < 2; recent++) {
        if (recent) { /* a fresh daemon and Slurm for the second case */
            teardown(NULL);
            setup(NULL);
        }
        d.cfg.gpu_limit = 1;
        d.cfg.packing_mode = 1;
        time_t now = time(NULL);
        fake_submit(1, "alice", 8, 8, 1)->time_limit_min = 10;
        fake_job(1)->submit_time = recent ? now - 100 : now - 7 * 3600;
        slurm_job *r2 = fake_submit(2, "alice", 8, 8, 1);
        r2->time_limit_min = 10000;
        r2->submit_time = now - 8 * 3600;
        engine_tick(&d);
        assert_phase(1, LUCID_PHASE_RUNNING);
        assert_phase(2, LUCID_PHASE_RUNNING);
        time_t t = time(NULL) - 10;
        fake_run(1, t);
        fake_run(2, t);
        fake_submit(3, "bob", 8, 8, 1)->time_limit_min = 60;
        fake_job(3)->submit_time = time(NULL);
        engine_tick(&d);
        assert_phase(3, LUCID_PHASE_MAIN_QUEUE);
        /* Noted: R1 if recent, and W; never R2 (submitted before the window). */
        const lucid_eta_table *table = &d.eta_table;
        assert_int_equal(table->narr - table->arr_head, recent ? 2 : 1);
        if (recent)
            assert_int_equal(table->arrivals[table->arr_head].job, 1);
        assert_int_equal(table->arrivals[table->narr - 1].job, 3);
        const lucidd_job *w = engine_find(&d, 3);
        assert_int_equal(w->eta_p10, t + 150);
        assert_int_equal(w->eta_p50, t + 600);
        assert_int_equal(w->eta_p90, recent ? t + 4800 : t + 2400);
    }
    /* A note past the window drops the older ones (the table's rule). */
    lucid_eta_table *table = &d.eta_table;
    int64_t last = table->arrivals[table->narr - 1].time;
    assert_int_equal(lucid_eta_table_note_arrival(table, 99, last + LUCID_ETA_GHOST_WINDOW + 1), 0);
    assert_int_equal(table->narr - table->arr_head, 1);
    assert_int_equal(table->arrivals[table->arr_head].job, 99);
}

/* lucidd restarted: only what it keeps across a restart (configuration,
 * store, models, metrics) stays; the job table is rebuilt from the store. */
static void restart(void)
{
    engine_free(&d);
    lucidd_config cfg = d.cfg;
    lucid_state *state = d.state;
    lucidd_models *models = d.models;
    lucid_gpumetrics *metrics = d.metrics;
    memset(&d, 0, sizeof d);
    d.cfg = cfg;
    d.state = state;
    d.models = models;
    d.metrics = metrics;
    lucid_error err = {{0}};
    assert_int_equal(engine_load(&d, &err), 0);
}

/* What clients see of a restarted lucidd (easy, window 1200 s, margin 1,
 * as a_reservation_survives_a_restart: job 2 reserved n1,n2 from T + 900,
 * job 3 waiting behind it).  Nothing is published before its first tick
 * (the stored jobs carry no start estimate and no reservation's start);
 * the first published view has a start interval for every waiting job and
 * job 2's reservation, since when and where.  A restart whose first tick
 * cannot reach Slurm publishes (status must say so), and its waiting jobs
 * say why they have no estimate, job 2 still since when it holds its
 * reservation. */
static void a_restart_publishes_after_its_first_decision(void **state)
{
    (void)state;
    d.cfg.backfill_window = 1200;
    time_t t = backfill_behind_job1(1, 15);
    engine_tick(&d);
    assert_int_equal(engine_find(&d, 2)->reserved_at, t + 900);
    int64_t since = rec(2)->reserved_since;
    assert_true(since > 0);

    restart();
    lucid_error err = {{0}};
    lucidd_hub *hub = lucidd_hub_new(&err);
    assert_non_null(hub);
    lucidd_hub_publish(hub, &d, (int64_t)time(NULL)); /* what lucidd did at start */
    assert_null(lucidd_hub_acquire(hub, NULL));
    engine_tick(&d);
    lucidd_hub_publish(hub, &d, (int64_t)time(NULL));
    lucidd_snapshot *snap = lucidd_hub_acquire(hub, NULL);
    assert_non_null(snap);
    int waiting = 0;
    for (size_t i = 0; i < snap->njobs; i++) {
        const lucidd_job *job = &snap->jobs[i];
        if (job->rec.phase != LUCID_PHASE_MAIN_QUEUE && job->rec.phase != LUCID_PHASE_PROFILE_QUEUE)
            continue;
        waiting++;
        if (!(job->eta_p10 > 0 && job->eta_p10 <= job->eta_p50 && job->eta_p50 <= job->eta_p90))
            fail_msg("job %u: no start interval in the first view (%lld %lld %lld; %s)",
                     job->rec.job_id, (long long)job->eta_p10, (long long)job->eta_p50,
                     (long long)job->eta_p90, job->eta_none);
        assert_string_equal(job->eta_none, "");
        if (job->rec.job_id == 2) {
            assert_int_equal(job->reserved_at, t + 900);
            assert_string_equal(job->reserved_nodes, "n1,n2");
            assert_int_equal(job->rec.reserved_since, since);
        } else {
            assert_int_equal(job->rec.reserved_since, 0);
        }
    }
    assert_int_equal(waiting, 2); /* jobs 2 and 3 */
    lucidd_hub_release(hub, snap);
    lucidd_hub_free(hub);

    restart();
    hub = lucidd_hub_new(&err);
    assert_non_null(hub);
    fake.up = 0;
    engine_tick(&d);
    lucidd_hub_publish(hub, &d, (int64_t)time(NULL));
    snap = lucidd_hub_acquire(hub, NULL);
    assert_non_null(snap);
    assert_false(snap->slurm_up);
    for (uint32_t id = 2; id <= 3; id++) {
        const lucidd_job *job = NULL;
        for (size_t i = 0; i < snap->njobs; i++)
            if (snap->jobs[i].rec.job_id == id)
                job = &snap->jobs[i];
        assert_non_null(job);
        assert_int_equal(job->eta_p50, 0);
        assert_string_equal(job->eta_none, ENGINE_ETA_NOT_YET);
        assert_int_equal(job->rec.reserved_since, id == 2 ? since : 0);
    }
    lucidd_hub_release(hub, snap);
    lucidd_hub_free(hub);
    /* Slurm answers: the first decision replaces the text. */
    fake.up = 1;
    engine_tick(&d);
    assert_true(engine_find(&d, 3)->eta_p50 > 0);
    assert_string_equal(engine_find(&d, 3)->eta_none, "");
}

/* ---- the site's rules (fit.h): where Slurm would start a job ---- */

static slurm_node *node(const char *name)
{
    for (int i = 0; i < fake.nnodes; i++)
        if (strcmp(fake.nodes[i].name, name) == 0)
            return &fake.nodes[i];
    fail_msg("no fake node %s", name);
    return NULL;
}

/* Released onto one of the main nodes in this tick's calls. */
static int started_on_main(uint32_t id)
{
    char n1[64], n2[64];
    snprintf(n1, sizeof n1, "start %u main n1", id);
    snprintf(n2, sizeof n2, "start %u main n2", id);
    return fake_called(n1) || fake_called(n2);
}

static void cpus(const char *name, int total, int allocated)
{
    node(name)->fit.cpus = total;
    node(name)->fit.cpus_alloc = allocated;
}

/* n1 is consolidation's choice for one GPU (4 in use) but has 2 CPUs
 * free: a job asking 8 CPUs goes to n2; --exclusive counts a whole node's
 * GPUs and needs a node with nothing on it. */
static void cpus_and_exclusive_decide_the_node(void **state)
{
    (void)state;
    d.cfg.gpu_limit = 0; /* straight to the main queue */
    cpus("n1", 32, 30);
    cpus("n2", 32, 0);
    node("n1")->gpus_used = 4;
    fake_submit(1, "a", 1, 1, 1)->fit.cpus_node = 8;
    fake_submit(2, "a", 1, 1, 1)->fit.cpus_node = 1;
    fake_submit(3, "a", 1, 1, 1)->fit.whole = 1;
    engine_tick(&d);
    assert_true(fake_called("start 1 main n2"));
    assert_true(fake_called("start 2 main n1"));
    assert_phase(3, LUCID_PHASE_MAIN_QUEUE); /* no node is empty */
    assert_int_equal(rec(3)->gpus, 8);
}

/* Two jobs of 20 CPUs in one decision: the second sees the first's CPUs
 * taken (consolidation alone would put both on n1). */
static void cpus_add_up_within_one_decision(void **state)
{
    (void)state;
    d.cfg.gpu_limit = 0;
    cpus("n1", 32, 0);
    cpus("n2", 32, 0);
    fake_submit(1, "a", 1, 1, 1)->fit.cpus_node = 20;
    fake_submit(2, "a", 1, 1, 1)->fit.cpus_node = 20;
    fake_submit(3, "a", 1, 1, 1)->fit.mem_node_mib = 9000;
    node("n1")->fit.mem_mib = node("n2")->fit.mem_mib = 10000;
    engine_tick(&d);
    int first_n1 = fake_called("start 1 main n1");
    assert_true(first_n1 || fake_called("start 1 main n2"));
    assert_true(fake_called(first_n1 ? "start 2 main n2" : "start 2 main n1"));
    /* Memory: 9000 of 10000 MiB fits either node, but only once per node. */
    fake_submit(4, "a", 1, 1, 1)->fit.mem_node_mib = 9000;
    fake_submit(5, "a", 1, 1, 1)->fit.mem_node_mib = 9000;
    engine_tick(&d);
    assert_phase(5, LUCID_PHASE_MAIN_QUEUE);
}

/* Typed GPUs: p1 and n1 hold a100s, n2 v100s.  A v100 job is not profiled
 * (no profiling node of its type) and runs on n2; an a100 job is profiled
 * on p1; a type no node has is handed back to Slurm. */
static void typed_gpus_and_the_profiler(void **state)
{
    (void)state;
    snprintf(node("p1")->fit.gpu_type, sizeof node("p1")->fit.gpu_type, "a100");
    snprintf(node("n1")->fit.gpu_type, sizeof node("n1")->fit.gpu_type, "a100");
    snprintf(node("n2")->fit.gpu_type, sizeof node("n2")->fit.gpu_type, "v100");
    snprintf(fake_submit(1, "a", 2, 2, 1)->fit.gpu_type, sizeof(char[32]), "v100");
    snprintf(fake_submit(2, "a", 2, 2, 1)->fit.gpu_type, sizeof(char[32]), "a100");
    snprintf(fake_submit(3, "a", 8, 8, 1)->fit.gpu_type, sizeof(char[32]), "v100");
    snprintf(fake_submit(4, "a", 1, 1, 1)->fit.gpu_type, sizeof(char[32]), "h100");
    engine_tick(&d);
    assert_true(fake_called("start 1 main n2"));
    assert_true(fake_called("start 2 profiling p1"));
    assert_phase(3, LUCID_PHASE_MAIN_QUEUE); /* n2 has 6 v100s free; n1's a100s are not its */
    assert_false(started_on_main(3));
    assert_true(fake_called("handback 4"));
    assert_phase(4, LUCID_PHASE_HANDED_BACK);
}

/* A drained profiling node sends jobs to the main queue instead of
 * waiting; a node reserved before a job's time limit ends is not its. */
static void drained_profiler_and_reserved_nodes(void **state)
{
    (void)state;
    node("p1")->usable = 0;
    snprintf(node("p1")->fit.state, sizeof node("p1")->fit.state, "DRAINED");
    fit_window *w = &node("n1")->fit.windows[0];
    node("n1")->fit.nwindows = 1;
    w->start = time(NULL) + 100;
    w->end = w->start + 3600;
    snprintf(w->name, sizeof w->name, "maint1");
    fake_submit(1, "a", 1, 1, 1);                           /* no time limit: not n1 */
    fake_submit(2, "a", 8, 8, 1)->fit.time_limit_s = 60;    /* ends before: n1 is fine */
    fake_submit(3, "a", 8, 8, 1)->fit.time_limit_s = 3600;  /* would run into it */
    engine_tick(&d);
    assert_true(fake_called("start 1 main n2"));
    assert_true(fake_called("start 2 main n1"));
    assert_phase(3, LUCID_PHASE_MAIN_QUEUE);
    assert_non_null(strstr(rec(1)->reason, "placed on n2"));
    const lucidd_job *j1 = engine_find(&d, 1);
    assert_non_null(j1);
    /* It was routed past the drained profiler, said so in its decision. */
    assert_int_equal(rec(1)->profile_start, 0);
}

/* Right after slurmctld starts, a profiling node it has not heard from yet
 * is UNKNOWN: its jobs wait for it (a drained one is passed by, above);
 * once slurmd registers they are profiled. */
static void an_unknown_profiler_is_waited_for(void **state)
{
    (void)state;
    node("p1")->usable = 0;
    snprintf(node("p1")->fit.state, sizeof node("p1")->fit.state, "UNKNOWN");
    fake_submit(1, "a", 1, 1, 1);
    engine_tick(&d);
    assert_phase(1, LUCID_PHASE_PROFILE_QUEUE);
    assert_non_null(strstr(rec(1)->reason, "does not know its node's state yet"));
    assert_false(fake_called("start 1"));
    node("p1")->usable = 1;
    node("p1")->fit.state[0] = '\0';
    engine_tick(&d);
    assert_true(fake_called("start 1 profiling p1"));
}

/* Releases Slurm does not start: refused there (BadConstraints), not
 * started within --release-timeout, or refused for a limit. */
static void releases_slurm_refuses_are_taken_back(void **state)
{
    (void)state;
    d.cfg.gpu_limit = 0;
    d.cfg.release_timeout_s = 0.3;
    fake_submit(1, "a", 8, 8, 1);
    engine_tick(&d);
    int on_n1 = fake_called("start 1 main n1");
    assert_true(on_n1 || fake_called("start 1 main n2"));
    snprintf(fake_job(1)->reason, sizeof fake_job(1)->reason, "BadConstraints");
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_true(fake_called("take-back 1"));
    assert_true(fake_called(on_n1 ? "start 1 main n2" : "start 1 main n1"));
    /* Not started within the timeout: taken back (Slurm's reason shown). */
    fake_run(1, 1100);
    fake_submit(2, "a", 8, 8, 1);
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_true(started_on_main(2));
    pause_s(0.4);
    fake_end(1, SJ_COMPLETED, "COMPLETED", 1200); /* frees the other node */
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_true(fake_called("take-back 2"));
    assert_true(fake_called(on_n1 ? "start 2 main n2" : "start 2 main n1")); /* not where refused */
    assert_non_null(strstr(engine_find(&d, 2)->took_back, "did not start it"));
    assert_non_null(strstr(engine_find(&d, 2)->took_back, "Resources"));
    /* A limit of the site: taken back at once and not placed for a while. */
    snprintf(fake_job(2)->reason, sizeof fake_job(2)->reason, "QOSMaxGRESPerUser");
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_true(fake_called("take-back 2"));
    if (!strstr(rec(2)->reason, "QOSMaxGRESPerUser"))
        fail_msg("reason: %s / took_back %s", rec(2)->reason, engine_find(&d, 2)->took_back);
    assert_non_null(strstr(fake_job(2)->admin_comment, "QOSMaxGRESPerUser"));
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_false(started_on_main(2));
    assert_phase(2, LUCID_PHASE_MAIN_QUEUE);
}

/* A pinned release Slurm finds no GPUs for (reason Resources: another job
 * took them first, or Slurm passed over its array's tasks) is placed
 * again after 2 s, not after --release-timeout (60 s): job 1 (8 GPUs)
 * pinned to one node, whose GPUs then show busy in Slurm, goes to the
 * other node in the same tick.  A job pinned by its own -w (job 2) keeps
 * the node it asked for.  (In a 2,000-job burst, array tasks so pinned
 * waited up to 32 s while GPUs elsewhere were idle.) */
static void a_pin_slurm_finds_no_gpus_for_is_placed_again(void **state)
{
    (void)state;
    d.cfg.gpu_limit = 0;
    fake_submit(1, "a", 8, 8, 1);
    engine_tick(&d);
    int on_n1 = fake_called("start 1 main n1");
    assert_true(on_n1 || fake_called("start 1 main n2"));
    const char *pinned = on_n1 ? "n1" : "n2", *other = on_n1 ? "n2" : "n1";
    node(pinned)->gpus_used = 8; /* Slurm gave them to another job */
    snprintf(fake_job(1)->reason, sizeof fake_job(1)->reason, "Resources");
    fake.log[0] = '\0';
    engine_tick(&d); /* at once: Slurm may not have tried it yet */
    assert_false(fake_called("take-back 1"));
    pause_s(2.1);
    engine_tick(&d);
    assert_true(fake_called("take-back 1"));
    char want[32];
    snprintf(want, sizeof want, "start 1 main %s", other);
    assert_true(fake_called(want));
    assert_non_null(strstr(engine_find(&d, 1)->took_back, "Slurm found no free GPUs for it on"));
    assert_phase(1, LUCID_PHASE_RUNNING);
    /* Its own -w: it waits for that node. */
    slurm_job *j2 = fake_submit(2, "b", 8, 8, 1);
    snprintf(j2->req_nodes, sizeof j2->req_nodes, "%s", pinned);
    node(pinned)->gpus_used = 0;
    fake.log[0] = '\0';
    engine_tick(&d);
    snprintf(want, sizeof want, "start 2 main %s", pinned);
    assert_true(fake_called(want));
    node(pinned)->gpus_used = 8;
    snprintf(fake_job(2)->reason, sizeof fake_job(2)->reason, "Resources");
    pause_s(2.1);
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_false(fake_called("take-back 2"));
    assert_phase(2, LUCID_PHASE_RUNNING);
}

/* slurmctld stops during a start (the pin is sent, the release fails):
 * lucid records the job started, Slurm still holds it.  Back, the next
 * tick sees lucid's hold on a job lucid started and places it again, on
 * the other node (the first is avoided for a moment); a profiling start
 * the same, and a fresh job's start still under the plugin's user hold,
 * but not its owner's own hold of a start Slurm took.  Without that nothing would ever release them (seen on the
 * lab: a job "running" in lucid's queue, held in Slurm, for minutes). */
static void a_start_that_did_not_reach_slurm_is_made_again(void **state)
{
    (void)state;
    d.cfg.gpu_limit = 0;
    engine_tick(&d);
    fake_submit(1, "a", 8, 8, 1);
    fake.down_at_call = fake.job_calls + 2; /* the hold is made, the start fails */
    engine_tick(&d);
    assert_true(fake_called("hold 1"));
    assert_phase(1, LUCID_PHASE_RUNNING);
    assert_true(fake_job(1)->held && fake_job(1)->admin_held);
    const char *first = engine_find(&d, 1)->rec.node_list;
    const char *other = strcmp(first, "n1") == 0 ? "n2" : "n1";
    char want[32];
    snprintf(want, sizeof want, "start 1 main %s", other);
    fake.up = 1;
    fake.down_at_call = 0;
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_true(fake_called("take-back 1"));
    assert_true(fake_called(want));
    assert_false(fake_job(1)->held);
    assert_phase(1, LUCID_PHASE_RUNNING);
    assert_non_null(strstr(engine_find(&d, 1)->took_back, "did not reach Slurm"));
    /* Released, it is not taken back again while Slurm starts it. */
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_false(fake_called("take-back 1"));
    /* A profiling start alike. */
    d.cfg.gpu_limit = 8;
    fake_submit(2, "b", 1, 1, 1);
    fake.down_at_call = fake.job_calls + 2;
    engine_tick(&d);
    assert_phase(2, LUCID_PHASE_PROFILING);
    assert_true(fake_job(2)->held);
    fake.up = 1;
    fake.down_at_call = 0;
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_true(fake_called("take-back 2"));
    /* p1, the only profiling node, is avoided a moment: main's idle n1
     * takes it (the profiler's bypass). */
    assert_true(fake_called("start 2 main n1"));
    assert_false(fake_job(2)->held);
    assert_phase(2, LUCID_PHASE_RUNNING);
    /* A fresh job is started under the plugin's user hold (lucid's own
     * hold waits out Slurm's accounting): its failed start is placed
     * again the same way. */
    fake_end(1, SJ_COMPLETED, "COMPLETED", time(NULL));
    fake_end(2, SJ_COMPLETED, "COMPLETED", time(NULL));
    engine_tick(&d);
    d.cfg.gpu_limit = 0;
    slurm_job *j3 = fake_submit(3, "c", 8, 8, 1);
    j3->submit_time = time(NULL);
    fake.down_at_call = fake.job_calls + 1; /* no hold first: the start fails */
    engine_tick(&d);
    assert_false(fake_called("hold 3"));
    assert_phase(3, LUCID_PHASE_RUNNING);
    assert_true(fake_job(3)->held && !fake_job(3)->admin_held);
    fake.up = 1;
    fake.down_at_call = 0;
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_true(fake_called("take-back 3"));
    assert_false(fake_job(3)->held);
    assert_phase(3, LUCID_PHASE_RUNNING);
    /* A start Slurm took, then its owner's own hold before it ran: the
     * owner's, left alone. */
    fake_job(3)->held = 1;
    fake.log[0] = '\0';
    engine_tick(&d);
    engine_tick(&d);
    assert_false(fake_called("take-back 3"));
    assert_phase(3, LUCID_PHASE_RUNNING);
}

/* A released job on a node that went down is placed again; a running
 * --requeue job that Slurm requeued unheld after a node failure too. */
static void failed_nodes_and_requeues(void **state)
{
    (void)state;
    d.cfg.gpu_limit = 0;
    fake_submit(1, "a", 8, 8, 1);
    fake_submit(2, "a", 8, 8, 1);
    engine_tick(&d);
    assert_true(fake_called("start 1 main n1") && fake_called("start 2 main n2"));
    fake_run(2, 1100);
    node("n1")->usable = 0;
    snprintf(node("n1")->fit.state, sizeof node("n1")->fit.state, "DOWN");
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_true(fake_called("take-back 1"));
    assert_non_null(strstr(rec(1)->reason, "n1 is DOWN"));
    /* n2 is busy with job 2: job 1 waits; then n2 fails under job 2. */
    slurm_job *j2 = fake_job(2);
    assert_int_equal(rec(2)->main_start, 1100);
    j2->state = SJ_PENDING;
    j2->restarts = 1;
    j2->end_time = 1350; /* the run Slurm cut short: 250 s */
    node("n2")->gpus_used = 0;
    node("n1")->usable = 1;
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_true(fake_called("take-back 2"));
    assert_true(started_on_main(1) && started_on_main(2));
    /* Its history keeps the cut run (sacct --duplicates keeps its record):
     * first main start 1100, 250 s before the next run; main_start is the
     * last run's. */
    assert_int_equal(rec(2)->main_first_start, 1100);
    assert_int_equal(rec(2)->main_earlier_s, 250);
    assert_int_equal(rec(2)->main_start, 0);
    fake_run(2, 1600);
    engine_tick(&d);
    fake_end(2, SJ_COMPLETED, "COMPLETED", 1700);
    engine_tick(&d);
    assert_phase(2, LUCID_PHASE_DONE);
    assert_int_equal(rec(2)->main_start, 1600);
    assert_int_equal(rec(2)->main_first_start, 1100);
    assert_int_equal(rec(2)->main_earlier_s, 250);
    assert_int_equal(rec(2)->runs, 2);
}

/* Requests lucid leaves to Slurm as they are, and a job that never
 * started recorded as ending in the queue. */
static void requests_left_to_slurm(void **state)
{
    (void)state;
    fake_submit(1, "a", 0, 0, 1)->asks_gpus = 0;            /* CPU-only, held by the plugin */
    slurm_job *het = fake_submit(2, "a", 2, 2, 1);
    snprintf(het->pass_why, sizeof het->pass_why, "a heterogeneous job (component 0 of 2)");
    slurm_job *unheld = fake_submit(3, "a", 0, 0, 1);       /* the plugin passed it */
    unheld->held = 0;
    unheld->asks_gpus = 0;
    d.cfg.gpu_limit = 0;
    fake_submit(4, "a", 8, 8, 1);
    fake_submit(5, "a", 0, 0, 1)->asks_gpus = 0; /* --gres=gpu:0, already started by Slurm */
    fake_run(5, 1000);
    engine_tick(&d);
    assert_phase(5, LUCID_PHASE_HANDED_BACK);
    assert_true(fake_called("handback 1") && fake_called("handback 2"));
    assert_false(fake_called("hold 3"));
    assert_phase(1, LUCID_PHASE_HANDED_BACK);
    assert_phase(2, LUCID_PHASE_HANDED_BACK);
    assert_phase(3, LUCID_PHASE_HANDED_BACK);
    assert_non_null(strstr(rec(2)->reason, "heterogeneous"));
    /* Job 4 was released but cancelled before Slurm started it. */
    fake_job(4)->state = SJ_FAILED;
    snprintf(fake_job(4)->state_name, sizeof fake_job(4)->state_name, "CANCELLED");
    engine_tick(&d);
    assert_string_equal(rec(4)->ended_in, "queue");
    assert_string_equal(rec(4)->outcome, "cancelled");
}

/* The profiler never keeps a job from idle main GPUs: with p1 full, a new
 * 1-GPU job goes unprofiled to main (on), or waits for p1 (off). */
static void a_busy_profiler_sends_jobs_to_idle_main_gpus(void **state)
{
    (void)state;
    node("p1")->gpus_used = 8;
    fake_submit(1, "a", 1, 1, 1);
    engine_tick(&d);
    assert_phase(1, LUCID_PHASE_PROFILE_QUEUE); /* bypass off (the tests' default) */
    d.cfg.profiler_bypass = 1;
    fake_submit(2, "a", 8, 8, 1);
    fake_submit(3, "a", 8, 8, 1);
    fake_submit(4, "a", 8, 8, 1); /* main has 16 GPUs idle: two of the three fit */
    engine_tick(&d);
    assert_true(started_on_main(1));
    int started = started_on_main(2) + started_on_main(3) + started_on_main(4);
    assert_int_equal(started, 1); /* job 1 took one GPU of a node: one 8-GPU job fits */
    assert_int_equal(rec(1)->profile_start, 0);
    assert_int_equal(d.profiler_bypassed, 2);
}

/* Profiling never delays a main start (--profiler-yield).  Main full; job
 * 1 (1 GPU, a one-minute limit: the best priority) is being profiled, job 2
 * (2 GPUs, unprofiled) waits on main.  When two GPUs of n1 come free, job 1
 * is placed there: its profiling ends at once (requeue), and while its move
 * lasts (Slurm still completing its profiling run) it keeps that place, so
 * job 2, which it outranks, does not start in the GPUs; then job 1 starts
 * on n1.  A stand-in that does not fit holds nothing: job 3 (4 GPUs, being
 * profiled, best priority) does not keep job 4 from the GPUs left.  Off,
 * job 1 profiles to its limit and job 2 takes the GPUs. */
static void profiling_yields_to_a_main_start(int yield)
{
    d.cfg.profiler_yield = yield;
    d.cfg.profile_limit_s = 600;
    d.cfg.gpu_limit = 4; /* more than 4 GPUs or one node: straight to main */
    node("n1")->gpus_used = 8;
    node("n2")->gpus_used = 8;
    fake_submit(1, "a", 1, 1, 1)->time_limit_min = 1;
    fake_submit(2, "b", 2, 1, 2); /* two nodes: not profiled */
    engine_tick(&d);
    assert_true(fake_called("start 1 profiling p1"));
    assert_phase(2, LUCID_PHASE_MAIN_QUEUE);
    fake_run(1, time(NULL));
    engine_tick(&d);
    assert_phase(1, LUCID_PHASE_PROFILING); /* main is full: it profiles */
    node("n1")->gpus_used = 7;
    node("n2")->gpus_used = 7;
    fake.log[0] = '\0';
    engine_tick(&d);
    if (!yield) {
        assert_phase(1, LUCID_PHASE_PROFILING);
        assert_false(fake_called("requeue 1"));
        assert_true(fake_called("start 2 main n1,n2"));
        return;
    }
    assert_true(fake_called("requeue 1"));
    assert_phase(1, LUCID_PHASE_MOVING);
    assert_non_null(strstr(rec(1)->reason, "has GPUs for it now"));
    assert_false(fake_called("start 2 main n1,n2"));
    assert_int_equal(d.profiler_yielded, 1);
    fake_job(1)->completing = 1; /* the move waits for Slurm */
    engine_tick(&d);
    assert_phase(1, LUCID_PHASE_MOVING);
    assert_false(fake_called("start 2 main n1,n2")); /* job 1 keeps its place */
    fake_job(1)->completing = 0;
    engine_tick(&d);
    assert_true(fake_called("move 1 main"));
    assert_true(started_on_main(1));
    assert_false(fake_called("start 2 main n1,n2"));
    /* A stand-in that does not fit holds nothing. */
    fake_run(1, time(NULL));
    fake_submit(3, "c", 4, 4, 1)->time_limit_min = 1;
    engine_tick(&d);
    assert_true(fake_called("start 3 profiling p1"));
    fake_run(3, time(NULL));
    fake_submit(4, "d", 1, 1, 1)->time_limit_min = 10; /* job 3 outranks it */
    node("p1")->gpus_used = 8; /* the profiler is full: job 4 goes to main's GPU */
    d.cfg.profiler_bypass = 1;
    engine_tick(&d);
    assert_phase(3, LUCID_PHASE_PROFILING);
    assert_true(started_on_main(4));
}

/* A job waiting for a full profiler that main could start now, before any
 * job it outranks, starts there unprofiled (--profiler-yield); without it,
 * and with the bypass off, it waits for the profiler. */
static void waiting_for_the_profiler_yields_too(void **state)
{
    (void)state;
    d.cfg.gpu_limit = 4;
    node("p1")->gpus_used = 8;
    node("n1")->gpus_used = 8;
    node("n2")->gpus_used = 7;
    fake_submit(1, "a", 1, 1, 1)->time_limit_min = 1;
    fake_submit(2, "b", 5, 5, 1)->time_limit_min = 60; /* main queue; it fits nowhere now */
    engine_tick(&d);
    assert_phase(1, LUCID_PHASE_PROFILE_QUEUE);
    assert_phase(2, LUCID_PHASE_MAIN_QUEUE);
    d.cfg.profiler_yield = 1;
    engine_tick(&d);
    assert_true(fake_called("start 1 main n2"));
    assert_phase(1, LUCID_PHASE_RUNNING);
    assert_int_equal(rec(1)->profile_start, 0);
    assert_phase(2, LUCID_PHASE_MAIN_QUEUE);
}

/* Uncontended main GPUs (no job of the main queue waits) are nobody's to
 * take: a profiling run goes on to its limit (a short job ends in the
 * profiler) and a job waiting for the profiler is the bypass's, not the
 * stand-ins', with --profiler-bypass off it waits. */
static void no_yield_without_contention(void **state)
{
    (void)state;
    d.cfg.profiler_yield = 1;
    d.cfg.profile_limit_s = 600;
    node("p1")->gpus_used = 7;
    fake_submit(1, "a", 1, 1, 1)->time_limit_min = 1;
    fake_submit(2, "a", 1, 1, 1)->time_limit_min = 1; /* the profiler is full for it */
    engine_tick(&d);
    assert_true(fake_called("start 1 profiling p1"));
    fake_run(1, time(NULL));
    engine_tick(&d);
    engine_tick(&d);
    assert_phase(1, LUCID_PHASE_PROFILING);
    assert_false(fake_called("requeue 1"));
    assert_phase(2, LUCID_PHASE_PROFILE_QUEUE);
    assert_int_equal(d.profiler_yielded, 0);
}

/* A stand-in that outranks the jobs it would leave waiting only by the
 * ids' tie-break does not act: X (profiling, 2 GPUs on one node) and Y
 * (main queue, one GPU on each of two nodes) have the same priority, 10 min
 * x 2 GPUs; main has 2 GPUs on n1 and 1 on n2, room for one of them.  By
 * the ids X would go first, but cutting its profiling run would idle n1 for
 * the round trip to start a job no better than Y: Y starts, X profiles on.
 * With Y's estimate doubled X outranks it by the order and is moved. */
static void x_profiling_y_waiting(uint32_t y_limit_min)
{
    d.cfg.profiler_yield = 1;
    d.cfg.profile_limit_s = 600;
    d.cfg.gpu_limit = 4;
    node("n1")->gpus_used = 8;
    node("n2")->gpus_used = 8;
    fake_submit(1, "a", 2, 2, 1)->time_limit_min = 10;
    fake_submit(2, "b", 2, 1, 2)->time_limit_min = y_limit_min; /* two nodes: not profiled */
    engine_tick(&d);
    assert_true(fake_called("start 1 profiling p1"));
    assert_phase(2, LUCID_PHASE_MAIN_QUEUE);
    fake_run(1, time(NULL));
    engine_tick(&d);
    node("n1")->gpus_used = 6;
    node("n2")->gpus_used = 7;
    fake.log[0] = '\0';
    engine_tick(&d);
}

static void no_yield_for_a_tie(void **state)
{
    (void)state;
    x_profiling_y_waiting(10);
    assert_true(fake_called("start 2 main n1,n2"));
    assert_false(fake_called("requeue 1"));
    assert_phase(1, LUCID_PHASE_PROFILING);
    assert_int_equal(d.profiler_yielded, 0);
}

static void yield_for_a_better_priority(void **state)
{
    (void)state;
    x_profiling_y_waiting(20); /* X first by the order */
    assert_true(fake_called("requeue 1"));
    assert_phase(1, LUCID_PHASE_MOVING);
    assert_false(fake_called("start 2 main n1,n2"));
    assert_int_equal(d.profiler_yielded, 1);
}

static void profiling_yields_on(void **state)
{
    (void)state;
    profiling_yields_to_a_main_start(1);
}

static void profiling_yields_off(void **state)
{
    (void)state;
    profiling_yields_to_a_main_start(0);
}

/* The site's fair share in lucid's order: alice (account a) is far over her
 * share (F 0.1), bob (account b) used none of his (F 1.0); their jobs ask
 * the same GPUs, bob's estimate is 4x alice's, and one node is free. */
static void alice_and_bob_shares(uint32_t slurm_weight)
{
    d.cfg.fairshare_weight = -1; /* auto: on where Slurm weighs fair share */
    fake.fairshare_weight = slurm_weight;
    fake.nshares = 2;
    fake.shares[0] = (slurm_share){.account = "a", .user = "alice", .factor = 0.1};
    fake.shares[1] = (slurm_share){.account = "b", .user = "bob", .factor = 1.0};
}

/* Alice's 1-hour and bob's 4-hour 8-GPU jobs, accounts a and b. */
static void submit_alice_and_bob(void)
{
    slurm_job *a = fake_submit(1, "alice", 8, 8, 1);
    snprintf(a->account, sizeof a->account, "a");
    a->time_limit_min = 60;
    slurm_job *b = fake_submit(2, "bob", 8, 8, 1);
    snprintf(b->account, sizeof b->account, "b");
    b->time_limit_min = 240;
}

static void two_teams(uint32_t slurm_weight)
{
    d.cfg.gpu_limit = 0;
    alice_and_bob_shares(slurm_weight);
    node("n1")->gpus_used = 8;
    submit_alice_and_bob();
    engine_tick(&d);
}

/* With Slurm weighing fair share (weight 2: x 10^(2 x (0.5 - F))) bob's job
 * comes first: alice 3600 x 8 x 10^0.8 = 181,700 > bob 14400 x 8 x 10^-1 =
 * 11,520. */
static void fair_share_orders_the_queue(void **state)
{
    (void)state;
    two_teams(1000);
    assert_true(fake_called("start 2 main n2"));
    assert_phase(1, LUCID_PHASE_MAIN_QUEUE);
    assert_true(fabs(engine_find(&d, 2)->fairshare - 1.0) < 1e-9);
    assert_true(fabs(engine_find(&d, 1)->order_priority - 3600.0 * 8 * pow(10, 0.8)) < 1);
}

/* The QOS factor (fair share off): alice's 1-hour job in QOS normal
 * (priority 0), bob's 4-hour job in QOS high (priority 100, the site's
 * largest: Q = 1), one node free.  With Slurm weighing QOS (auto weight 2:
 * x 10^-2) bob's comes first: alice 3600 x 8 = 28,800 > bob 14400 x 8 /
 * 100 = 1,152; without, lucid's order stands (alice's).  No limits are
 * enforced, so the QOS records order only. */
static void two_qos(uint32_t slurm_weight)
{
    d.cfg.gpu_limit = 0;
    d.cfg.fairshare_weight = 0;
    d.cfg.qos_weight = -1; /* auto */
    fake.qos_weight = slurm_weight;
    if (!fake.qos_text) /* a limit, not enforced */
        fake.qos_text = "normal|||||0\nhigh||gres/gpu=1|||100\n";
    fake.assoc_text = "";
    node("n1")->gpus_used = 8;
    slurm_job *a = fake_submit(1, "alice", 8, 8, 1);
    snprintf(a->qos, sizeof a->qos, "normal");
    a->time_limit_min = 60;
    slurm_job *b = fake_submit(2, "bob", 8, 8, 1);
    snprintf(b->qos, sizeof b->qos, "high");
    b->time_limit_min = 240;
    engine_tick(&d);
}

static void the_qos_priority_orders_the_queue(void **state)
{
    (void)state;
    two_qos(1000);
    assert_true(fake_called("start 2 main n2"));
    assert_phase(1, LUCID_PHASE_MAIN_QUEUE);
    assert_true(fabs(engine_find(&d, 2)->qos_factor - 1.0) < 1e-12);
    assert_true(fabs(engine_find(&d, 1)->qos_factor) < 1e-12);
    assert_true(fabs(engine_find(&d, 2)->order_priority - 14400.0 * 8 / 100) < 1e-6);
}

/* Slurm weighs QOS but no QOS has a priority: every factor is 0 and lucid's
 * order (and the profiler's fewest GPUs first) stands. */
static void qos_without_priorities_changes_nothing(void **state)
{
    (void)state;
    fake.qos_text = "normal|||||0\nhigh|||||0\n";
    two_qos(1000);
    assert_true(fake_called("start 1 main n2"));
    assert_true(engine_find(&d, 1)->order_priority == 0); /* lucid's own priority decides */
}

static void without_qos_weight_lucid_order_stands(void **state)
{
    (void)state;
    two_qos(0);
    assert_true(fake_called("start 1 main n2"));
    assert_phase(2, LUCID_PHASE_MAIN_QUEUE);
    assert_int_equal(fake.limits_starts, 0); /* nothing to read: no limits, no QOS weight */
}

/* Without fair share in Slurm's priority (weight 0) lucid's order stands. */
static void without_fair_share_lucid_order_stands(void **state)
{
    (void)state;
    two_teams(0);
    assert_true(fake_called("start 1 main n2"));
    assert_phase(2, LUCID_PHASE_MAIN_QUEUE);
}

/* The profiler's queue follows the site's order: alice (F 0.1) asks 1 GPU,
 * bob (F 1.0) 8 GPUs, both 1 hour, and the profiling node has 8 GPUs.
 * Fewest GPUs first (the reference profiler's, fair share off) profiles
 * alice's; with fair share bob's comes first (alice 3600 x 1 x 10^0.8 =
 * 22,715 > bob 3600 x 8 x 10^-1 = 2,880) and takes the whole node. */
static void profiled_in_the_site_order(uint32_t slurm_weight)
{
    d.cfg.profiler_bypass = 0;
    alice_and_bob_shares(slurm_weight);
    slurm_job *a = fake_submit(1, "alice", 1, 1, 1);
    snprintf(a->account, sizeof a->account, "a");
    a->time_limit_min = 60;
    slurm_job *b = fake_submit(2, "bob", 8, 8, 1);
    snprintf(b->account, sizeof b->account, "b");
    b->time_limit_min = 60;
    engine_tick(&d);
}

static void the_profiler_follows_the_site_order(void **state)
{
    (void)state;
    profiled_in_the_site_order(1000);
    assert_true(fake_called("start 2 profiling p1"));
    assert_phase(1, LUCID_PHASE_PROFILE_QUEUE);
    assert_non_null(strstr(rec(1)->reason, "waiting for 1 free GPUs on the profiling partition"));
}

static void without_fair_share_the_profiler_takes_fewest_gpus(void **state)
{
    (void)state;
    profiled_in_the_site_order(0);
    assert_true(fake_called("start 1 profiling p1"));
    assert_phase(2, LUCID_PHASE_PROFILE_QUEUE);
}

/* sshare has not answered (a busy slurmctld): ticks go on, deciding by
 * what was last read (here nothing yet: lucid's own order), and poll it;
 * no second sshare is started meanwhile; its answer is used once there. */
static void a_slow_sshare_never_stalls_a_tick(void **state)
{
    (void)state;
    fake.share_slow = 1;
    two_teams(1000);
    assert_true(fake_called("start 1 main n2"));
    assert_int_equal(fake.share_starts, 1);
    assert_true(engine_find(&d, 2)->fairshare < 0); /* not known yet */
    engine_tick(&d);
    engine_tick(&d);
    assert_int_equal(fake.share_starts, 1);
    assert_true(fake.share_polls >= 3);
    assert_int_equal(d.fairshare_reads, 0);
    fake.share_slow = 0;
    engine_tick(&d);
    assert_int_equal(d.fairshare_reads, 1);
    assert_true(fabs(engine_find(&d, 2)->fairshare - 1.0) < 1e-9);
    assert_true(fabs(engine_find(&d, 2)->order_priority - 14400.0 * 8 / 10) < 1);
}

static double clock_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Polls a started read until it ends (at most 20 s of real time). */
static int poll_until_done(share_read *r, slurm_share **out, long *count, lucid_error *err)
{
    double until = clock_s() + 20;
    int rc;
    while ((rc = share_read_poll(r, clock_s(), out, count, err)) == 0 && clock_s() < until) {
        struct timespec pause = {0, 10 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    return rc;
}

/* The real reader (shares.c) on children that stand in for sshare: one
 * printing sshare's format (an account's own line, an indented account, a
 * factor that is no number or out of 0..1 are skipped), one that fails
 * (no accounting: no shares, no error), one that never answers (polls
 * return at once; killed and reaped at its deadline), a command that
 * does not exist. */
static void sshare_runs_in_the_background(void **state)
{
    (void)state;
    lucid_error err = {{0}};
    share_read r = {0};
    slurm_share *out = NULL;
    long n = -1;
    char *prints[] = {"sh", "-c",
                      "printf 'alpha||0.5\\n  alpha|root|0.25\\nbeta|nobody|1.000000\\n"
                      "beta|x|nan\\nbeta|y|2\\nbeta|z|\\n'",
                      NULL};
    assert_int_equal(share_read_start(&r, prints, clock_s(), 20, &err), 0);
    assert_int_equal(poll_until_done(&r, &out, &n, &err), 1);
    assert_int_equal(n, 2);
    assert_string_equal(out[0].account, "alpha");
    assert_string_equal(out[0].user, "root");
    assert_true(fabs(out[0].factor - 0.25) < 1e-12);
    assert_string_equal(out[1].account, "beta");
    assert_string_equal(out[1].user, "nobody");
    assert_true(fabs(out[1].factor - 1.0) < 1e-12);
    assert_int_equal(r.running, 0);
    free(out);

    char *fails[] = {"sh", "-c", "echo 'sshare: error: no accounting' >&2; exit 1", NULL};
    assert_int_equal(share_read_start(&r, fails, clock_s(), 20, &err), 0);
    assert_int_equal(poll_until_done(&r, &out, &n, &err), 1);
    assert_int_equal(n, 0);
    assert_null(out);

    char *hangs[] = {"sh", "-c", "exec sleep 60", NULL};
    double t0 = clock_s();
    assert_int_equal(share_read_start(&r, hangs, t0, 5, &err), 0);
    pid_t pid = r.pid;
    assert_int_equal(share_read_poll(&r, t0, &out, &n, &err), 0); /* running: no wait */
    assert_int_equal(share_read_poll(&r, t0 + 1, &out, &n, &err), 0);
    assert_int_equal(share_read_poll(&r, t0 + 6, &out, &n, &err), -1); /* past its time */
    assert_non_null(strstr(err.msg, "no answer"));
    assert_int_equal(r.running, 0);
    assert_true(waitpid(pid, NULL, WNOHANG) < 0 && errno == ECHILD); /* killed and reaped */

    char *missing[] = {"lucid-test-no-such-command", NULL};
    assert_int_equal(share_read_start(&r, missing, clock_s(), 5, &err), -1);
    assert_non_null(strstr(err.msg, "lucid-test-no-such-command"));
    assert_int_equal(r.running, 0);
    share_read_cancel(&r); /* harmless when none runs */
}

/* The site's GPU limits (QOS normal MaxTRESPerUser=gres/gpu=4, read from
 * the fake's sacctmgr): alice's 8-GPU job is handed back at once with the
 * limit named; her 2-GPU job starts, her 4-GPU job then waits (2 + 4 > 4;
 * job 2 is only released, but it counts) and holds nothing, so bob's
 * 6-GPU job (QOS long, no limit) behind it in lucid's order (6 x 3600 against 4 x 3600)
 * starts; when job 2 ends, job 3 starts. */
static void site_limits_are_kept(void **state)
{
    (void)state;
    fake.limits_enforced = 1;
    fake.qos_text = "normal||gres/gpu=4||\nlong||||\n";
    fake.assoc_text = "";
    d.cfg.gpu_limit = 0; /* every job to the main queue */
    const uint32_t ids[] = {1, 2, 3, 4};
    const char *users[] = {"alice", "alice", "alice", "bob"};
    const int gpus[] = {8, 2, 4, 6};
    for (int k = 0; k < 4; k++)
        snprintf(fake_submit(ids[k], users[k], gpus[k], gpus[k], 1)->qos, 64, "%s",
                 k < 3 ? "normal" : "long"); /* bob's QOS sets no limit */
    engine_tick(&d);
    assert_int_equal(fake.limits_starts, 2); /* the QOS, then the associations */
    assert_int_equal(d.limits_reads, 1);
    assert_phase(1, LUCID_PHASE_HANDED_BACK);
    assert_true(fake_called("handback 1"));
    assert_string_equal(rec(1)->reason, "handed back to Slurm's scheduler: needs 8 GPUs; QOS normal "
                                        "MaxTRESPerUser gres/gpu=4: can never start");
    assert_string_equal(fake_job(1)->admin_comment,
                        "lucid: handed back to Slurm's scheduler: needs 8 GPUs; QOS normal "
                        "MaxTRESPerUser gres/gpu=4: can never start");
    assert_phase(2, LUCID_PHASE_RUNNING);
    assert_phase(3, LUCID_PHASE_MAIN_QUEUE);
    assert_string_equal(rec(3)->reason,
                        "QOS normal MaxTRESPerUser gres/gpu=4: user alice runs 2; it needs 4 more");
    assert_null(strstr(fake.log, "start 3 "));
    assert_phase(4, LUCID_PHASE_RUNNING); /* behind job 3 in the order; not blocked */
    fake_run(2, 1100);
    fake_run(4, 1100);
    engine_tick(&d);
    assert_phase(3, LUCID_PHASE_MAIN_QUEUE);
    assert_null(strstr(fake.log, "start 3 "));
    fake_end(2, SJ_COMPLETED, "COMPLETED", 1200);
    engine_tick(&d);
    assert_phase(3, LUCID_PHASE_RUNNING);
    assert_true(fake_called("start 3 main n2"));
    assert_phase(3, LUCID_PHASE_RUNNING);
}

/* A packed job asks Slurm for no GPU (its listing shows 0), yet its GPUs
 * are its user's: they count against the user's GPU limits in lucid, so
 * packing is no way past them.  Alice (QOS normal, 4 GPUs per user) runs
 * job 2 (2 GPUs) and job 5, packed onto job 2's GPUs (2): her job 3 (2
 * GPUs) waits with her use named as 4. */
static void packed_jobs_count_against_their_users_limits(void **state)
{
    (void)state;
    fake.limits_enforced = 1;
    fake.qos_text = "normal||gres/gpu=4||\n";
    fake.assoc_text = "";
    d.cfg.gpu_limit = 0; /* every job to the main queue */
    snprintf(fake_submit(2, "alice", 2, 2, 1)->qos, 64, "normal");
    snprintf(fake_submit(5, "alice", 2, 2, 1)->qos, 64, "normal");
    engine_tick(&d);
    assert_phase(2, LUCID_PHASE_RUNNING);
    assert_phase(5, LUCID_PHASE_RUNNING);
    fake_run(2, 1100);
    fake_run(5, 1100);
    /* Job 5 as a packed job looks to Slurm and to lucid. */
    fake_job(5)->gpus = 0;
    lucidd_job *packed = engine_find(&d, 5);
    packed->rec.packed_with = 2;
    snprintf(packed->rec.gpu_list, sizeof packed->rec.gpu_list, "0-1");
    engine_find(&d, 2)->rec.packed_with = 5;
    snprintf(fake_submit(3, "alice", 2, 2, 1)->qos, 64, "normal");
    engine_tick(&d);
    engine_tick(&d);
    assert_phase(3, LUCID_PHASE_MAIN_QUEUE);
    assert_string_equal(rec(3)->reason,
                        "QOS normal MaxTRESPerUser gres/gpu=4: user alice runs 4; it needs 2 more");
    assert_null(strstr(fake.log, "start 3 "));
}

/* A site that does not enforce limits (the simple lab profile: no
 * slurmdbd) is never asked, and nothing changes: the 8-GPU job starts. */
static void no_limits_without_enforcement(void **state)
{
    (void)state;
    fake.qos_text = "normal||gres/gpu=4||\n";
    snprintf(fake_submit(1, "alice", 8, 8, 1)->qos, 64, "normal");
    d.cfg.gpu_limit = 0;
    engine_tick(&d);
    assert_int_equal(fake.limits_starts, 0);
    assert_phase(1, LUCID_PHASE_RUNNING);
}

/* Where Slurm's configuration makes packing unsafe (device confinement on
 * cgroup v2: no packed job could reach its partner's GPUs), lucid does not
 * pack, whatever --packing says, and says why; it reads that again every
 * 10 minutes. */
static void packing_is_off_where_the_site_makes_it_unsafe(void **state)
{
    (void)state;
    d.cfg.packing_mode = 1;
    snprintf(fake.pack_unsafe, sizeof fake.pack_unsafe, "cgroup v2 device confinement (test)");
    fake_submit(1, "alice", 1, 1, 1);
    engine_tick(&d);
    assert_false(d.packing_on);
    assert_string_equal(d.pack_refused, "cgroup v2 device confinement (test)");
    /* The next read (10 minutes on) finds it safe: packing as configured. */
    fake.pack_unsafe[0] = '\0';
    engine_tick(&d);
    assert_false(d.packing_on); /* not read again yet */
    d.pack_checked_at -= 600;
    engine_tick(&d);
    assert_true(d.packing_on);
    assert_string_equal(d.pack_refused, "");
    assert_int_equal(d.main_nodes, 2);
    assert_int_equal(d.share_nodes, 0); /* the fake's nodes have no share GRES */
}

/* The release-ahead tests' start: --release-ahead on, no profiling, n1's
 * GPUs all busy and `n2_used` of n2's. */
static void release_ahead_on(int n2_used)
{
    d.cfg.release_ahead = 1;
    d.cfg.gpu_limit = 0; /* straight to main */
    node("n1")->gpus_used = 8;
    node("n2")->gpus_used = n2_used;
}

/* --release-ahead.  Main (16 GPUs) is full.  In lucid's order (strict: no
 * backfill) A (1 GPU, 10 min), B (2 GPUs, 10 min), C (8 GPUs, 10 min), D (1
 * GPU, 100 min): A, B and C go ahead (unpinned, below pinned releases), 11
 * GPUs of main's 16; D does not, as Slurm's backfill could start it (where
 * one GPU frees) while C waits.  Slurm starts A on n1: it runs there,
 * started ahead.  E (8 GPUs, 1 min) then outranks B and C; B would fit
 * where E does not, so B is held again, and C, behind it, too. */
static void the_head_of_main_goes_ahead(void **state)
{
    (void)state;
    release_ahead_on(8);
    fake_submit(1, "a", 1, 1, 1)->time_limit_min = 10;
    fake_submit(2, "b", 2, 2, 1)->time_limit_min = 10;
    fake_submit(3, "c", 8, 8, 1)->time_limit_min = 10;
    fake_submit(4, "d", 1, 1, 1)->time_limit_min = 100;
    engine_tick(&d);
    assert_true(fake_called("ahead 1 main excl="));
    assert_true(fake_called("ahead 2 main excl="));
    assert_true(fake_called("ahead 3 main excl="));
    assert_false(fake_called("ahead 4 main excl="));
    assert_false(fake_job(1)->held);
    assert_true(fake_job(4)->held);
    assert_non_null(strstr(fake_job(1)->admin_comment, "lucid-ahead"));
    assert_phase(1, LUCID_PHASE_MAIN_QUEUE);
    assert_int_equal(d.released_ahead, 3);
    /* Slurm's backfill plans a start for B: a StartTime ahead, no --begin. */
    fake_job(2)->start_time = time(NULL) + 600;
    fake.log[0] = '\0';
    engine_tick(&d); /* nothing changed: nothing done again */
    assert_false(fake_called("ahead 1 main excl=") || fake_called("hold 1") ||
                 fake_called("hold 2"));
    assert_null(strstr(rec(2)->reason, "--begin"));
    /* Slurm starts A on n1 as its GPU frees. */
    snprintf(fake_job(1)->req_nodes, sizeof fake_job(1)->req_nodes, "n1");
    fake_run(1, time(NULL));
    engine_tick(&d);
    assert_phase(1, LUCID_PHASE_RUNNING);
    assert_string_equal(rec(1)->node_list, "n1");
    assert_true(rec(1)->main_start > 0);
    assert_int_equal(d.started_ahead, 1);
    fake_submit(5, "e", 8, 8, 1)->time_limit_min = 1;
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_true(fake_called("ahead 5 main excl="));
    assert_true(fake_called("hold 2") && fake_called("hold 3"));
    assert_true(fake_job(2)->held && fake_job(3)->held);
    assert_false(engine_find(&d, 2)->ahead);
    assert_int_equal(d.released_ahead, 4);
}

/* --release-ahead with --async-writes: a release ahead, and lucid's start
 * of a job released ahead, of a job inside Slurm's accounting window are
 * written off the tick; a refused release ahead is no release (made again
 * at a later tick). */
static void releases_ahead_in_the_accounting_window_leave_the_tick(void **state)
{
    (void)state;
    lucid_error err = {{0}};
    d.writer = lucidd_writer_new(0, &err);
    assert_non_null(d.writer);
    release_ahead_on(8);
    slurm_job *j1 = fake_submit(1, "a", 1, 1, 1);
    j1->time_limit_min = 10;
    j1->submit_time = time(NULL);
    engine_tick(&d);
    assert_true(engine_find(&d, 1)->ahead);
    assert_false(fake_called("ahead 1 main excl="));
    assert_true(fake_job(1)->held);
    lucidd_writer_flush(d.writer);
    assert_true(fake_called("ahead 1 main excl="));
    assert_false(fake_job(1)->held);
    engine_tick(&d);
    assert_true(engine_find(&d, 1)->ahead);
    assert_int_equal(d.released_ahead, 1);
    /* A GPU of n1 frees: lucid starts it; the promotion waits for the writer. */
    node("n1")->gpus_used = 7;
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_phase(1, LUCID_PHASE_RUNNING);
    assert_false(fake_called("promote 1"));
    assert_int_equal(unacknowledged(), 1);
    lucidd_writer_flush(d.writer);
    assert_true(fake_called("promote 1"));
    engine_tick(&d);
    assert_int_equal(unacknowledged(), 0);
    assert_phase(1, LUCID_PHASE_RUNNING);
    /* Job 2's release ahead is refused: no release; made again later. */
    slurm_job *j2 = fake_submit(2, "b", 1, 1, 1);
    j2->time_limit_min = 10;
    j2->submit_time = time(NULL);
    engine_tick(&d);
    assert_true(engine_find(&d, 2)->ahead);
    refused_writes();
    engine_tick(&d);
    assert_int_equal(d.writes_failed, 1);
    assert_true(fake_job(2)->held);
    fake.log[0] = '\0';
    for (int i = 0; i < 4 && !fake_called("ahead 2 main excl="); i++) {
        engine_tick(&d);
        lucidd_writer_flush(d.writer);
    }
    assert_true(fake_called("ahead 2 main excl="));
    assert_false(fake_job(2)->held);
}

/* --release-ahead with backfill (easy, margin 1; estimates the time
 * limits, priority estimate x GPUs).  Jobs 1 and 2 (8 GPUs, 30 and 60 min)
 * fill n1 and n2.  Waiting, in lucid's order: job 3 (2 GPUs, 10 min: 1200),
 * job 4 (2 GPUs, 20 min: 2400), job 5 (1 GPU, 50 min: 3000), job 6 (4 GPUs,
 * 20 min: 4800).  Job 3 fits nowhere and holds the reservation (n1 at T +
 * 30 min): it is the head, so it goes ahead, and job 4 behind it (2 GPUs:
 * wherever job 4 fits, job 3 fits, and Slurm starts job 3 first).  Job 5
 * would fit where job 3 does not (one GPU freed): it stays with lucid,
 * which backfills it only if it ends before the reservation, and job 6
 * behind it too.  Conservative backfill: every waiting job holds one, and
 * a job ahead could take any of them: none goes, jobs 3 and 4 are held
 * again.  (Before, no job went ahead while any held a reservation.) */
static void the_reservation_holder_goes_ahead_first(void **state)
{
    (void)state;
    d.cfg.release_ahead = 1;
    d.cfg.gpu_limit = 0;
    d.cfg.backfill = 1; /* LUCID_BACKFILL_EASY */
    d.cfg.backfill_margin = 1;
    fake_submit(1, "a", 8, 8, 1)->time_limit_min = 30;
    fake_submit(2, "b", 8, 8, 1)->time_limit_min = 60;
    engine_tick(&d);
    assert_phase(1, LUCID_PHASE_RUNNING);
    assert_phase(2, LUCID_PHASE_RUNNING);
    time_t t = time(NULL);
    fake_run(1, t);
    fake_run(2, t);
    fake_submit(3, "c", 2, 2, 1)->time_limit_min = 10;
    fake_submit(4, "d", 2, 2, 1)->time_limit_min = 20;
    fake_submit(5, "e", 1, 1, 1)->time_limit_min = 50;
    fake_submit(6, "f", 4, 4, 1)->time_limit_min = 20;
    fake.log[0] = '\0';
    engine_tick(&d);
    const lucidd_job *head = engine_find(&d, 3);
    assert_true(rec(3)->reserved_since > 0);
    assert_int_equal(head->reserved_at, t + 30 * 60);
    assert_int_equal(rec(4)->reserved_since, 0);
    assert_true(fake_called("ahead 3 main excl="));
    assert_true(fake_called("ahead 4 main excl="));
    assert_false(fake_called("ahead 5 main"));
    assert_false(fake_called("ahead 6 main"));
    assert_false(fake_job(3)->held || fake_job(4)->held);
    assert_true(fake_job(5)->held && fake_job(6)->held);
    assert_int_equal(d.released_ahead, 2);
    /* Conservative: jobs 4, 5 and 6 hold reservations too. */
    d.cfg.backfill = 2; /* LUCID_BACKFILL_CONSERVATIVE */
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_true(rec(4)->reserved_since > 0);
    assert_true(fake_called("hold 3") && fake_called("hold 4"));
    assert_true(fake_job(3)->held && fake_job(4)->held);
    assert_false(engine_find(&d, 3)->ahead || engine_find(&d, 4)->ahead);
    assert_int_equal(d.released_ahead, 2);
}

/* A job released ahead that Slurm refuses for a limit is held again and
 * kept from placements for a while; a packed job's node is excluded (Slurm
 * counts the GPUs it shares free); a job lucid starts itself is not
 * pinned (Slurm may be starting it: a pin would resize it); off, the jobs
 * ahead are held again. */
static void released_ahead_refused_excluded_and_off(void **state)
{
    (void)state;
    release_ahead_on(7);
    fake_submit(9, "z", 1, 1, 1)->time_limit_min = 1;
    engine_tick(&d);
    assert_true(fake_called("start 9 main n2"));
    fake_run(9, time(NULL));
    fake_submit(1, "a", 1, 1, 1)->time_limit_min = 10;
    fake_submit(2, "b", 1, 1, 1)->time_limit_min = 20;
    fake_submit(3, "c", 1, 1, 1)->time_limit_min = 30;
    engine_tick(&d);
    assert_true(fake_called("ahead 1 main excl="));
    assert_true(fake_called("ahead 3 main excl="));
    /* Job 9 shares its GPU with a packed job (as lucid would have placed it). */
    snprintf(engine_find(&d, 9)->rec.gpu_list, sizeof engine_find(&d, 9)->rec.gpu_list, "0");
    snprintf(engine_find(&d, 9)->rec.node_list, sizeof engine_find(&d, 9)->rec.node_list, "n2");
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_true(fake_called("exclude 1 n2") && fake_called("exclude 2 n2"));
    assert_string_equal(fake_job(1)->exc_nodes, "n2");
    assert_phase(1, LUCID_PHASE_MAIN_QUEUE); /* its exclusion is lucid's: no resize */
    /* Slurm refuses job 2 for a limit. */
    snprintf(fake_job(2)->reason, sizeof fake_job(2)->reason, "QOSMaxGRESPerUser");
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_true(fake_called("hold 2") && fake_called("exclude 2 "));
    assert_true(fake_job(2)->held);
    assert_string_equal(fake_job(2)->exc_nodes, "");
    if (!strstr(rec(2)->reason, "QOSMaxGRESPerUser"))
        fail_msg("reason: %s / took_back %s", rec(2)->reason, engine_find(&d, 2)->took_back);
    assert_false(fake_called("ahead 2 main")); /* kept out for a while */
    /* A GPU of n1 frees: lucid starts job 1 itself, without a pin (Slurm may
     * be starting it this moment, and a pin would resize a running job):
     * a pinned release's priority only; then it runs where Slurm put it. */
    node("n1")->gpus_used = 7;
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_true(fake_called("promote 1"));
    assert_false(started_on_main(1));
    assert_phase(1, LUCID_PHASE_RUNNING);
    assert_true(engine_find(&d, 1)->releasing);
    snprintf(fake_job(1)->req_nodes, sizeof fake_job(1)->req_nodes, "n1");
    fake_run(1, time(NULL));
    engine_tick(&d);
    assert_false(engine_find(&d, 1)->releasing);
    assert_string_equal(rec(1)->node_list, "n1");
    assert_int_equal(d.started_ahead, 0);
    /* Off: the job still ahead is held again. */
    d.cfg.release_ahead = 0;
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_true(fake_called("hold 3"));
    assert_true(fake_job(3)->held);
}

/* The faults lab run that stalled (CI, c9c964e): job 1 went ahead while
 * every main node had a packed job, so it excluded them all; lucid later
 * placed it on n2 and only raised its priority, and Slurm, finding no node
 * it could use, held it itself (priority 0, BadConstraints), for good.
 * Now: with every node packed none goes ahead; a job ahead that lucid
 * places on a node it excludes has that node taken out of its exclusion;
 * and a released job Slurm holds as BadConstraints is taken back. */
static void a_job_ahead_is_never_excluded_from_where_lucid_puts_it(void **state)
{
    (void)state;
    release_ahead_on(6);
    fake_submit(8, "y", 1, 1, 1)->time_limit_min = 1;
    fake_submit(9, "z", 1, 1, 1)->time_limit_min = 1;
    engine_tick(&d);
    assert_true(fake_called("start 8 main n2") && fake_called("start 9 main n2"));
    fake_run(8, time(NULL));
    fake_run(9, time(NULL));
    node("n2")->gpus_used = 8;
    /* As lucid records packed jobs: one on each node. */
    lucid_job_record *r8 = &engine_find(&d, 8)->rec, *r9 = &engine_find(&d, 9)->rec;
    snprintf(r8->node_list, sizeof r8->node_list, "n1");
    snprintf(r8->gpu_list, sizeof r8->gpu_list, "0");
    snprintf(r9->node_list, sizeof r9->node_list, "n2");
    snprintf(r9->gpu_list, sizeof r9->gpu_list, "0");
    fake_submit(1, "a", 1, 1, 1)->time_limit_min = 10;
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_false(fake_called("ahead 1"));
    assert_true(fake_job(1)->held);
    /* n1's packed job is gone: job 1 goes ahead, n2 excluded. */
    r8->gpu_list[0] = '\0';
    engine_tick(&d);
    assert_true(fake_called("ahead 1 main excl=n2"));
    assert_string_equal(fake_job(1)->exc_nodes, "n2");
    /* n2's packed job ends and frees its GPU: in the same tick lucid
     * places job 1 there (it puts no job beside a packed one) and takes
     * n2 out of what it excludes (no pin: Slurm may be starting it). */
    fake_end(9, SJ_COMPLETED, "COMPLETED", time(NULL));
    node("n2")->gpus_used = 7;
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_true(fake_called("promote 1 excl="));
    assert_string_equal(fake_job(1)->exc_nodes, "");
    assert_phase(1, LUCID_PHASE_RUNNING);
    assert_string_equal(rec(1)->node_list, "n2");
    /* Slurm still finds it no node and holds it itself: lucid takes it back. */
    fake_job(1)->held = 1;
    fake_job(1)->admin_held = 0;
    snprintf(fake_job(1)->reason, sizeof fake_job(1)->reason, "BadConstraints");
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_true(fake_called("take-back 1"));
    assert_phase(1, LUCID_PHASE_MAIN_QUEUE);
    assert_non_null(strstr(rec(1)->reason, "BadConstraints"));
}

/* A job ahead that Slurm finds it can never start (its scheduler holds it:
 * priority 0, BadConstraints) is held again as lucid's and kept from
 * going ahead for a while, not released again tick after tick. */
static void a_job_ahead_slurm_holds_is_held_again(void **state)
{
    (void)state;
    release_ahead_on(8);
    fake_submit(1, "a", 1, 1, 1)->time_limit_min = 10;
    engine_tick(&d);
    assert_true(fake_called("ahead 1 main excl="));
    fake_job(1)->held = 1;
    fake_job(1)->admin_held = 0;
    snprintf(fake_job(1)->reason, sizeof fake_job(1)->reason, "BadConstraints");
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_true(fake_called("hold 1"));
    assert_true(fake_job(1)->admin_held);
    assert_non_null(strstr(rec(1)->reason, "BadConstraints"));
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_false(fake_called("ahead 1"));
}

/* The asan lab run of slurm_lucidd_limits: LOW and HIGH went ahead in
 * lucid's order of the moment (LOW first); lucid then read HIGH's QOS
 * factor and put it first, but Slurm still had LOW's priority above
 * HIGH's and started LOW on the next free node.  Here with fair share:
 * alice's 1-hour and bob's 4-hour 8-GPU jobs go ahead with main full,
 * alice's first (her priority in Slurm the higher); then the users'
 * shares arrive (alice far over hers) and bob's comes first: both are
 * given their priorities again, bob's now the higher. */
static void jobs_ahead_follow_lucids_order_in_slurm(void **state)
{
    (void)state;
    release_ahead_on(8);
    d.cfg.fairshare_weight = -1;
    fake.fairshare_weight = 1000;
    submit_alice_and_bob();
    engine_tick(&d);
    assert_true(fake_called("ahead 1 main excl=") && fake_called("ahead 2 main excl="));
    uint32_t pa = engine_find(&d, 1)->ahead_priority, pb = engine_find(&d, 2)->ahead_priority;
    assert_true(pa > pb);
    fake.log[0] = '\0';
    engine_tick(&d); /* nothing changed: nothing sent again */
    assert_false(fake_called("promote 1") || fake_called("promote 2"));
    alice_and_bob_shares(1000);
    d.fairshare_read_at = 0; /* the next read is due */
    fake.log[0] = '\0';
    engine_tick(&d);
    engine_tick(&d);
    assert_true(fake_called("promote 1") && fake_called("promote 2"));
    assert_true(engine_find(&d, 2)->ahead_priority > engine_find(&d, 1)->ahead_priority);
    assert_true(fake_job(1)->held == 0 && fake_job(2)->held == 0); /* still ahead */
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_false(fake_called("promote 1") || fake_called("promote 2"));
}

/* lucid decides to start a job released ahead, records it, and Slurm stops
 * answering before the promotion reaches it: the restarted lucidd (its
 * reconcile) applies it again, a pinned release's priority and all. */
static void an_unapplied_start_of_a_job_ahead_is_applied_again(void **state)
{
    (void)state;
    release_ahead_on(8);
    fake_submit(1, "a", 1, 1, 1)->time_limit_min = 10;
    engine_tick(&d);
    assert_true(fake_called("ahead 1 main excl="));
    node("n1")->gpus_used = 7;
    fake.down_at_call = fake.job_calls + 1;
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_false(fake_called("promote 1"));
    assert_phase(1, LUCID_PHASE_RUNNING);
    fake.up = 1;
    fake.down_at_call = 0;
    d.reconciled = 0; /* as at a restart */
    engine_tick(&d);
    assert_true(fake_called("promote 1"));
    assert_false(fake_called("start 1 main")); /* never pinned */
}

/* A job being profiled takes the next main GPUs before every job it
 * outranks (--profiler-yield), and keeps them through its move, but only
 * in lucid's decision: Slurm would start a job released ahead there the
 * moment they free.  So no job it outranks is released ahead while it is
 * profiled or moving; once it is placed, they are again. */
static void a_yielding_job_keeps_its_gpus_from_jobs_ahead(void **state)
{
    (void)state;
    d.cfg.release_ahead = 1;
    d.cfg.profiler_yield = 1;
    d.cfg.profile_limit_s = 600;
    d.cfg.gpu_limit = 4;
    node("n1")->gpus_used = 8;
    node("n2")->gpus_used = 8;
    fake_submit(1, "a", 1, 1, 1)->time_limit_min = 1;
    fake_submit(2, "b", 8, 8, 1)->time_limit_min = 60; /* 8 GPUs: straight to main */
    engine_tick(&d);
    assert_true(fake_called("start 1 profiling p1"));
    assert_true(fake_called("ahead 2 main excl=")); /* job 1 is not running yet */
    fake_run(1, time(NULL));
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_true(fake_called("hold 2")); /* job 1, profiled, outranks it */
    assert_true(fake_job(2)->held);
    node("n1")->gpus_used = 7; /* main has a GPU for job 1: it yields */
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_true(fake_called("requeue 1"));
    assert_phase(1, LUCID_PHASE_MOVING);
    assert_false(fake_called("ahead 2 main excl="));
    fake_job(1)->completing = 1; /* the move waits for Slurm */
    fake.log[0] = '\0';
    engine_tick(&d);
    assert_false(fake_called("ahead 2 main excl="));
    fake_job(1)->completing = 0;
    engine_tick(&d);
    assert_true(started_on_main(1));
    assert_true(fake_called("ahead 2 main excl="));
}

/* A backfill reservation is lucid's promise, which Slurm does not know:
 * while job 2 holds one (backfill_behind_job1; job 4 backfilled on n2, so
 * nothing fits now), no job goes ahead, not even job 5 (2 GPUs, 1 min),
 * which lucid's order puts first; Slurm would start it on the first GPUs
 * to free, reserved or not. */
static void no_job_goes_ahead_of_a_reservation(void **state)
{
    (void)state;
    d.cfg.release_ahead = 1;
    backfill_behind_job1(1.2, 0);
    fake_submit(4, "dave", 8, 8, 1)->time_limit_min = 10;
    engine_tick(&d);
    assert_true(fake_called("start 4 main n2")); /* backfilled: nothing fits now */
    fake_run(4, time(NULL));
    engine_tick(&d);
    assert_true(rec(2)->reserved_since > 0);
    fake_submit(5, "erin", 2, 2, 1)->time_limit_min = 1; /* 2 GPUs: not profiled */
    engine_tick(&d);
    assert_phase(5, LUCID_PHASE_MAIN_QUEUE);
    assert_false(fake_called("ahead 5 main excl="));
    assert_int_equal(d.released_ahead, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(intake_holds_as_operator_and_places, setup, teardown),
        cmocka_unit_test_setup_teardown(new_jobs_wait_out_slurms_accounting, setup, teardown),
        cmocka_unit_test_setup_teardown(a_burst_is_held_a_slice_a_tick, setup, teardown),
        cmocka_unit_test_setup_teardown(site_limits_are_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(no_limits_without_enforcement, setup, teardown),
        cmocka_unit_test_setup_teardown(profiling_limit_counts_observed_time, setup, teardown),
        cmocka_unit_test_setup_teardown(no_requeue_of_recovered_jobs_right_after_slurmctld_starts, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(outcomes_say_where_and_how, setup, teardown),
        cmocka_unit_test_setup_teardown(waiting_jobs_get_start_estimates, setup, teardown),
        cmocka_unit_test_setup_teardown(an_adopted_job_frees_its_gpus_in_the_estimates, setup, teardown),
        cmocka_unit_test_setup_teardown(an_adopted_job_on_a_host_range_frees_every_node, setup, teardown),
        cmocka_unit_test_setup_teardown(ratio_table_is_rebuilt_from_the_store, setup, teardown),
        cmocka_unit_test_setup_teardown(backfill_honours_the_reservation, setup, teardown),
        cmocka_unit_test_setup_teardown(a_reservation_survives_a_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(a_restart_publishes_after_its_first_decision, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(arrivals_are_noted_and_mirrored, setup, teardown),
        cmocka_unit_test_setup_teardown(dependencies_begin_and_user_holds_take_no_capacity, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(node_choices_are_honoured_or_handed_back, setup, teardown),
        cmocka_unit_test_setup_teardown(per_job_gpus_choose_their_nodes, setup, teardown),
        cmocka_unit_test_setup_teardown(arrays_split_and_resizes_reexamined, setup, teardown),
        cmocka_unit_test_setup_teardown(what_a_returning_lucidd_finds, setup, teardown),
        cmocka_unit_test_setup_teardown(ticks_go_on_while_slurmctld_is_down, setup, teardown),
        cmocka_unit_test_setup_teardown(slurmctld_lost_in_a_tick_ends_its_calls, setup, teardown),
        cmocka_unit_test_setup_teardown(cpus_and_exclusive_decide_the_node, setup, teardown),
        cmocka_unit_test_setup_teardown(cpus_add_up_within_one_decision, setup, teardown),
        cmocka_unit_test_setup_teardown(typed_gpus_and_the_profiler, setup, teardown),
        cmocka_unit_test_setup_teardown(drained_profiler_and_reserved_nodes, setup, teardown),
        cmocka_unit_test_setup_teardown(an_unknown_profiler_is_waited_for, setup, teardown),
        cmocka_unit_test_setup_teardown(releases_slurm_refuses_are_taken_back, setup, teardown),
        cmocka_unit_test_setup_teardown(a_pin_slurm_finds_no_gpus_for_is_placed_again, setup, teardown),
        cmocka_unit_test_setup_teardown(a_start_that_did_not_reach_slurm_is_made_again, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(writes_in_the_accounting_window_leave_the_tick, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(the_writer_thread_keeps_order, setup, teardown),
        cmocka_unit_test_setup_teardown(writes_are_taken_up_to_a_moment, setup, teardown),
        cmocka_unit_test_setup_teardown(the_reader_thread_reads_when_asked, setup, teardown),
        cmocka_unit_test_setup_teardown(a_start_off_the_tick_keeps_its_gpus, setup, teardown),
        cmocka_unit_test_setup_teardown(a_listing_older_than_a_write_judges_nothing_of_it, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(every_write_leaves_the_tick_with_async_writes_on, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_reason_alone_is_stored_at_most_every_30_s, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(failed_nodes_and_requeues, setup, teardown),
        cmocka_unit_test_setup_teardown(requests_left_to_slurm, setup, teardown),
        cmocka_unit_test_setup_teardown(profiling_yields_on, setup, teardown),
        cmocka_unit_test_setup_teardown(profiling_yields_off, setup, teardown),
        cmocka_unit_test_setup_teardown(waiting_for_the_profiler_yields_too, setup, teardown),
        cmocka_unit_test_setup_teardown(no_yield_without_contention, setup, teardown),
        cmocka_unit_test_setup_teardown(no_yield_for_a_tie, setup, teardown),
        cmocka_unit_test_setup_teardown(yield_for_a_better_priority, setup, teardown),
        cmocka_unit_test_setup_teardown(the_head_of_main_goes_ahead, setup, teardown),
        cmocka_unit_test_setup_teardown(releases_ahead_in_the_accounting_window_leave_the_tick,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(the_reservation_holder_goes_ahead_first, setup, teardown),
        cmocka_unit_test_setup_teardown(released_ahead_refused_excluded_and_off, setup, teardown),
        cmocka_unit_test_setup_teardown(a_job_ahead_is_never_excluded_from_where_lucid_puts_it, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(an_unapplied_start_of_a_job_ahead_is_applied_again, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_job_ahead_slurm_holds_is_held_again, setup, teardown),
        cmocka_unit_test_setup_teardown(jobs_ahead_follow_lucids_order_in_slurm, setup, teardown),
        cmocka_unit_test_setup_teardown(a_yielding_job_keeps_its_gpus_from_jobs_ahead, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(no_job_goes_ahead_of_a_reservation, setup, teardown),
        cmocka_unit_test_setup_teardown(a_busy_profiler_sends_jobs_to_idle_main_gpus, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(fair_share_orders_the_queue, setup, teardown),
        cmocka_unit_test_setup_teardown(the_qos_priority_orders_the_queue, setup, teardown),
        cmocka_unit_test_setup_teardown(without_qos_weight_lucid_order_stands, setup, teardown),
        cmocka_unit_test_setup_teardown(qos_without_priorities_changes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(without_fair_share_lucid_order_stands, setup, teardown),
        cmocka_unit_test_setup_teardown(a_slow_sshare_never_stalls_a_tick, setup, teardown),
        cmocka_unit_test_setup_teardown(the_profiler_follows_the_site_order, setup, teardown),
        cmocka_unit_test_setup_teardown(without_fair_share_the_profiler_takes_fewest_gpus, setup,
                                        teardown),
        cmocka_unit_test(sshare_runs_in_the_background),
        cmocka_unit_test_setup_teardown(ended_jobs_leave_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(packing_is_off_where_the_site_makes_it_unsafe, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(packed_jobs_count_against_their_users_limits, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
