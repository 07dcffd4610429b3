/* test_atomic.c — outputs written whole or not at all, the same-file check
 * (paths, "./", hard links, symlinks), the MANIFEST round trip and its
 * refusal of unlisted or changed files, and the experiment-file rules that
 * keep inputs from giving silently wrong runs (inline comments, decimal
 * numbers only, duplicate policies, directories). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lucid/atomic.h"
#include "lucid/experiment.h"
#include "lucid/manifest.h"
#include "testutil.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static int count_entries(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p) {
        if (fscanf(p, "%d", &n) != 1)
            n = -1;
        pclose(p);
    }
    return n;
}

static void commit_replaces_abort_keeps(void **state)
{
    (void)state;
    char dir[4096], path[4200];
    test_tmpdir(dir, sizeof dir, "atomic_commit");
    test_write_file(path, sizeof path, dir, "out.txt", "old\n");
    lucid_error err = {{0}};
    lucid_outfile o;
    FILE *f = lucid_outfile_open(&o, path, &err);
    assert_non_null(f);
    fputs("half written", f);
    /* Until the commit, the destination is the previous file. */
    assert_string_equal(slurp(path), "old\n");
    assert_int_equal(count_entries(dir), 2);
    lucid_outfile_abort(&o);
    assert_string_equal(slurp(path), "old\n");
    assert_int_equal(count_entries(dir), 1); /* no temporary file left */

    f = lucid_outfile_open(&o, path, &err);
    assert_non_null(f);
    fputs("new\n", f);
    assert_int_equal(lucid_outfile_commit(&o, &err), 0);
    assert_string_equal(slurp(path), "new\n");
    assert_int_equal(count_entries(dir), 1);

    assert_int_equal(lucid_write_file_atomic(path, "third\n", 6, &err), 0);
    assert_string_equal(slurp(path), "third\n");
    /* A folder that does not exist: an error naming the destination. */
    char missing[4300];
    snprintf(missing, sizeof missing, "%s/nope/out.txt", dir);
    assert_null(lucid_outfile_open(&o, missing, &err));
    assert_non_null(strstr(err.msg, "nope/out.txt: cannot write"));
}

/* The swap commit: the previous file survives under the returned hidden
 * name until the caller deletes it; with nothing there, or something that
 * is not a regular file, it is a plain rename (a folder in the way is
 * refused and stays; a symlink is replaced, its target untouched). */
