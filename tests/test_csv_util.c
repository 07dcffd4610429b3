/* test_csv_util.c — the CSV reader, number parsing, calendar and interning,
 * and the integers of the result files. */
#include "testutil.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/csv.h"
#include "lucid/manifest.h"
#include "lucid/sched.h"
#include "lucid/sim.h"
#include "lucid/trace.h"
#include "lucid/util.h"
#include "../src/io/numparse.h"

static void csv_reads_quotes_crlf_and_blank_lines(void **state)
{
    (void)state;
    const char *text = "a, b ,c\r\n1,\"x,y\",\"say \"\"hi\"\"\"\r\n\r\n2,,3\n";
    lucid_error err = {{0}};
    lucid_csv *csv = lucid_csv_open_mem("t.csv", text, strlen(text), &err);
    assert_non_null(csv);
    assert_int_equal(lucid_csv_ncols(csv), 3);
    assert_int_equal(lucid_csv_col(csv, "b"), 1);
    assert_int_equal(lucid_csv_col(csv, "zz"), -1);
    assert_int_equal(lucid_csv_next(csv, &err), 1);
    assert_string_equal(lucid_csv_field(csv, 1), "x,y");
    assert_string_equal(lucid_csv_field(csv, 2), "say \"hi\"");
    assert_int_equal(lucid_csv_line(csv), 2);
    assert_int_equal(lucid_csv_next(csv, &err), 1);
    assert_int_equal(lucid_csv_line(csv), 4);
    assert_string_equal(lucid_csv_field(csv, 1), "");
    int64_t v;
    assert_int_equal(lucid_csv_i64(csv, 2, &v, &err), 0);
    assert_int_equal(v, 3);
    assert_int_equal(lucid_csv_i64(csv, 1, &v, &err), -1);
    assert_string_equal(err.msg, "t.csv:4: b: missing value");
    assert_int_equal(lucid_csv_next(csv, &err), 0);
    lucid_csv_close(csv);
}

static void csv_rejects_ragged_rows_and_bad_quotes(void **state)
{
    (void)state;
    lucid_error err = {{0}};
    const char *ragged = "a,b\n1,2\n3\n";
    lucid_csv *csv = lucid_csv_open_mem("r.csv", ragged, strlen(ragged), &err);
    assert_non_null(csv);
    assert_int_equal(lucid_csv_next(csv, &err), 1);
    assert_int_equal(lucid_csv_next(csv, &err), -1);
    assert_string_equal(err.msg, "r.csv:3: expected 2 fields as in the header, found 1");
    lucid_csv_close(csv);
    const char *open_quote = "a\n\"abc\n";
    csv = lucid_csv_open_mem("q.csv", open_quote, strlen(open_quote), &err);
    assert_non_null(csv);
    assert_int_equal(lucid_csv_next(csv, &err), -1);
    assert_string_equal(err.msg, "q.csv:2: unterminated quoted field");
    lucid_csv_close(csv);
    assert_null(lucid_csv_open_mem("e.csv", "", 0, &err));
    assert_string_equal(err.msg, "e.csv:1: empty file: expected a header row");
}

/* A file is read through a 1 MiB window; the reader over the same bytes
 * in memory (one buffer, no window) must see the same rows, fields and
 * lines.  The rows are made so that quotes, doubled quotes, CRLF, blank
 * lines and multi-line quoted fields fall on every byte offset mod 7 and so
 * across window ends, and one quoted field of 1.5 MB makes the window grow. */
static void csv_file_window_matches_memory(void **state)
{
    (void)state;
    size_t cap = (size_t)6 << 20, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    len += (size_t)sprintf(text, "id,a,b\n");
    uint64_t x = 12345;
    for (int row = 0; len < ((size_t)5 << 20) - 4096; row++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        unsigned r = (unsigned)(x >> 33);
        len += (size_t)sprintf(text + len, "%d,", row);
        for (unsigned k = 0; k < r % 7; k++)
            text[len++] = ' ';
        if (r % 5 == 0)
            len += (size_t)sprintf(text + len, "\"q,\"\"%u\"\"\nnext\"", r % 1000);
        else
            len += (size_t)sprintf(text + len, "v%u", r % 100000);
        if (row == 2000) { /* one field longer than the window */
            text[len++] = ',';
            text[len++] = '"';
            memset(text + len, 'z', (size_t)3 << 19);
            len += (size_t)3 << 19;
            text[len++] = '"';
        } else {
            len += (size_t)sprintf(text + len, ",%u", r % 13);
        }
        len += (size_t)sprintf(text + len, "%s", r % 3 == 0 ? "\r\n" : r % 11 == 0 ? "\n\n" : "\n");
    }
    const char *path = "csv_window_test.csv";
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
    lucid_error err = {{0}};
    lucid_csv *a = lucid_csv_open(path, &err), *b = lucid_csv_open_mem(path, text, len, &err);
    assert_non_null(a);
    assert_non_null(b);
    int rows = 0, ga, gb;
    while ((ga = lucid_csv_next(a, &err)) == 1) {
        gb = lucid_csv_next(b, &err);
        assert_int_equal(gb, 1);
        assert_int_equal(lucid_csv_line(a), lucid_csv_line(b));
        for (int c = 0; c < 3; c++)
            assert_string_equal(lucid_csv_field(a, c), lucid_csv_field(b, c));
        rows++;
    }
    assert_int_equal(ga, 0);
    assert_int_equal(lucid_csv_next(b, &err), 0);
    assert_true(rows > 50000);
    lucid_csv_close(a);
    lucid_csv_close(b);
    /* an error past the first window still names its line */
    memcpy(text + len, "1,\"open\n", 8);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len + 8, f), len + 8);
    fclose(f);
    a = lucid_csv_open(path, &err);
    assert_non_null(a);
    while ((ga = lucid_csv_next(a, &err)) == 1)
        ;
    assert_int_equal(ga, -1);
    char want[128];
    snprintf(want, sizeof want, "%s:%ld: unterminated quoted field", path, lucid_csv_line(a));
    assert_string_equal(err.msg, want);
    assert_true(lucid_csv_line(a) > 100000);
    lucid_csv_close(a);
    remove(path);
    free(text);
}

