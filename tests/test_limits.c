/* test_limits.c — the site's GPU limits (src/daemon/limits.c and fit.c's
 * fit_limits_*): sacctmgr's parsable output as the lab's slurmdbd prints
 * it, unreadable values, which limits apply to a job (Slurm's order: the
 * QOS first, then the user's association, then the accounts above it), and
 * one decision's book of what runs against each, with answers worked out
 * by hand. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "../src/daemon/fit.h"
#include "../src/daemon/limits.h"

/* `sacctmgr -n -P show qos format=Name,MaxTRES,MaxTRESPerUser,
 * MaxTRESPerAccount,GrpTRES` after `modify qos normal set MaxTRESPerUser=
 * gres/gpu=4 MaxTRES=gres/gpu=16,cpu=64 ...` in the lab (13:05, 2026-12-05). */
static const char qos_text[] = "normal|cpu=64,gres/gpu=16|gres/gpu=4|gres/gpu=12|gres/gpu=100\n"
                               "long||||\n"
                               "typed|gres/gpu:a100=2|||\n";

/* `... show assoc where cluster=lab31100 format=Account,User,Partition,
 * ParentName,MaxTRES,GrpTRES` after `modify account alpha set
 * GrpTRES=gres/gpu=10 MaxTRES=gres/gpu=9`: the per-job MaxTRES is shown on
 * the users' lines too (inherited), the group limit only on alpha's. */
static const char assoc_text[] = "root||||||\n"
                                 "root|root||||\n"
                                 "alpha|||root|gres/gpu=9|gres/gpu=10\n"
                                 "alpha|lucidlab1|||gres/gpu=9|\n"
                                 "alpha|root|||gres/gpu=9|\n"
                                 "beta|||root||\n"
                                 "beta|lucidlab2||||gres/gpu=3\n"
                                 "beta|nobody||||\n";

static void tres_lists_give_their_gpus(void **state)
{
    (void)state;
    assert_int_equal(limits_tres_gpus("gres/gpu=4"), 4);
    assert_int_equal(limits_tres_gpus("cpu=64,gres/gpu=16,mem=1G"), 16);
    assert_int_equal(limits_tres_gpus("gres/gpu=0"), 0);
    assert_int_equal(limits_tres_gpus(""), LIMIT_NONE);
    assert_int_equal(limits_tres_gpus(NULL), LIMIT_NONE);
    assert_int_equal(limits_tres_gpus("cpu=4"), LIMIT_NONE);
    assert_int_equal(limits_tres_gpus("gres/gpu:a100=2"), LIMIT_NONE); /* typed: not read */
    assert_int_equal(limits_tres_gpus("gres/gpumem=2"), LIMIT_NONE);   /* another TRES */
    assert_int_equal(limits_tres_gpus("gres/gpu="), -2);
    assert_int_equal(limits_tres_gpus("gres/gpu=4x"), -2);
    assert_int_equal(limits_tres_gpus("gres/gpu=99999999999"), -2);
}

static void qos_and_associations_are_read(void **state)
{
    (void)state;
    lucid_error err = {{0}};
    char bad[256];
    slurm_limits site = {0};
    site.nqos = limits_parse_qos(qos_text, &site.qos, bad, sizeof bad, &err);
    assert_int_equal(site.nqos, 3);
    assert_string_equal(bad, "");
    /* Sorted by name: long, normal, typed. */
    assert_string_equal(site.qos[0].name, "long");
    assert_int_equal(site.qos[0].per_user, LIMIT_NONE);
    assert_string_equal(site.qos[1].name, "normal");
    assert_int_equal(site.qos[1].per_job, 16);
    assert_int_equal(site.qos[1].per_user, 4);
    assert_int_equal(site.qos[1].per_account, 12);
    assert_int_equal(site.qos[1].group, 100);
    assert_int_equal(site.qos[2].per_job, LIMIT_NONE);

    site.nassoc = limits_parse_assoc(assoc_text, &site.assoc, bad, sizeof bad, &err);
    assert_int_equal(site.nassoc, 8);
    assert_string_equal(bad, "");
    /* Sorted by account, user, partition: alpha's own line first. */
    assert_string_equal(site.assoc[0].account, "alpha");
    assert_string_equal(site.assoc[0].user, "");
    assert_string_equal(site.assoc[0].parent, "root");
    assert_int_equal(site.assoc[0].per_job, 9);
    assert_int_equal(site.assoc[0].group, 10);
    assert_string_equal(site.assoc[1].user, "lucidlab1");
    assert_int_equal(site.assoc[1].group, LIMIT_NONE);
    assert_true(limits_any(&site));
    limits_free(&site);
    assert_null(site.qos);

    /* Only empty records: no GPU limit at all. */
    site.nqos = limits_parse_qos("normal||||\n", &site.qos, bad, sizeof bad, &err);
    assert_int_equal(site.nqos, 1);
    assert_false(limits_any(&site));
    limits_free(&site);
}