static void commit_swap_hands_back_the_old_file(void **state)
{
    (void)state;
    char dir[4096], path[4200], target[4200], link_path[4300], sub[4300];
    test_tmpdir(dir, sizeof dir, "atomic_swap");
    test_write_file(path, sizeof path, dir, "out.txt", "old\n");
    lucid_error err = {{0}};
    lucid_outfile o;
    char *old = (char *)1;
    assert_non_null(lucid_outfile_open(&o, path, &err));
    fputs("new\n", o.f);
    assert_int_equal(lucid_outfile_commit_swap(&o, &old, &err), 0);
    assert_string_equal(slurp(path), "new\n");
    assert_non_null(old);
    assert_non_null(strstr(old, "/.out.txt."));
    assert_string_equal(slurp(old), "old\n");
    assert_int_equal(count_entries(dir), 2);
    assert_int_equal(unlink(old), 0);
    free(old);
    assert_int_equal(count_entries(dir), 1);

    /* Nothing there before. */
    char fresh[4300];
    snprintf(fresh, sizeof fresh, "%s/fresh.txt", dir);
    assert_non_null(lucid_outfile_open(&o, fresh, &err));
    fputs("first\n", o.f);
    assert_int_equal(lucid_outfile_commit_swap(&o, &old, &err), 0);
    assert_null(old);
    assert_string_equal(slurp(fresh), "first\n");
    assert_int_equal(count_entries(dir), 2);

    /* A symlink: replaced itself, as rename does; its target keeps its bytes. */
    test_write_file(target, sizeof target, dir, "target.txt", "kept\n");
    snprintf(link_path, sizeof link_path, "%s/link.txt", dir);
    assert_int_equal(symlink(target, link_path), 0);
    assert_non_null(lucid_outfile_open(&o, link_path, &err));
    fputs("via link\n", o.f);
    assert_int_equal(lucid_outfile_commit_swap(&o, &old, &err), 0);
    assert_null(old);
    assert_string_equal(slurp(target), "kept\n");
    assert_string_equal(slurp(link_path), "via link\n");
    assert_false(lucid_same_file(link_path, target));

    /* A folder in the way: refused, the folder stays, no temporary left. */
    snprintf(sub, sizeof sub, "%s/sub", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    int before = count_entries(dir);
    assert_non_null(lucid_outfile_open(&o, sub, &err));
    fputs("x\n", o.f);
    assert_int_equal(lucid_outfile_commit_swap(&o, &old, &err), -1);
    assert_null(old);
    assert_non_null(strstr(err.msg, "sub: cannot replace"));
    struct stat st;
    assert_int_equal(stat(sub, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(count_entries(dir), before);
}

static void same_file_by_inode(void **state)
{
    (void)state;
    char dir[4096], a[4200], b[4200], link_hard[4300], link_soft[4300], dotted[4300];
    test_tmpdir(dir, sizeof dir, "atomic_same");
    test_write_file(a, sizeof a, dir, "a.csv", "x\n");
    test_write_file(b, sizeof b, dir, "b.csv", "x\n"); /* same bytes, another file */
    snprintf(link_hard, sizeof link_hard, "%s/hard.csv", dir);
    snprintf(link_soft, sizeof link_soft, "%s/soft.csv", dir);
    snprintf(dotted, sizeof dotted, "%s/./a.csv", dir);
    assert_int_equal(link(a, link_hard), 0);
    assert_int_equal(symlink(a, link_soft), 0);
    assert_true(lucid_same_file(a, dotted));
    assert_true(lucid_same_file(a, link_hard));
    assert_true(lucid_same_file(link_soft, a));
    assert_false(lucid_same_file(a, b));
    char missing[4300];
    snprintf(missing, sizeof missing, "%s/missing.csv", dir);
    assert_false(lucid_same_file(a, missing));

    const char *inputs[] = {NULL, b, a};
    const char *what[] = {"experiment", "vcs", "jobs"};
    lucid_error err = {{0}};
    assert_int_equal(lucid_check_not_input(missing, inputs, 3, what, &err), 0);
    assert_int_equal(lucid_check_not_input(link_hard, inputs, 3, what, &err), -1);
    char want[9000];
    snprintf(want, sizeof want, "%s: is the input jobs (%s); choose another output", link_hard, a);
    assert_string_equal(err.msg, want);
    assert_int_equal(lucid_check_not_input(link_soft, inputs, 3, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "is one of the inputs"));
}

static void manifest_round_trip_and_checks(void **state)
{
    (void)state;
    /* FNV-1a 64 test vectors: "" is the offset basis, "a" is af63dc4c8601ec8c. */
    assert_true(lucid_hash_bytes(LUCID_FNV_OFFSET, "", 0) == 0xcbf29ce484222325ull);
    assert_true(lucid_hash_bytes(LUCID_FNV_OFFSET, "a", 1) == 0xaf63dc4c8601ec8cull);
    /* XXH64 (seed 0), values from the reference tool (`xxhsum -H1`, xxHash
     * 0.8.1): below one 32-byte stripe, stripes plus an 8-, 4- and 1-byte
     * tail (49 bytes), and whole stripes plus a 4-byte tail (100 zeros). */
    assert_true(lucid_xxh64("", 0) == 0xef46db3751d8e999ull);
    assert_true(lucid_xxh64("a", 1) == 0xd24ec4f1a98c6e5bull);
    assert_true(lucid_xxh64("abc", 3) == 0x44bc2cf5ad770999ull);
    const char *mixed = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLM";
    assert_true(lucid_xxh64(mixed, strlen(mixed)) == 0x4d1cd1115a97d7caull);
    static const unsigned char zeros[100];
    assert_true(lucid_xxh64(zeros, sizeof zeros) == 0x17bb1103c92c502full);

    char dir[4096], path[4200];
    test_tmpdir(dir, sizeof dir, "atomic_manifest");
    test_write_file(path, sizeof path, dir, "jobs-fifo.csv", "a");
    lucid_error err = {{0}};
    lucid_manifest m = {0};
    assert_int_equal(lucid_manifest_load(&m, dir, &err), 1); /* none yet */
    assert_int_equal(lucid_manifest_add(&m, &err, "semantics", "%s", "reference"), 0);
    assert_int_equal(lucid_manifest_add(&m, &err, "note", "two\nlines"), 0);
    assert_int_equal(lucid_manifest_add_hash(&m, "file", path, "jobs-fifo.csv", &err), 0);
    assert_int_equal(lucid_manifest_save(&m, dir, &err), 0);
    lucid_manifest_free(&m);

    assert_int_equal(lucid_manifest_load(&m, dir, &err), 0);
    assert_string_equal(lucid_manifest_get(&m, "semantics"), "reference");
    assert_string_equal(lucid_manifest_get(&m, "note"), "two lines");
    assert_string_equal(lucid_manifest_get(&m, "file"), "jobs-fifo.csv xxh64:d24ec4f1a98c6e5b");
    assert_int_equal(lucid_manifest_check_file(&m, dir, "jobs-fifo.csv", &err), 0);
    /* Another run's file and an edited one are refused. */
    test_write_file(path, sizeof path, dir, "jobs-sjf.csv", "a");
    assert_int_equal(lucid_manifest_check_file(&m, dir, "jobs-sjf.csv", &err), -1);
    assert_non_null(strstr(err.msg, "jobs-sjf.csv: not written by the run recorded in"));
    test_write_file(path, sizeof path, dir, "jobs-fifo.csv", "b");
    assert_int_equal(lucid_manifest_check_file(&m, dir, "jobs-fifo.csv", &err), -1);
    assert_non_null(strstr(err.msg, "jobs-fifo.csv: changed since the run"));
    lucid_manifest_free(&m);

    /* A folder written before the switch to XXH64 (FNV-1a hashes) still
     * verifies, and an edit of its files is still seen; an unknown hash is
     * named. */
    test_write_file(path, sizeof path, dir, "jobs-fifo.csv", "a");
    test_write_file(path, sizeof path, dir, "MANIFEST",
                    "file = jobs-fifo.csv fnv1a64:af63dc4c8601ec8c\n"
                    "file = jobs-sjf.csv md5:0cc175b9c0f1b6a831c399e269772661\n");
    assert_int_equal(lucid_manifest_load(&m, dir, &err), 0);
    assert_int_equal(lucid_manifest_check_file(&m, dir, "jobs-fifo.csv", &err), 0);
    assert_int_equal(lucid_manifest_check_file(&m, dir, "jobs-sjf.csv", &err), -1);
    assert_non_null(strstr(err.msg, "file jobs-sjf.csv: unknown hash 'md5:"));
    test_write_file(path, sizeof path, dir, "jobs-fifo.csv", "b");
    assert_int_equal(lucid_manifest_check_file(&m, dir, "jobs-fifo.csv", &err), -1);
    assert_non_null(strstr(err.msg, "recorded fnv1a64:af63dc4c8601ec8c"));
    lucid_manifest_free(&m);
    /* A file longer than the reader's 64 KiB buffer (bytes i % 251, 70,001
     * of them; xxhsum: 57948bda97826f58), hashed in pieces. */
    {
        unsigned char *big = malloc(70001);
        assert_non_null(big);
        for (size_t i = 0; i < 70001; i++)
            big[i] = (unsigned char)(i % 251);
        snprintf(path, sizeof path, "%s/big.bin", dir);
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(big, 1, 70001, f), 70001);
        assert_int_equal(fclose(f), 0);
        free(big);
        uint64_t h = 0;
        assert_int_equal(lucid_hash_file_as(path, LUCID_HASH_XXH64, &h, &err), 0);
        assert_true(h == 0x57948bda97826f58ull);
    }

    test_write_file(path, sizeof path, dir, "MANIFEST", "# c\nsemantics = fixed\nno equals sign\n");
    assert_int_equal(lucid_manifest_load(&m, dir, &err), -1);
    assert_non_null(strstr(err.msg, "MANIFEST:3: expected key = value"));
}

static int load_text(lucid_experiment *exp, const char *text, lucid_error *err)
{
    lucid_experiment_defaults(exp);
    return lucid_experiment_load_mem(exp, "x.ini", "/d", text, err);
}

static void experiment_inputs_are_hardened(void **state)
{
    (void)state;
    lucid_experiment exp;
    lucid_error err = {{0}};
    assert_int_equal(load_text(&exp,
                               "[trace]\njobs = t.csv   # the trace\nvcs = v.csv ; VCs\n"
                               "[simulate]\npolicies = fifo,sjf # two\nthreads = 4\t; four\n"
                               "[lucid]\npriority_ratio = 1.5e0 # decimal with exponent\n"
                               "borrow_vc = vc#1\n",
                               &err),
                     0);
    assert_string_equal(exp.jobs, "/d/t.csv");
    assert_string_equal(exp.vcs, "/d/v.csv");
    assert_int_equal(exp.npolicies, 2);
    assert_int_equal(exp.threads, 4);
    assert_true(exp.priority_ratio == 1.5);
    assert_string_equal(exp.borrow_vc, "vc#1"); /* '#' not after whitespace is data */
    lucid_experiment_free(&exp);

    static const struct {
        const char *text, *message;
    } refused[] = {
        {"[simulate]\nthreads = 0x10\n", "x.ini:2: [simulate] threads: '0x10' is not an integer"},
        {"[simulate]\nthreads = 1e1\n", "x.ini:2: [simulate] threads: '1e1' is not an integer"},
        {"[lucid]\npriority_ratio = 0x2\n", "x.ini:2: [lucid] priority_ratio: '0x2' is not a positive number"},
        {"[lucid]\npriority_ratio = inf\n", "x.ini:2: [lucid] priority_ratio: 'inf' is not a positive number"},
        {"[simulate]\npolicies = fifo,sjf,fifo\n", "x.ini:2: [simulate] policies: policy 'fifo' is listed twice"},
        {"[trace]\njobs = # only a comment\n", "x.ini:2: [trace] jobs: empty value"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        assert_int_equal(load_text(&exp, refused[i].text, &err), -1);
        assert_string_equal(err.msg, refused[i].message);
        lucid_experiment_free(&exp);
    }

    char dir[4096];
    test_tmpdir(dir, sizeof dir, "atomic_experiment_dir");
    lucid_experiment_defaults(&exp);
    assert_int_equal(lucid_experiment_load(&exp, dir, &err), -1);
    char want[4200];
    snprintf(want, sizeof want, "%s: is a directory, not an experiment file", dir);
    assert_string_equal(err.msg, want);
    lucid_experiment_free(&exp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(commit_replaces_abort_keeps),
        cmocka_unit_test(commit_swap_hands_back_the_old_file),
        cmocka_unit_test(same_file_by_inode),
        cmocka_unit_test(manifest_round_trip_and_checks),
        cmocka_unit_test(experiment_inputs_are_hardened),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