/* The loader notes the submission and id order as it reads: rows out of
 * order are sorted by submit time with ties in file order, the id index
 * finds every job whatever the order, and duplicate ids are refused after
 * the sort (in order, out of order, and a CPU-only row in between). */
static void trace_order_and_id_index(void **state)
{
    (void)state;
    lucid_vcs vcs = {0};
    lucid_vcs_add(&vcs, "a", 2);
    lucid_error err = {{0}};
    lucid_trace t;
    const char *shuffled = "job_id,vc,gpu_num,submit_time,duration\n"
                           "30,a,1,20,5\n"
                           "10,a,1,5,5\n"
                           "99,a,0,7,5\n" /* CPU-only: left out */
                           "5,a,1,20,5\n"
                           "20,a,1,5,5\n";
    assert_int_equal(lucid_trace_load_mem(&t, "s.csv", shuffled, strlen(shuffled), &vcs, &err), 0);
    assert_int_equal(t.njobs, 4);
    const int64_t want[] = {10, 20, 30, 5}; /* by submit time, ties in file order */
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(t.jobs[i].job_id, want[i]);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(lucid_trace_find(&t, want[i]), (int64_t)i);
    assert_int_equal(lucid_trace_find(&t, 99), -1);
    lucid_trace_free(&t);
    const char *sorted = "job_id,vc,gpu_num,submit_time,duration\n1,a,1,0,5\n2,a,1,1,5\n3,a,1,1,5\n";
    assert_int_equal(lucid_trace_load_mem(&t, "o.csv", sorted, strlen(sorted), &vcs, &err), 0);
    assert_int_equal(lucid_trace_find(&t, 3), 2);
    assert_int_equal(lucid_trace_find(&t, 4), -1);
    lucid_trace_free(&t);
    const char *dup = "job_id,vc,gpu_num,submit_time,duration\n7,a,1,9,5\n3,a,1,0,5\n7,a,1,1,5\n";
    assert_int_equal(lucid_trace_load_mem(&t, "d.csv", dup, strlen(dup), &vcs, &err), -1);
    /* the one submitted later is named (line 2, submitted at 9) */
    assert_string_equal(err.msg, "d.csv:2: job_id: duplicate job id 7");
    lucid_vcs_free(&vcs);
}

/* A second reader from the middle of a file (lucid_csv_open_from) starts
 * at the first line start at or after the offset and then sees the rows of
 * one reading from there, lines counted from 1 where it starts. */