/* A value lucid cannot read is no limit, and the first one is named in one
 * line; a line with too few fields is skipped; nothing crashes. */
static void bad_values_are_named_and_ignored(void **state)
{
    (void)state;
    lucid_error err = {{0}};
    char bad[256];
    limit_qos *qos = NULL;
    long n = limits_parse_qos("normal||gres/gpu=four||gres/gpu=8\nshort|gres/gpu=1\n\n"
                              "x||gres/gpu=-1||\n",
                              &qos, bad, sizeof bad, &err);
    assert_int_equal(n, 2);
    assert_string_equal(bad, "sacctmgr line 1: QOS normal MaxTRESPerUser: cannot read "
                             "'gres/gpu=four'; ignored");
    assert_string_equal(qos[0].name, "normal");
    assert_int_equal(qos[0].per_user, LIMIT_NONE);
    assert_int_equal(qos[0].group, 8);
    assert_int_equal(qos[1].per_user, LIMIT_NONE); /* x: "-1" is unreadable too */
    free(qos);

    n = limits_parse_qos("short|gres/gpu=1\n", &qos, bad, sizeof bad, &err);
    assert_int_equal(n, 0);
    assert_string_equal(bad, "sacctmgr line 1: 2 fields, expected 5; skipped");
    free(qos);

    limit_assoc *assoc = NULL;
    n = limits_parse_assoc("alpha|u1|||gres/gpu=2|gres/gpu=x\r\n", &assoc, bad, sizeof bad, &err);
    assert_int_equal(n, 1);
    assert_int_equal(assoc[0].per_job, 2);
    assert_int_equal(assoc[0].group, LIMIT_NONE);
    assert_string_equal(bad, "sacctmgr line 1: association alpha/u1 GrpTRES: cannot read "
                             "'gres/gpu=x'; ignored");
    free(assoc);
    n = limits_parse_assoc("", &assoc, bad, sizeof bad, &err);
    assert_int_equal(n, 0);
    assert_null(assoc);
}

/* The QOS priorities (sacctmgr's sixth field) and the QOS factor, Slurm's
 * normalisation: priority over the largest (high 100 -> 1, mid 25 -> 0.25,
 * normal 0 -> 0, an unknown QOS 0); a five-field line (an older reader)
 * has priority 0; an unreadable one is 0 and named once. */
static void qos_priorities_give_the_qos_factor(void **state)
{
    (void)state;
    lucid_error err = {{0}};
    char bad[256];
    slurm_limits site = {0};
    site.nqos = limits_parse_qos("normal|||||0\nhigh||gres/gpu=4|||100\nmid|||||25\nold||||\n",
                                 &site.qos, bad, sizeof bad, &err);
    assert_int_equal(site.nqos, 4);
    assert_string_equal(bad, "");
    assert_true(limits_qos_factor(&site, "high") == 1.0);
    assert_true(limits_qos_factor(&site, "mid") == 0.25);
    assert_true(limits_qos_factor(&site, "normal") == 0.0);
    assert_true(limits_qos_factor(&site, "old") == 0.0);
    assert_true(limits_qos_factor(&site, "nosuch") == 0.0);
    assert_true(limits_qos_factor(&site, NULL) == 0.0);
    limits_free(&site);

    site.nqos = limits_parse_qos("normal|||||0\nodd|||||ten\n", &site.qos, bad, sizeof bad, &err);
    assert_int_equal(site.nqos, 2);
    assert_string_equal(bad, "sacctmgr line 2: QOS odd Priority: cannot read 'ten'; ignored");
    assert_true(limits_qos_factor(&site, "odd") == 0.0); /* no QOS has a priority: all 0 */
    limits_free(&site);
}

