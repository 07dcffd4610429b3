/* test_import.c — the trace importers' shared pieces against known answers:
 * SHA-256 (FIPS 180-4 test vectors), UTC offsets, CSV field quoting read
 * back by lucid_csv, the window / VC-size / duplicate-id rules, and the
 * join of a requeued job's sacct records (sacct --duplicates). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/csv.h"
#include "lucid/import.h"
#include "testutil.h"

static void sha256_vectors(void **state)
{
    (void)state;
    char hex[65];
    lucid_sha256_hex("", 0, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    lucid_sha256_hex("abc", 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"; /* 2 blocks */
    lucid_sha256_hex(two, strlen(two), hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    char *million = malloc(1000000);
    assert_non_null(million);
    memset(million, 'a', 1000000);
    lucid_sha256_hex(million, 1000000, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(million);
}

static void utc_offsets(void **state)
{
    (void)state;
    lucid_error err;
    int64_t a, b, c, d;
    assert_int_equal(lucid_import_time("2023-03-01 00:18:22+08:00", &a, "f", 1, "t", &err), 0);
    assert_int_equal(lucid_import_time("2023-02-28 16:18:22", &b, "f", 1, "t", &err), 0);
    assert_int_equal(a, b);
    assert_int_equal(lucid_import_time("2023-02-28 11:18:22-0500", &c, "f", 1, "t", &err), 0);
    assert_int_equal(c, b);
    assert_int_equal(lucid_import_time("2023-02-28T16:18:22Z", &d, "f", 1, "t", &err), 0);
    assert_int_equal(d, b);
    assert_int_equal(lucid_import_time("2023-02-28 16:18:22+8h", &d, "f", 7, "t", &err), -1);
    assert_string_equal(err.msg, "f:7: t: '2023-02-28 16:18:22+8h': bad UTC offset");
    assert_int_equal(lucid_import_time("2023-02-30 00:00:00", &d, "f", 8, "t", &err), -1);
}

static void quoted_fields_read_back(void **state)
{
    (void)state;
    static const char *const fields[] = {"plain", "a,b", "say \"hi\"", "two\nlines", ""};
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    fputs("a,b,c,d,e\n", out);
    for (int i = 0; i < 5; i++) {
        if (i)
            fputc(',', out);
        lucid_csv_write_field(out, fields[i]);
    }
    fputc('\n', out);
    fclose(out);
    lucid_error err;
    lucid_csv *csv = lucid_csv_open_mem("q.csv", text, len, &err);
    assert_non_null(csv);
    assert_int_equal(lucid_csv_next(csv, &err), 1);
    for (int i = 0; i < 5; i++)
        assert_string_equal(lucid_csv_field(csv, i), fields[i]);
    lucid_csv_close(csv);
    free(text);
}

static lucid_import_job *add(lucid_import *imp, int64_t id, int64_t submit, int32_t gpus,
                             const char *vc)
{
    lucid_import_job *job = lucid_import_push(imp);
    assert_non_null(job);
    job->job_id = id;
    job->submit = submit;
    job->duration = 10;
    job->gpu_num = gpus;
    job->vc = lucid_import_vc(imp, vc, -1);
    job->record = id;
    return job;
}

static int64_t removed(const lucid_import *imp, const char *rule)
{
    for (int i = 0; i < imp->nrules; i++)
        if (strcmp(imp->rules[i].name, rule) == 0)
            return imp->rules[i].removed;
    return -1;
}

static void shared_rules(void **state)
{
    (void)state;
    lucid_import imp;
    lucid_import_init(&imp, lucid_import_find("itp"));
    add(&imp, 1, 1000, 4, "a");
    add(&imp, 2, 2000, 9, "a");  /* largest job: VC a derived as 16 GPUs */
    add(&imp, 3, 500, 1, "b");   /* before --since */
    add(&imp, 4, 9000, 1, "b");  /* at --until: out */
    add(&imp, 5, 1500, 32, "c"); /* VC c given 16 GPUs below: too large */
    add(&imp, 6, 1600, 1, "d");  /* VC d given 0 GPUs */
    lucid_error err;
    assert_int_equal(lucid_import_set_vc_sizes(&imp, "c=16,d=0", &err), 0);
    assert_int_equal(lucid_import_set_vc_sizes(&imp, "c=12", &err), -1); /* not whole nodes */
    lucid_import_window win = {1000, 9000, INT64_MIN};
    assert_int_equal(lucid_import_finish(&imp, &win, &err), 0);
    assert_int_equal(imp.njobs, 2);
    assert_int_equal(removed(&imp, "before_since"), 1);
    assert_int_equal(removed(&imp, "after_until"), 1);
    assert_int_equal(removed(&imp, "larger_than_vc"), 1);
    assert_int_equal(removed(&imp, "vc_without_gpus"), 1);
    assert_int_equal(imp.vc_gpus[0], 16);
    assert_int_equal(win.origin, 500); /* the earliest submit read, before the window */
    lucid_import_free(&imp);

    lucid_import_init(&imp, lucid_import_find("itp"));
    add(&imp, 7, 10, 1, "a");
    add(&imp, 7, 20, 1, "a");
    lucid_import_window open = {INT64_MIN, INT64_MAX, INT64_MIN};
    assert_int_equal(lucid_import_finish(&imp, &open, &err), -1);
    assert_string_equal(err.msg, "import: job id 7 appears twice (records 7 and 7)");
    lucid_import_free(&imp);
}

/* sacct text through the stream reader: 0 or -1 with err; imp initialised. */
static int read_sacct_text(lucid_import *imp, const char *text, lucid_error *err)
{
    lucid_import_init(imp, lucid_import_find("sacct"));
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    assert_non_null(f);
    lucid_import_options opt = {.since = INT64_MIN, .until = INT64_MAX};
    int rc = lucid_import_sacct_stream(imp, f, "dup.sacct", &opt, err);
    fclose(f);
    return rc;
}

#define SACCT_HEAD "JobID|User|Account|Partition|AllocTRES|Submit|Start|End|State\n"

/* A profiled job as the library hands it on: calendar times, the run time
 * of both runs and the part before the last; the records come in any order. */
static void sacct_requeue_joined(void **state)
{
    (void)state;
    lucid_import imp;
    lucid_error err;
    /* Main run first in the file: the join orders by Submit. */
    const char *text = SACCT_HEAD
        "7|ann|a|main|cpu=4,gres/gpu=2|2024-01-01T00:10:00|2024-01-01T00:12:00|"
        "2024-01-01T01:12:00|COMPLETED\n"
        "7|ann|a|prof|cpu=4,gres/gpu=2|2024-01-01T00:00:00|2024-01-01T00:01:40|"
        "2024-01-01T00:10:00|REQUEUED\n";
    assert_int_equal(read_sacct_text(&imp, text, &err), 0);
    assert_int_equal(imp.njobs, 1);
    const lucid_import_job *job = &imp.jobs[0];
    const int64_t midnight = 1704067200; /* 2024-01-01 00:00:00 UTC */
    assert_int_equal(job->submit, midnight);             /* the profiling record's Submit */
    assert_int_equal(job->first_start, midnight + 100);  /* waited 100 s */
    assert_int_equal(job->duration, 500 + 3600);         /* 00:01:40-00:10:00 + 00:12-01:12 */
    assert_int_equal(job->earlier_runs, 500);
    assert_int_equal(job->gpu_num, 2);                   /* 2 x 4100 = 8200 GPU-s */
    assert_int_equal(job->record, 3);                    /* the first record's line */
    assert_string_equal(lucid_strtab_get(imp.vc_names, job->vc), "main");
    assert_string_equal(lucid_strtab_get(imp.strings, job->state), "COMPLETED");
    assert_int_equal(removed(&imp, "requeue_record"), 1);
    lucid_import_free(&imp);
}

/* Records of one id that cannot be one job requeued: one line naming the
 * later record's file, line and field. */
static void sacct_requeue_conflicts(void **state)
{
    (void)state;
    static const struct {
        const char *rows, *msg;
    } cases[] = {
        {"8|ann|a|prof|gres/gpu=1|2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T00:01:00|REQUEUED\n"
         "8|bob|a|main|gres/gpu=1|2024-01-01T00:01:00|2024-01-01T00:02:00|2024-01-01T00:03:00|COMPLETED\n",
         "dup.sacct:3: User: 'bob', but the record of job 8 at line 2 has 'ann' (a requeued job "
         "keeps it)"},
        {"8|ann|a|prof|gres/gpu=1|2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T00:01:00|REQUEUED\n"
         "8|ann|b|main|gres/gpu=1|2024-01-01T00:01:00|2024-01-01T00:02:00|2024-01-01T00:03:00|COMPLETED\n",
         "dup.sacct:3: Account: 'b', but the record of job 8 at line 2 has 'a' (a requeued job "
         "keeps it)"},
        /* the second run starts 00:00:50, while the first (to 00:01:00) runs */
        {"8|ann|a|prof|gres/gpu=1|2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T00:01:00|REQUEUED\n"
         "8|ann|a|main|gres/gpu=1|2024-01-01T00:00:40|2024-01-01T00:00:50|2024-01-01T00:03:00|COMPLETED\n",
         "dup.sacct:3: Start: 2024-01-01 00:00:50, before job 8's run at line 2 ended (one job "
         "cannot run twice at once)"},
        /* a run still going (no End) has a later record */
        {"8|ann|a|prof|gres/gpu=1|2024-01-01T00:00:00|2024-01-01T00:00:10|Unknown|RUNNING\n"
         "8|ann|a|main||2024-01-01T00:01:00|None|2024-01-01T00:03:00|CANCELLED\n",
         "dup.sacct:2: End: none, but job 8 has a later record at line 3 (a run that was "
         "requeued has ended)"},
        /* array task 8_1 and plain job 8000001 share a number, not a job */
        {"8_1|ann|a|main|gres/gpu=1|2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T00:01:00|COMPLETED\n"
         "8000001|ann|a|main|gres/gpu=1|2024-01-01T00:01:00|2024-01-01T00:02:00|2024-01-01T00:03:00|COMPLETED\n",
         "dup.sacct:3: JobID: '8000001', but the record of job 8000001 at line 2 has '8_1' (a "
         "requeued job keeps it)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, "%s%s", SACCT_HEAD, cases[i].rows);
        lucid_import imp;
        lucid_error err;
        assert_int_equal(read_sacct_text(&imp, text, &err), -1);
        assert_string_equal(err.msg, cases[i].msg);
        lucid_import_free(&imp);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sha256_vectors),
        cmocka_unit_test(utc_offsets),
        cmocka_unit_test(quoted_fields_read_back),
        cmocka_unit_test(shared_rules),
        cmocka_unit_test(sacct_requeue_joined),
        cmocka_unit_test(sacct_requeue_conflicts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