static void csv_reader_from_an_offset(void **state)
{
    (void)state;
    char dir[512], path[768];
    test_tmpdir(dir, sizeof dir, "csv_util_from");
    /* line k (2..): "k,<k copies of x mod 50>" */
    char text[16384];
    size_t len = (size_t)sprintf(text, "n,pad\n");
    for (int k = 2; k <= 200; k++)
        len += (size_t)sprintf(text + len, "%d,%.*s\n", k, k % 50, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    test_write_file(path, sizeof path, dir, "from.csv", text);
    lucid_error err = {{0}};
    lucid_csv *whole = lucid_csv_open(path, &err);
    assert_non_null(whole);
    assert_int_equal(lucid_csv_file_size(whole), (int64_t)len);
    size_t from = len / 2;
    lucid_csv *part = lucid_csv_open_from(whole, from);
    assert_non_null(part);
    /* the first line start at or after `from`, found here by hand */
    size_t start = from;
    while (text[start - 1] != '\n')
        start++;
    assert_int_equal(lucid_csv_offset(part), start);
    assert_int_equal(lucid_csv_ncols(part), 2);
    assert_string_equal(lucid_csv_header(part, 1), "pad");
    int first = -1, rows = 0;
    while (lucid_csv_offset(whole) < start && lucid_csv_next(whole, &err) == 1)
        ;
    assert_int_equal(lucid_csv_offset(whole), start);
    long shift = lucid_csv_offset_line(whole) - 1;
    int got;
    while ((got = lucid_csv_next(part, &err)) == 1) {
        assert_int_equal(lucid_csv_next(whole, &err), 1);
        assert_int_equal(lucid_csv_line(part) + shift, lucid_csv_line(whole));
        assert_string_equal(lucid_csv_field(part, 0), lucid_csv_field(whole, 0));
        assert_string_equal(lucid_csv_field(part, 1), lucid_csv_field(whole, 1));
        if (first < 0)
            first = atoi(lucid_csv_field(part, 0));
        rows++;
    }
    assert_int_equal(got, 0);
    assert_int_equal(lucid_csv_next(whole, &err), 0);
    assert_int_equal(rows, 200 - first + 1);
    assert_int_equal(lucid_csv_line(whole), 200);
    lucid_csv_close(part);
    /* at the last byte: no line starts after it */
    assert_null(lucid_csv_open_from(whole, len));
    lucid_csv_close(whole);
    lucid_csv *mem = lucid_csv_open_mem("m.csv", text, len, &err);
    assert_non_null(mem);
    assert_int_equal(lucid_csv_file_size(mem), -1);
    assert_null(lucid_csv_open_from(mem, from));
    lucid_csv_close(mem);
}

/* A trace of over 1 MiB: rows with users, models and datasets that first
 * appear in either half, ids and submit times out of order in places, a
 * CPU-only row; `special` adds one change (below).  Returns its length. */
static size_t halves_trace(char *text, int rows, int special)
{
    size_t len = (size_t)sprintf(text, "job_id,user,vc,jobname,gpu_num,submit_time,duration,model,"
                                       "dataset,speed\n");
    for (int r = 0; r < rows; r++) {
        long id = 1000 + r;
        if (r % 97 == 5)
            id = 1000 + r + 1; /* swapped with the next: ids out of order */
        else if (r % 97 == 6)
            id = 1000 + r - 1;
        if (special == 3 && r == rows * 3 / 4)
            id = 1000 + 10; /* a duplicate of a first-half id */
        long submit = 100L * r + (r % 89 == 3 ? 150 : 0); /* some out of submission order */
        const char *gpus = r == rows * 2 / 3 ? "0" : r % 5 == 0 ? "8" : "1";
        if (special == 1 && r == rows * 4 / 5)
            gpus = "x"; /* bad number in the second half */
        if (special == 2 && (r == rows / 5 || r == rows * 4 / 5))
            gpus = "y"; /* in both halves: the first is reported */
        /* users: u0..u(r/40): new ones keep appearing in both halves */
        len += (size_t)sprintf(text + len, "%ld,u%d,%s,", id, (r * 7919) % (r / 40 + 1),
                               r % 3 ? "a" : "b");
        if (special == 4 && r == rows / 2 - 20) {
            /* a quoted job name of many lines around the middle */
            text[len++] = '"';
            for (int k = 0; k < 4000; k++)
                len += (size_t)sprintf(text + len, "name line %d,\n", k);
            text[len++] = '"';
        } else {
            len += (size_t)sprintf(text + len, "job%d", r);
        }
        len += (size_t)sprintf(text + len, ",%s,%ld,%d,m%d,d%d,%d.25%s", gpus, submit, 10 + r % 50,
                               (r / 3) % (r / 500 + 2), r % 17 + r / 4000, r % 1000,
                               special == 5 ? "\r\n" : "\n");
        if (special == 5 && r % 50 == 7) /* CRLF ends, and a blank line after every 50th row */
            len += (size_t)sprintf(text + len, "\r\n");
    }
    return len;
}

/* A file read in two halves at once (threads = 2) gives the trace of one
 * reading: the same jobs field for field (line numbers of the second half
 * included), the same string ids, the same id index, and the same first
 * error with its line: a bad number in the second half, errors in both
 * halves (the first one), a duplicate id across the halves; and a quoted
 * field of many lines across the middle (where the halves cannot be cut),
 * and CRLF line ends with blank lines. */
static void trace_halves_match_one_reading(void **state)
{
    (void)state;
    char dir[512], path[768];
    test_tmpdir(dir, sizeof dir, "csv_util_halves");
    lucid_vcs vcs = {0};
    lucid_vcs_add(&vcs, "a", 2);
    lucid_vcs_add(&vcs, "b", 2);
    const int rows = 30000;
    char *text = malloc((size_t)4 << 20);
    assert_non_null(text);
    for (int special = 0; special <= 5; special++) {
        size_t len = halves_trace(text, rows, special);
        assert_true(len > ((size_t)1 << 20));
        text[len] = '\0';
        char name[32];
        snprintf(name, sizeof name, "halves%d.csv", special);
        test_write_file(path, sizeof path, dir, name, text);
        lucid_trace one, two;
        lucid_error e1 = {{0}}, e2 = {{0}};
        int r1 = lucid_trace_load_threads(&one, path, &vcs, 1, &e1);
        int r2 = lucid_trace_load_threads(&two, path, &vcs, 2, &e2);
        assert_int_equal(r1, r2);
        assert_string_equal(e1.msg, e2.msg);
        char want[1024];
        if (special == 1 || special == 2) {
            /* line = row + 2 (the header is line 1) */
            int row = special == 1 ? rows * 4 / 5 : rows / 5;
            snprintf(want, sizeof want, "%s:%d: gpu_num: '%s' is not an integer", path, row + 2,
                     special == 1 ? "x" : "y");
            assert_int_equal(r2, -1);
            assert_string_equal(e2.msg, want);
            continue;
        }
        if (special == 3) {
            snprintf(want, sizeof want, "%s:%d: job_id: duplicate job id 1010", path,
                     rows * 3 / 4 + 2);
            assert_int_equal(r2, -1);
            assert_string_equal(e2.msg, want);
            continue;
        }
        assert_int_equal(r2, 0);
        assert_int_equal(one.njobs, (size_t)rows - 1);
        assert_int_equal(two.njobs, one.njobs);
        assert_int_equal(two.skipped_cpu_jobs, 1);
        for (size_t i = 0; i < one.njobs; i++)
            assert_memory_equal(&one.jobs[i], &two.jobs[i], sizeof one.jobs[i]);
        /* the last job's line is known: the last row, after 4000 extra lines with special 4
         * and the blank lines with special 5 */
        int last_line = 0;
        for (size_t i = 0; i < one.njobs; i++)
            last_line = one.jobs[i].line > last_line ? one.jobs[i].line : last_line;
        int blanks = special == 5 ? (rows - 1 - 7 + 49) / 50 : 0; /* rows 7, 57, ... before the last */
        assert_int_equal(last_line, rows + 1 + (special == 4 ? 4000 : 0) + blanks);
        assert_int_equal(lucid_strtab_count(one.strings), lucid_strtab_count(two.strings));
        for (int32_t k = 0; k < lucid_strtab_count(one.strings); k++)
            assert_string_equal(lucid_strtab_get(one.strings, k), lucid_strtab_get(two.strings, k));
        for (size_t i = 0; i < one.njobs; i++) {
            assert_int_equal(one.by_id[i], two.by_id[i]);
            assert_int_equal(lucid_trace_find(&two, one.jobs[i].job_id), (int64_t)i);
        }
        lucid_trace_free(&one);
        lucid_trace_free(&two);
    }
    free(text);
    lucid_vcs_free(&vcs);
}

/* The pair and sharing tables' indexes give what a scan of the rows gives:
 * the first row in file order (duplicates differ in speed here), a pair
 * measured only the other way round with its speeds swapped, and -1 / 0
 * for what is not there.  Every pair of keys drawn from the tables' keys
 * and one unknown key is asked of the loaded tables and of copies without
 * an index (which scan). */
static void pair_and_sharing_indexes_match_the_scan(void **state)
{
    (void)state;
    char dir[512], path[768];
    test_tmpdir(dir, sizeof dir, "csv_util_pairs");
    lucid_vcs vcs = {0};
    lucid_vcs_add(&vcs, "a", 2);
    lucid_error err = {{0}};
    lucid_trace t;
    const char *trace = "job_id,vc,gpu_num,submit_time,duration\n1,a,1,0,5\n";
    assert_int_equal(lucid_trace_load_mem(&t, "t.csv", trace, strlen(trace), &vcs, &err), 0);
    test_write_file(path, sizeof path, dir, "pairs.csv",
                    "model1,dataset1,batchsize1,amp1,speed1,model2,dataset2,batchsize2,amp2,speed2,"
                    "gpu_util,gmem\n"
                    "B,D,32,0,7,A,D,32,0,8,50,100\n"  /* (B, A) */
                    "A,D,32,0,1,B,D,32,0,2,50,100\n"  /* (A, B): the first of two */
                    "A,D,32,0,3,B,D,32,0,4,50,100\n"  /* (A, B) again */
                    "C,D,32,0,5,A,D,32,0,6,50,100\n"  /* (C, A) only */
                    "A,D,64,1,9,A,D,32,0,10,50,100\n" /* batch size and amp in the key */
                    "A,E,32,0,11,A,D,32,0,12,50,100\n");
    lucid_pairs pairs;
    assert_int_equal(lucid_pairs_load(&pairs, &t, path, &err), 0);
    assert_non_null(pairs.index);
    int32_t A = lucid_strtab_find(t.strings, "A"), B = lucid_strtab_find(t.strings, "B"),
            C = lucid_strtab_find(t.strings, "C"), D = lucid_strtab_find(t.strings, "D");
    lucid_workload_key ka = {A, D, 32, 0}, kb = {B, D, 32, 0}, kc = {C, D, 32, 0};
    double sa = 0, sb = 0;
    assert_int_equal(lucid_pairs_speed(&pairs, &ka, &kb, &sa, &sb), 1);
    assert_true(sa == 1 && sb == 2); /* the first (A, B) row, not the second */
    assert_int_equal(lucid_pairs_speed(&pairs, &kb, &ka, &sa, &sb), 1);
    assert_true(sa == 7 && sb == 8); /* (B, A) measured as such */
    assert_int_equal(lucid_pairs_speed(&pairs, &ka, &kc, &sa, &sb), 1);
    assert_true(sa == 6 && sb == 5); /* only (C, A): swapped */
    sa = sb = -1;
    assert_int_equal(lucid_pairs_speed(&pairs, &kb, &kc, &sa, &sb), 0);
    assert_true(sa == -1 && sb == -1); /* left unchanged */
    test_write_file(path, sizeof path, dir, "sharing.csv",
                    "model,dataset,batchsize,amp,speed,gpu_util,gmem_util,gmem,label\n"
                    "C,D,32,0,1,50,50,100,2\n"
                    "A,D,32,0,1,50,50,100,1\n"
                    "A,D,32,0,1,50,50,100,0\n" /* the same key again: row 1 answers */
                    "A,D,64,1,1,50,50,100,2\n");
    lucid_sharing sharing;
    assert_int_equal(lucid_sharing_load(&sharing, &t, path, &err), 0);
    assert_non_null(sharing.index);
    assert_int_equal(lucid_sharing_find(&sharing, &ka), 1);
    assert_int_equal(lucid_sharing_find(&sharing, &kc), 0);
    assert_int_equal(lucid_sharing_find(&sharing, &kb), -1);
    /* Everything against the scan. */
    lucid_workload_key keys[16];
    size_t nkeys = 0;
    for (size_t i = 0; i < pairs.count; i++) {
        keys[nkeys++] = pairs.rows[i].a;
        keys[nkeys++] = pairs.rows[i].b;
    }
    keys[nkeys++] = (lucid_workload_key){A, D, 32, 1};
    lucid_pairs scan_pairs = {pairs.rows, pairs.count, NULL};
    lucid_sharing scan_sharing = {sharing.rows, sharing.count, NULL};
    for (size_t i = 0; i < nkeys; i++) {
        assert_int_equal(lucid_sharing_find(&sharing, &keys[i]),
                         lucid_sharing_find(&scan_sharing, &keys[i]));
        for (size_t j = 0; j < nkeys; j++) {
            double a1 = -1, b1 = -1, a2 = -1, b2 = -1;
            assert_int_equal(lucid_pairs_speed(&pairs, &keys[i], &keys[j], &a1, &b1),
                             lucid_pairs_speed(&scan_pairs, &keys[i], &keys[j], &a2, &b2));
            assert_true(a1 == a2 && b1 == b2);
        }
    }
    lucid_pairs_free(&pairs);
    lucid_sharing_free(&sharing);
    lucid_trace_free(&t);
    lucid_vcs_free(&vcs);
}

static void numbers_parse_strictly(void **state)
{
    (void)state;
    int64_t i;
    double d;
    assert_int_equal(lucid_parse_i64("42", &i), 0);
    assert_int_equal(i, 42);
    assert_int_equal(lucid_parse_i64("8.0", &i), 0);
    assert_int_equal(i, 8);
    assert_int_equal(lucid_parse_i64("8.5", &i), -1);
    assert_int_equal(lucid_parse_i64("12x", &i), -1);
    assert_int_equal(lucid_parse_i64("", &i), -1);
    assert_int_equal(lucid_parse_f64("1e3", &d), 0);
    assert_true(d == 1000.0);
    assert_int_equal(lucid_parse_f64("nan", &d), -1);
    assert_int_equal(lucid_parse_f64("inf", &d), -1);
}

/* Hexadecimal is refused; a BOM is not part of the first column's name;
 * the fast decimal path gives strtod's value bit for bit; the fast integer
 * path agrees with strtoll up to the 18-digit limit and beyond. */
static void numbers_are_decimal_and_exact(void **state)
{
    (void)state;
    int64_t i;
    double d;
    assert_int_equal(lucid_parse_i64("0x10", &i), -1);
    assert_int_equal(lucid_parse_f64("0x10", &d), -1);
    assert_int_equal(lucid_parse_f64("0x1p3", &d), -1);
    assert_int_equal(lucid_parse_f64("infinity", &d), -1);
    assert_int_equal(lucid_parse_i64("-", &i), -1);
    assert_int_equal(lucid_parse_i64("-0", &i), 0);
    assert_int_equal(i, 0);
    assert_int_equal(lucid_parse_i64("+17", &i), 0);
    assert_int_equal(i, 17);
    assert_int_equal(lucid_parse_i64("999999999999999999", &i), 0); /* 18 digits */
    assert_true(i == 999999999999999999LL);
    assert_int_equal(lucid_parse_i64("9223372036854775807", &i), 0); /* 19: strtoll */
    assert_true(i == INT64_MAX);
    assert_int_equal(lucid_parse_i64("-9223372036854775808", &i), 0);
    assert_true(i == INT64_MIN);
    assert_int_equal(lucid_parse_i64("9223372036854775808", &i), -1);
    assert_int_equal(lucid_parse_i64("9e18", &i), 0);
    assert_true(i == 9000000000000000000LL);
    assert_int_equal(lucid_parse_i64("1e19", &i), -1);
    lucid_rng rng;
    lucid_rng_seed(&rng, 5);
    for (int k = 0; k < 200000; k++) {
        char text[64];
        uint64_t mant = lucid_rng_next(&rng) >> (lucid_rng_next(&rng) % 64);
        int frac = (int)(lucid_rng_next(&rng) % 25);
        int n = snprintf(text, sizeof text, "%s%llu", k % 3 == 0 ? "-" : "",
                         (unsigned long long)mant);
        int digits = n - (k % 3 == 0);
        if (frac > 0 && frac < digits) { /* put a point frac digits from the end */
            memmove(text + n - frac + 1, text + n - frac, (size_t)frac + 1);
            text[n - frac] = '.';
        }
        assert_int_equal(lucid_parse_f64(text, &d), 0);
        double want = strtod(text, NULL);
        if (memcmp(&d, &want, sizeof d) != 0)
            fail_msg("%s: got %.17g, strtod %.17g", text, d, want);
    }
    const char *bom = "\xEF\xBB\xBFjob_id,x\n1,2\n";
    lucid_error err = {{0}};
    lucid_csv *csv = lucid_csv_open_mem("b.csv", bom, strlen(bom), &err);
    assert_non_null(csv);
    assert_int_equal(lucid_csv_col(csv, "job_id"), 0);
    lucid_csv_close(csv);
}

/* The word-at-a-time parsers (numparse.h) against strtoll / strtod on every
 * kind of short text: random bytes from digits, '.', signs, letters and
 * blanks, 1-8 of them followed by random bytes the parser must ignore.  A
 * text of only digits (and for decimals one point and a digit) must be
 * taken, with strtod's value bit for bit; anything else declined.  Where
 * they do not exist (LUCID_SWAR 0: not little-endian) they decline all. */
static void word_parsers_match_strtod(void **state)
{
    (void)state;
    static const char alphabet[] = "0123456789012345678901234567890123456789..-+e x,";
    lucid_rng rng;
    lucid_rng_seed(&rng, 14);
    int taken_i = 0, taken_f = 0;
    for (int k = 0; k < 400000; k++) {
        char buf[16];
        size_t n = 1 + lucid_rng_next(&rng) % 8;
        for (size_t j = 0; j < sizeof buf; j++)
            buf[j] = alphabet[lucid_rng_next(&rng) % (sizeof alphabet - 1)];
        char text[9];
        memcpy(text, buf, n);
        text[n] = '\0';
        size_t digits = 0, dots = 0;
        for (size_t j = 0; j < n; j++) {
            digits += text[j] >= '0' && text[j] <= '9';
            dots += text[j] == '.';
        }
        int64_t i;
        int took = lucid_swar_i64(buf, n, &i);
        if (took != (LUCID_SWAR && digits == n))
            fail_msg("'%s': integer taken %d", text, took);
        if (took) {
            taken_i++;
            assert_true(i == strtoll(text, NULL, 10));
        }
        double d;
        took = lucid_swar_f64(buf, n, &d);
        int plain = LUCID_SWAR && digits >= 1 && digits + dots == n && dots <= 1;
        if (took != plain)
            fail_msg("'%s': decimal taken %d", text, took);
        if (took) {
            taken_f++;
            double want = strtod(text, NULL);
            if (memcmp(&d, &want, sizeof d) != 0)
                fail_msg("'%s': got %.17g, strtod %.17g", text, d, want);
        }
    }
    assert_true(!LUCID_SWAR || (taken_i > 1000 && taken_f > 1000)); /* both were exercised */
    if (!LUCID_SWAR)
        return;
    int64_t i;
    double d;
    assert_int_equal(lucid_swar_i64("99999999", 8, &i), 1);
    assert_true(i == 99999999);
    assert_int_equal(lucid_swar_i64("123456789", 9, &i), 0); /* 9 bytes: the loop's */
    assert_int_equal(lucid_swar_f64("1.000005", 8, &d), 1);
    assert_true(d == 1.000005);
    assert_int_equal(lucid_swar_f64("5.xxxxxx", 2, &d), 1);
    assert_true(d == 5.0);
    assert_int_equal(lucid_swar_f64(".25xxxxx", 3, &d), 1);
    assert_true(d == 0.25);
    assert_int_equal(lucid_swar_f64(".xxxxxxx", 1, &d), 0);
}

static void calendar_matches_known_dates(void **state)
{
    (void)state;
    int64_t t;
    assert_int_equal(lucid_time_parse("1970-01-01 00:00:00", &t), 0);
    assert_int_equal(t, 0);
    /* 2020-04-01 00:02:31 UTC = 1585699351 (date -u -d ... +%s). */
    assert_int_equal(lucid_time_parse("2020-04-01 00:02:31", &t), 0);
    assert_int_equal(t, 1585699351);
    assert_int_equal(lucid_time_parse("2020-02-30 00:00:00", &t), -1);
    assert_int_equal(lucid_time_parse("2020-09-01 24:00:00", &t), -1);
    lucid_tm tm;
    /* 2020-09-01 was a Tuesday (dayofweek 1), day 245 of a leap year, ISO week 36. */
    assert_int_equal(lucid_time_parse("2020-09-01 13:45:07", &t), 0);
    lucid_time_split(t, &tm);
    assert_int_equal(tm.dayofweek, 1);
    assert_int_equal(tm.dayofyear, 245);
    assert_int_equal(tm.isoweek, 36);
    assert_int_equal(tm.hour, 13);
    assert_int_equal(tm.minute, 45);
    /* 2021-01-01 (Friday) belongs to ISO week 53 of 2020. */
    assert_int_equal(lucid_time_parse("2021-01-01", &t), 0);
    lucid_time_split(t, &tm);
    assert_int_equal(tm.isoweek, 53);
    assert_int_equal(tm.dayofweek, 4);
    char buf[32];
    lucid_time_format(1585699351, buf, sizeof buf);
    assert_string_equal(buf, "2020-04-01 00:02:31");
}

/* Names from Slurm are cut to our fields on character boundaries and any
 * byte that is not UTF-8 becomes '?', so JSON replies never fail. */
static void utf8_copy_cuts_on_character_boundaries(void **state)
{
    (void)state;
    char out[8];
    /* "aé€😀": 1 + 2 + 3 + 4 bytes; 7 bytes of room keep "aé€" (6). */
    assert_int_equal(lucid_utf8_copy(out, sizeof out, "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"), 6);
    assert_string_equal(out, "a\xC3\xA9\xE2\x82\xAC");
    /* Room for 1 + 2 bytes then a 3-byte character: cut before it. */
    char four[5];
    assert_int_equal(lucid_utf8_copy(four, sizeof four, "a\xC3\xA9\xE2\x82\xAC"), 3);
    assert_string_equal(four, "a\xC3\xA9");
    /* A name already cut mid-character by Slurm, an overlong, a surrogate,
     * a stray continuation byte and a byte above U+10FFFF. */
    assert_int_equal(lucid_utf8_copy(out, sizeof out, "ab\xE2\x82"), 4);
    assert_string_equal(out, "ab??");
    assert_int_equal(lucid_utf8_copy(out, sizeof out, "\xC0\xAF\xED\xA0\x80"), 5);
    assert_string_equal(out, "?????");
    assert_int_equal(lucid_utf8_copy(out, sizeof out, "\x80x\xF4\x90\x80\x80"), 6);
    assert_string_equal(out, "?x????");
    assert_int_equal(lucid_utf8_copy(out, sizeof out, NULL), 0);
    assert_string_equal(out, "");
    assert_int_equal(lucid_utf8_copy(out, 1, "abc"), 0);
    assert_string_equal(out, "");
}

static void interning_and_rng(void **state)
{
    (void)state;
    lucid_strtab *tab = lucid_strtab_new();
    char name[32];
    for (int k = 0; k < 1000; k++) {
        snprintf(name, sizeof name, "vc%d", k);
        assert_int_equal(lucid_strtab_intern(tab, name), k);
    }
    assert_int_equal(lucid_strtab_intern(tab, "vc7"), 7);
    assert_int_equal(lucid_strtab_find(tab, "nope"), -1);
    assert_string_equal(lucid_strtab_get(tab, 999), "vc999");
    lucid_strtab_free(tab);
    /* Hashing and comparing go by overlapping words: strings of every
     * length 1-40 that differ in one byte anywhere, or only in length, are
     * all distinct, and each finds itself (n * (n + 1) / 2 + 40 names). */
    tab = lucid_strtab_new();
    int32_t count = 0;
    char text[41];
    for (size_t n = 1; n <= 40; n++) {
        memset(text, 'a', n);
        assert_int_equal(lucid_strtab_intern_n(tab, text, n), count++); /* "a" x n */
        for (size_t at = 0; at < n; at++) {
            text[at] = 'b';
            assert_int_equal(lucid_strtab_intern_n(tab, text, n), count++);
            text[at] = 'a';
        }
    }
    for (size_t n = 1, id = 0; n <= 40; n++) {
        memset(text, 'a', n);
        assert_int_equal(lucid_strtab_find_n(tab, text, n), (int32_t)id++);
        for (size_t at = 0; at < n; at++, id++) {
            text[at] = 'b';
            assert_int_equal(lucid_strtab_find_n(tab, text, n), (int32_t)id);
            assert_true(lucid_bytes_equal(lucid_strtab_get(tab, (int32_t)id), text, n));
            text[at] = 'a';
            assert_false(lucid_bytes_equal(lucid_strtab_get(tab, (int32_t)id), text, n));
        }
    }
    assert_int_equal(lucid_strtab_count(tab), 40 * 41 / 2 + 40);
    lucid_strtab_free(tab);
    lucid_rng a, b;
    lucid_rng_seed(&a, 7);
    lucid_rng_seed(&b, 7);
    for (int k = 0; k < 100; k++) {
        uint64_t x = lucid_rng_below(&a, 10);
        assert_true(x < 10);
        assert_int_equal(x, lucid_rng_below(&b, 10));
    }
}

/* The result files' integers (report.c formats them itself, 8 digits at a
 * time) read as printf's "%lld" would write them: every digit count, the
 * powers of ten and their neighbours, zero, negatives, the int64 ends. */
static void result_integers_match_printf(void **state)
{
    (void)state;
    int64_t values[64];
    size_t nv = 0;
    values[nv++] = 0;
    for (int64_t p = 1; p <= INT64_MAX / 10; p *= 10) {
        values[nv++] = p - 1;
        values[nv++] = p;
        values[nv++] = 3 * p + 7;
    }
    values[nv++] = -1;
    values[nv++] = -99999999;
    values[nv++] = -100000000;
    values[nv++] = INT64_MAX;
    /* The least whose delay column (end - 0 - 5) is still an int64_t: the
     * delay then prints INT64_MIN + 1. */
    values[nv++] = INT64_MIN + 6;
    assert_true(nv <= sizeof values / sizeof values[0]);
    lucid_job *jobs = calloc(nv, sizeof *jobs);
    lucid_jobresult *run = calloc(nv, sizeof *run);
    unsigned char *excluded = calloc(nv, 1);
    assert_non_null(jobs);
    assert_non_null(run);
    assert_non_null(excluded);
    lucid_vcs vcs = {lucid_strtab_new(), NULL, 1};
    assert_non_null(vcs.names);
    assert_int_equal(lucid_strtab_intern(vcs.names, "vc"), 0);
    for (size_t i = 0; i < nv; i++) { /* each value once in the id, start and end columns */
        jobs[i] = (lucid_job){.job_id = values[i], .submit_time = 0, .duration = 5, .gpu_num = 8};
        run[i] = (lucid_jobresult){.start_time = values[(i + 1) % nv],
                                   .end_time = values[(i + 2) % nv],
                                   .packed_with = -1,
                                   .packed_onto = -1};
    }
    lucid_trace trace = {.jobs = jobs, .njobs = nv};
    lucid_sim_result result = {.policy = lucid_policy_find("fifo"), .run = run, .excluded = excluded};
    assert_non_null(result.policy);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    assert_int_equal(lucid_write_jobs(out, &trace, &vcs, &result), 0);
    assert_int_equal(fclose(out), 0);
    size_t cap = 128 * nv + 256, at = 0;
    char *want = malloc(cap);
    assert_non_null(want);
    at += (size_t)snprintf(want + at, cap - at,
                           "job_id,vc,gpu_num,submit_time,duration,start_time,end_time,queue,jct,"
                           "delay,profiled,finished_in_profiler,profiler_s,packed_with\n");
    for (size_t i = 0; i < nv; i++)
        at += (size_t)snprintf(want + at, cap - at, "%" PRId64 ",vc,8,0,5,%" PRId64 ",%" PRId64
                               ",0,%" PRId64 ",%" PRId64 ",,,,\n",
                               values[i], values[(i + 1) % nv], values[(i + 2) % nv],
                               values[(i + 2) % nv], values[(i + 2) % nv] - 5);
    assert_string_equal(text, want);
    free(want);
    free(text);
    lucid_strtab_free(vcs.names);
    free(jobs);
    free(run);
    free(excluded);
}

/* The result files' strings (report.c copies them from tables made once
 * per file): VC names as they are, the trace's users, states and GPU types
 * quoted as lucid_csv_write_field quotes them, every length around the
 * 16-byte blocks it copies, absent ones empty; 5,000 rows so that rows
 * cross the writer's 64 KiB buffer.  The expected text is written here
 * with fprintf and lucid_csv_write_field. */
static void result_strings_match_the_field_writer(void **state)
{
    (void)state;
    const char *words[] = {"", "a", "fifteen-chars-x", "sixteen-chars-xy", "seventeen-chars-x",
                           "a much longer user name of forty bytes..", "com,ma", "say \"hi\"",
                           "two\nlines", "cr\rhere", "\"", ","};
    size_t nw = sizeof words / sizeof words[0];
    const char *vc_names[] = {"v", "vc,with,commas", "a-vc-name-longer-than-16", "sixteen-chars-vc"};
    lucid_vcs vcs = {0};
    for (size_t v = 0; v < 4; v++)
        assert_true(lucid_vcs_add(&vcs, vc_names[v], 1) == (int32_t)v);
    lucid_trace trace = {.has_user = 1, .has_state = 1, .has_time_limit = 1, .has_gpu_type = 1};
    trace.strings = lucid_strtab_new();
    assert_non_null(trace.strings);
    int32_t id[16];
    for (size_t w = 1; w < nw; w++) /* "" is no string: id -1 (absent) */
        id[w] = lucid_strtab_intern(trace.strings, words[w]);
    id[0] = -1;
    size_t n = 5000;
    trace.jobs = calloc(n, sizeof *trace.jobs);
    lucid_jobresult *run = calloc(n, sizeof *run);
    unsigned char *excluded = calloc(n, 1);
    assert_non_null(trace.jobs);
    assert_non_null(run);
    assert_non_null(excluded);
    trace.njobs = n;
    for (size_t i = 0; i < n; i++) {
        trace.jobs[i] = (lucid_job){.job_id = (int64_t)i + 1, .vc = (int32_t)(i % 4), .gpu_num = 1,
                                    .submit_time = (int64_t)i, .duration = 7,
                                    .user = id[i % nw], .state = id[(i / 3) % nw],
                                    .gpu_type = id[(i / 7) % nw],
                                    .time_limit = i % 5 ? (int64_t)i * 10 : -1};
        run[i] = (lucid_jobresult){.start_time = (int64_t)i + 2, .end_time = (int64_t)i + 9,
                                   .packed_with = -1, .packed_onto = -1};
    }
    lucid_sim_result result = {.policy = lucid_policy_find("fifo"), .run = run, .excluded = excluded};
    char *text = NULL, *want = NULL;
    size_t len = 0, wlen = 0;
    FILE *out = open_memstream(&text, &len), *exp = open_memstream(&want, &wlen);
    assert_non_null(out);
    assert_non_null(exp);
    assert_int_equal(lucid_write_jobs(out, &trace, &vcs, &result), 0);
    assert_int_equal(fclose(out), 0);
    fputs("job_id,vc,gpu_num,submit_time,duration,start_time,end_time,queue,jct,delay,profiled,"
          "finished_in_profiler,profiler_s,packed_with,user,state,time_limit,gpu_type\n", exp);
    for (size_t i = 0; i < n; i++) {
        const lucid_job *j = &trace.jobs[i];
        fprintf(exp, "%zu,%s,1,%zu,7,%zu,%zu,0,9,2,,,,,", i + 1, vc_names[i % 4], i, i + 2, i + 9);
        lucid_csv_write_field(exp, words[i % nw]);
        fputc(',', exp);
        lucid_csv_write_field(exp, words[(i / 3) % nw]);
        fputc(',', exp);
        if (j->time_limit >= 0)
            fprintf(exp, "%lld", (long long)j->time_limit);
        fputc(',', exp);
        lucid_csv_write_field(exp, words[(i / 7) % nw]);
        fputc('\n', exp);
    }
    assert_int_equal(fclose(exp), 0);
    assert_true(len > 65536);
    assert_int_equal(len, wlen);
    assert_string_equal(text, want);
    /* The hashing writer writes the same bytes and gives their XXH64 (the
     * header's carried names and every flush of the buffer included), with
     * the rows' starts formatted per row or taken from lucid_row_prefix;
     * the streaming hash fed in uneven pieces gives the same. */
    lucid_row_prefix *prefix = lucid_row_prefix_make(&trace, &vcs);
    assert_non_null(prefix);
    uint64_t h = 0;
    for (int with = 0; with < 2; with++) { /* row starts formatted per row, then from the table */
        char *again = NULL;
        size_t alen = 0;
        uint64_t hw = 0;
        out = open_memstream(&again, &alen);
        assert_non_null(out);
        assert_int_equal(
            lucid_write_jobs_hashed(out, &trace, &vcs, &result, with ? prefix : NULL, &hw), 0);
        assert_int_equal(fclose(out), 0);
        assert_int_equal(alen, len);
        assert_memory_equal(again, text, len);
        assert_true(hw == lucid_xxh64(text, len));
        h = hw;
        free(again);
    }
    lucid_row_prefix_free(prefix);
    lucid_xxh64_state st;
    lucid_xxh64_init(&st);
    for (size_t at = 0, piece = 1; at < len; at += piece, piece = piece * 7 % 97 + 1)
        lucid_xxh64_update(&st, text + at, at + piece <= len ? piece : len - at);
    assert_true(lucid_xxh64_digest(&st) == h);
    free(text);
    free(want);
    lucid_strtab_free(trace.strings);
    lucid_vcs_free(&vcs);
    free(trace.jobs);
    free(run);
    free(excluded);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(csv_reads_quotes_crlf_and_blank_lines),
        cmocka_unit_test(csv_rejects_ragged_rows_and_bad_quotes),
        cmocka_unit_test(csv_file_window_matches_memory),
        cmocka_unit_test(trace_order_and_id_index),
        cmocka_unit_test(csv_reader_from_an_offset),
        cmocka_unit_test(trace_halves_match_one_reading),
        cmocka_unit_test(pair_and_sharing_indexes_match_the_scan),
        cmocka_unit_test(numbers_parse_strictly),
        cmocka_unit_test(numbers_are_decimal_and_exact),
        cmocka_unit_test(word_parsers_match_strtod),
        cmocka_unit_test(calendar_matches_known_dates),
        cmocka_unit_test(interning_and_rng),
        cmocka_unit_test(utf8_copy_cuts_on_character_boundaries),
        cmocka_unit_test(result_integers_match_printf),
        cmocka_unit_test(result_strings_match_the_field_writer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