static void load_site(slurm_limits *site, const char *qos, const char *assoc)
{
    lucid_error err = {{0}};
    char bad[256];
    site->nqos = limits_parse_qos(qos, &site->qos, bad, sizeof bad, &err);
    site->nassoc = limits_parse_assoc(assoc, &site->assoc, bad, sizeof bad, &err);
    assert_true(site->nqos >= 0 && site->nassoc >= 0);
}

/* For each kind the first place that sets it: the QOS's per-job cap (16)
 * hides the associations' MaxTRES (9); alpha's GrpTRES applies to
 * lucidlab1's jobs unless the QOS sets a group limit. */
static void the_first_place_that_sets_a_limit_wins(void **state)
{
    (void)state;
    slurm_limits site = {0};
    load_site(&site, qos_text, assoc_text);
    fit_limit got[FIT_LIMITS];
    limits_job a = {"lucidlab1", "alpha", "normal", "main", 2};
    int n = limits_of_job(&site, &a, got);
    assert_int_equal(n, 4); /* QOS: per job, per user, per account, group */
    assert_string_equal(got[0].name, "QOS normal MaxTRESPerJob gres/gpu=16");
    assert_true(got[0].per_job);
    assert_string_equal(got[1].name, "QOS normal MaxTRESPerUser gres/gpu=4");
    assert_string_equal(got[1].whose, "user lucidlab1");
    assert_string_equal(got[2].name, "QOS normal MaxTRESPerAccount gres/gpu=12");
    assert_string_equal(got[2].whose, "account alpha");
    assert_string_equal(got[3].name, "QOS normal GrpTRES gres/gpu=100");
    assert_string_equal(got[3].whose, "QOS normal");

    /* QOS long sets nothing: the associations' limits apply. */
    a.qos = "long";
    n = limits_of_job(&site, &a, got);
    assert_int_equal(n, 2);
    assert_string_equal(got[0].name, "association alpha/lucidlab1 MaxTRES gres/gpu=9");
    assert_true(got[0].per_job);
    assert_string_equal(got[1].name, "association alpha GrpTRES gres/gpu=10");
    assert_string_equal(got[1].whose, "account alpha");

    /* lucidlab2's own association has a group limit (its running GPUs). */
    limits_job b = {"lucidlab2", "beta", "long", "main", 1};
    n = limits_of_job(&site, &b, got);
    assert_int_equal(n, 1);
    assert_string_equal(got[0].name, "association beta/lucidlab2 GrpTRES gres/gpu=3");
    assert_string_equal(got[0].whose, "user lucidlab2 in account beta");

    /* An unknown QOS, an account lucid has no line for: nothing. */
    limits_job c = {"x", "gamma", "nosuch", "main", 1};
    assert_int_equal(limits_of_job(&site, &c, got), 0);
    limits_free(&site);
}

/* An account's parent chain: each account above with a group limit counts
 * its whole subtree; a cycle in bad data ends. */
static void accounts_above_count_their_subtree(void **state)
{
    (void)state;
    slurm_limits site = {0};
    load_site(&site, "normal||||\n",
              "root||||||\n"
              "ml|||root||gres/gpu=6\n"
              "vision|||ml||\n"
              "vision|ann||||\n"
              "nlp|||ml||\n"
              "nlp|bob||||\n"
              "loop1|||loop2||\n"
              "loop2|||loop1||gres/gpu=1\n");
    limits_job waiting[] = {{"ann", "vision", "normal", "main", 4},
                            {"bob", "nlp", "normal", "main", 2},
                            {"eve", "loop1", "normal", "main", 1}};
    limits_job running[] = {{"bob", "nlp", "normal", "main", 3},
                            {"zed", "other", "normal", "main", 8}};
    fit_limits per_job[3];
    limits_book book;
    lucid_error err = {{0}};
    assert_int_equal(limits_book_build(&book, &site, waiting, 3, per_job, running, 2, &err), 0);
    assert_int_equal(book.count, 2); /* ml's group limit (shared), loop2's */
    assert_int_equal(per_job[0].count, 1);
    assert_ptr_equal(per_job[0].limit[0], per_job[1].limit[0]);
    assert_string_equal(per_job[0].limit[0]->name, "association ml GrpTRES gres/gpu=6");
    assert_int_equal(per_job[0].limit[0]->used, 3); /* bob's running job, in nlp under ml */
    /* ann's 4: 3 + 4 > 6, not now; bob's 2 fits (3 + 2 <= 6). */
    char why[200];
    assert_int_equal(fit_limits_now(&per_job[0], 4, why, sizeof why), 0);
    assert_string_equal(why, "association ml GrpTRES gres/gpu=6: account ml runs 3; it needs 4 more");
    assert_int_equal(fit_limits_now(&per_job[1], 2, why, sizeof why), 1);
    /* Placed in this decision: bob's 2 counts, and ann's 1 more would not fit. */
    fit_limits_take(&per_job[1], 2);
    assert_int_equal(per_job[0].limit[0]->used, 5);
    assert_int_equal(fit_limits_now(&per_job[0], 1, why, sizeof why), 1);
    assert_int_equal(fit_limits_now(&per_job[0], 2, why, sizeof why), 0);
    assert_int_equal(per_job[2].count, 1); /* the loop stops; loop2's limit found once */
    assert_string_equal(per_job[2].limit[0]->name, "association loop2 GrpTRES gres/gpu=1");
    limits_book_free(&book);
    limits_free(&site);
}

/* The lab's case: QOS normal MaxTRESPerUser=gres/gpu=4.  lucidlab1 runs 2
 * + 2; lucidlab2 runs 3 (a running job of another QOS does not count). */
static void a_user_at_the_limit_waits_and_over_it_never_starts(void **state)
{
    (void)state;
    slurm_limits site = {0};
    load_site(&site, "normal||gres/gpu=4||\nlong||||\n", "");
    limits_job waiting[] = {{"lucidlab1", "alpha", "normal", "main", 2},  /* A3 */
                            {"lucidlab1", "alpha", "normal", "main", 8},  /* BIG */
                            {"lucidlab2", "beta", "normal", "main", 1},   /* PB */
                            {"lucidlab2", "beta", "long", "main", 8}};    /* no limit */
    limits_job running[] = {{"lucidlab1", "alpha", "normal", "main", 2},
                            {"lucidlab1", "alpha", "normal", "profiling", 2},
                            {"lucidlab2", "beta", "normal", "main", 3},
                            {"lucidlab2", "beta", "long", "main", 8}};
    fit_limits per_job[4];
    limits_book book;
    lucid_error err = {{0}};
    assert_int_equal(limits_book_build(&book, &site, waiting, 4, per_job, running, 4, &err), 0);
    assert_int_equal(book.count, 2);
    char why[200];
    assert_int_equal(fit_limits_ever(&per_job[0], 2, why, sizeof why), 1);
    assert_int_equal(fit_limits_now(&per_job[0], 2, why, sizeof why), 0);
    assert_string_equal(why, "QOS normal MaxTRESPerUser gres/gpu=4: user lucidlab1 runs 4; it needs 2 more");
    assert_int_equal(fit_limits_ever(&per_job[1], 8, why, sizeof why), 0);
    assert_string_equal(why, "needs 8 GPUs; QOS normal MaxTRESPerUser gres/gpu=4: can never start");
    assert_int_equal(fit_limits_now(&per_job[2], 1, why, sizeof why), 1); /* 3 + 1 <= 4 */
    assert_int_equal(fit_limits_now(&per_job[2], 2, why, sizeof why), 0);
    assert_int_equal(per_job[3].count, 0);
    assert_int_equal(fit_limits_ever(NULL, 100, why, sizeof why), 1);
    assert_int_equal(fit_limits_now(NULL, 100, why, sizeof why), 1);
    fit_limits_take(NULL, 3); /* harmless */
    limits_book_free(&book);

    /* No limit anywhere: an empty book, no job under any. */
    slurm_limits none = {0};
    assert_int_equal(limits_book_build(&book, &none, waiting, 4, per_job, running, 4, &err), 0);
    assert_int_equal(book.count, 0);
    assert_int_equal(per_job[0].count, 0);
    limits_free(&site);
}

/* Packing's two site rules (fit.h): whether Slurm's configuration lets a
 * packed job reach its partner's GPUs at all, and whether Slurm would start
 * one on a given node now.  The cgroup.conf text is as scontrol show config
 * prints it. */
static void packing_is_refused_only_under_cgroup_v2_confinement(void **state)
{
    (void)state;
    char why[256];
    const char *v1 = "Cgroup Support Configuration:\nCgroupPlugin            = cgroup/v1\n"
                     "ConstrainDevices        = yes\nConstrainCores          = no\n";
    const char *v2 = "CgroupPlugin = cgroup/v2\nConstrainDevices = yes\n";
    const char *autodetect = "CgroupPlugin = autodetect\nConstrainDevices = yes\n";
    const char *unconfined = "CgroupPlugin = cgroup/v2\nConstrainDevices = no\n";
    assert_int_equal(fit_packing_safe("task/affinity,task/cgroup", v1, 1, why, sizeof why), 1);
    assert_non_null(strstr(why, "cgroup v1 device confinement"));
    assert_int_equal(fit_packing_safe("task/cgroup", v2, 0, why, sizeof why), 0);
    assert_string_equal(why, "cgroup v2 device confinement (ConstrainDevices=yes, "
                             "CgroupPlugin=cgroup/v2): a packed job cannot be given its "
                             "partner's GPUs");
    /* autodetect: what this host runs (the nodes are assumed to boot alike). */
    assert_int_equal(fit_packing_safe("task/cgroup", autodetect, 0, why, sizeof why), 1);
    assert_int_equal(fit_packing_safe("task/cgroup", autodetect, 1, why, sizeof why), 0);
    assert_non_null(strstr(why, "autodetect on a cgroup v2 host"));
    /* No confinement (ConstrainDevices is no unless cgroup.conf says yes):
     * every job sees its node's GPUs anyway. */
    assert_int_equal(fit_packing_safe("task/cgroup", NULL, 1, why, sizeof why), 1);
    assert_int_equal(fit_packing_safe("task/cgroup", unconfined, 1, why, sizeof why), 1);
    assert_string_equal(why, "no device confinement (ConstrainDevices=no)");
    assert_int_equal(fit_packing_safe("task/none", v2, 1, why, sizeof why), 1);
    assert_int_equal(fit_packing_safe(NULL, v2, 1, NULL, 0), 1);
    /* fit_pack_ok: one free GPU on the node (Slurm 22.05), share units. */
    assert_int_equal(fit_pack_ok(4, 1, 4, why, sizeof why), 1);
    assert_int_equal(fit_pack_ok(4, 1, -1, why, sizeof why), 1);
    assert_int_equal(fit_pack_ok(4, 0, 8, why, sizeof why), 0);
    assert_non_null(strstr(why, "no GPU of the node free"));
    assert_int_equal(fit_pack_ok(4, 2, 3, why, sizeof why), 0);
    assert_string_equal(why, "3 of the node's share GRES free, 4 needed");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tres_lists_give_their_gpus),
        cmocka_unit_test(qos_and_associations_are_read),
        cmocka_unit_test(bad_values_are_named_and_ignored),
        cmocka_unit_test(qos_priorities_give_the_qos_factor),
        cmocka_unit_test(the_first_place_that_sets_a_limit_wins),
        cmocka_unit_test(accounts_above_count_their_subtree),
        cmocka_unit_test(a_user_at_the_limit_waits_and_over_it_never_starts),
        cmocka_unit_test(packing_is_refused_only_under_cgroup_v2_confinement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
