/* cmd_whatif.c — `lucid whatif`: a site's own history replayed by the
 * simulator's slurm policy (the twin of the Slurm it runs), then what
 * Lucid and the other policies would have done with the same jobs, each
 * stated beside the replay's own error (issue 26; docs/slurm-policy.md).
 *
 *   lucid whatif --format sacct|lucidd SRC... --slurm-conf FILE --out DIR
 *                [other `trace import` options]
 *
 * DIR/trace is the import (`lucid trace import ... --slurm-conf`), DIR/results
 * the simulation of the seven policies, DIR/whatif.txt what is printed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "lucid/atomic.h"
#include "lucid/csv.h"
#include "lucid/experiment.h"
#include "lucid/sched.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: lucid whatif --format sacct|lucidd SRC... --slurm-conf FILE --out DIR\n"
            "                    [trace import options: --since, --until, --vc-size, ...]\n"
            "  Imports a site's history (its real starts), replays it with the slurm\n"
            "  policy configured from slurm.conf and prints the replay's error against\n"
            "  what Slurm did; then the six policies on the same jobs, each beside the\n"
            "  replay.  Writes DIR/trace, DIR/results and DIR/whatif.txt.\n");
}

/* A job of the history and of the replay, by trace job id. */
typedef struct replay_job {
    int64_t id, submit, first_start, end, sim_start, sim_end;
} replay_job;

static int by_id(const void *a, const void *b)
{
    int64_t x = ((const replay_job *)a)->id, y = ((const replay_job *)b)->id;
    return x < y ? -1 : x > y;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The history's jobs (trace.csv with first_start), then the replay's
 * starts and ends (jobs-slurm.csv) joined by id; *n jobs in both. */
static int read_replay(const char *trace, const char *jobs, replay_job **out, size_t *n,
                       lucid_error *err)
{
    *out = NULL;
    *n = 0;
    lucid_csv *csv = lucid_csv_open(trace, err);
    if (!csv)
        return -1;
    int cid = lucid_csv_col(csv, "job_id"), csub = lucid_csv_col(csv, "submit_time"),
        cdur = lucid_csv_col(csv, "duration"), cfirst = lucid_csv_col(csv, "first_start");
    if (cid < 0 || csub < 0 || cdur < 0 || cfirst < 0) {
        lucid_csv_close(csv);
        return lucid_error_set(err, "%s: no first_start column: whatif needs a history with "
                                    "real starts (--format sacct or lucidd)",
                               trace);
    }
    replay_job *v = NULL;
    size_t cap = 0, count = 0;
    int rc;
    while ((rc = lucid_csv_next(csv, err)) == 1) {
        replay_job j = {0};
        int64_t dur;
        if (lucid_csv_i64(csv, cid, &j.id, err) < 0 || lucid_csv_i64(csv, csub, &j.submit, err) < 0 ||
            lucid_csv_i64(csv, cdur, &dur, err) < 0 ||
            lucid_csv_i64(csv, cfirst, &j.first_start, err) < 0) {
            rc = -1;
            break;
        }
        j.end = j.first_start + dur; /* the runs' time after the first start */
        j.sim_start = -1;
        if (LUCID_GROW(v, cap, count + 1) < 0) {
            rc = lucid_error_set(err, "out of memory");
            break;
        }
        v[count++] = j;
    }
    lucid_csv_close(csv);
    if (rc < 0) {
        free(v);
        return -1;
    }
    qsort(v, count, sizeof *v, by_id);
    if (!(csv = lucid_csv_open(jobs, err))) {
        free(v);
        return -1;
    }
    int sid = lucid_csv_col(csv, "job_id"), sstart = lucid_csv_col(csv, "start_time"),
        send = lucid_csv_col(csv, "end_time");
    while (sid >= 0 && sstart >= 0 && send >= 0 && (rc = lucid_csv_next(csv, err)) == 1) {
        replay_job key = {0};
        if (lucid_csv_i64(csv, sid, &key.id, err) < 0) {
            rc = -1;
            break;
        }
        replay_job *j = bsearch(&key, v, count, sizeof *v, by_id);
        if (j && (lucid_csv_i64(csv, sstart, &j->sim_start, err) < 0 ||
                  lucid_csv_i64(csv, send, &j->sim_end, err) < 0)) {
            rc = -1;
            break;
        }
    }
    lucid_csv_close(csv);
    if (rc < 0) {
        free(v);
        return -1;
    }
    size_t kept = 0;
    for (size_t i = 0; i < count; i++)
        if (v[i].sim_start >= 0)
            v[kept++] = v[i];
    *out = v;
    *n = kept;
    return 0;
}

/* Average JCT and queue of every policy of summary.csv (its "all" rows),
 * each against the replay's (the slurm policy's row). */
static int summary_lines(const char *path, FILE *out, lucid_error *err)
{
    lucid_csv *csv = lucid_csv_open(path, err);
    if (!csv)
        return -1;
    int cp = lucid_csv_col(csv, "policy"), cv = lucid_csv_col(csv, "vc"),
        cj = lucid_csv_col(csv, "avg_jct"), cq = lucid_csv_col(csv, "avg_queue");
    struct {
        char name[32];
        double jct, queue;
    } row[LUCID_EXP_MAX_POLICIES];
    int nrows = 0, rc = 0;
    double replay = 0;
    while (cp >= 0 && cv >= 0 && cj >= 0 && cq >= 0 && nrows < LUCID_EXP_MAX_POLICIES &&
           (rc = lucid_csv_next(csv, err)) == 1) {
        if (strcmp(lucid_csv_field(csv, cv), "all") != 0)
            continue;
        if (lucid_csv_f64(csv, cj, &row[nrows].jct, err) < 0 ||
            lucid_csv_f64(csv, cq, &row[nrows].queue, err) < 0) {
            rc = -1;
            break;
        }
        snprintf(row[nrows].name, sizeof row[nrows].name, "%s", lucid_csv_field(csv, cp));
        if (strcmp(row[nrows].name, "slurm") == 0)
            replay = row[nrows].jct;
        nrows++;
    }
    lucid_csv_close(csv);
    if (rc < 0)
        return -1;
    if (!(replay > 0))
        return lucid_error_set(err, "%s: no row of the slurm policy", path);
    fprintf(out, "%-10s %12s %14s %14s\n", "policy", "avg JCT (s)", "avg queue (s)",
            "JCT vs replay");
    for (int i = 0; i < nrows; i++)
        fprintf(out, "%-10s %12.1f %14.1f %+13.1f%%%s\n", row[i].name, row[i].jct, row[i].queue,
                100.0 * (row[i].jct / replay - 1.0),
                strcmp(row[i].name, "slurm") == 0 ? "  (the replay)" : "");
    return 0;
}

int cmd_whatif(int argc, char **argv)
{
    const char *out = NULL, *conf = NULL;
    /* argv for `trace import`: everything but --out, then --out DIR/trace. */
    char **imp = calloc((size_t)argc + 4, sizeof *imp);
    if (!imp)
        return cli_fail("out of memory");
    static char trace_word[] = "trace", import_word[] = "import", out_word[] = "--out",
                simulate_word[] = "simulate", quiet_word[] = "--quiet";
    int n = 0;
    imp[n++] = trace_word;
    imp[n++] = import_word;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int got;
        if (cli_is_help(argv[i])) {
            usage(stdout);
            free(imp);
            return 0;
        }
        if ((got = cli_option(argc, argv, &i, "--out", &v)) != 0) {
            if (got < 0) {
                free(imp);
                return 2;
            }
            out = v;
            continue;
        }
        if (strcmp(argv[i], "--slurm-conf") == 0 && i + 1 < argc)
            conf = argv[i + 1];
        else if (strncmp(argv[i], "--slurm-conf=", 13) == 0)
            conf = argv[i] + 13;
        imp[n++] = argv[i];
    }
    /* (the static words above are argv-style strings the commands read, never write) */
    if (!out || !conf) {
        free(imp);
        return cli_usage_error("whatif: --out DIR and --slurm-conf FILE are required (the "
                               "replay is the site's Slurm as its slurm.conf sets it)");
    }
    if (mkdir(out, 0777) < 0 && errno != EEXIST) {
        free(imp);
        return cli_fail("%s: cannot create: %s", out, strerror(errno));
    }
    char trace_dir[4096], results[4096], ini[4200], path[4200], jobs[4200];
    snprintf(trace_dir, sizeof trace_dir, "%s/trace", out);
    snprintf(results, sizeof results, "%s/results", out);
    imp[n++] = out_word;
    imp[n++] = trace_dir;
    int rc = cmd_trace(n, imp);
    free(imp);
    if (rc != 0)
        return rc;
    /* Only a history with real starts can be replayed: said before any
     * simulation runs. */
    lucid_error err = {{0}};
    snprintf(path, sizeof path, "%s/trace.csv", trace_dir);
    lucid_csv *head = lucid_csv_open(path, &err);
    if (!head)
        return cli_fail("%s", err.msg);
    int has_starts = lucid_csv_col(head, "first_start") >= 0;
    lucid_csv_close(head);
    if (!has_starts)
        return cli_fail("%s: no first_start column: whatif needs a history with real starts "
                        "(--format sacct or lucidd)",
                        path);
    snprintf(ini, sizeof ini, "%s/experiment.ini", trace_dir);
    char *sim[] = {simulate_word, ini, quiet_word, out_word, results};
    if ((rc = cmd_simulate(5, sim)) != 0)
        return rc;

    replay_job *v = NULL;
    size_t count = 0;
    snprintf(path, sizeof path, "%s/trace.csv", trace_dir);
    snprintf(jobs, sizeof jobs, "%s/jobs-slurm.csv", results);
    if (read_replay(path, jobs, &v, &count, &err) < 0)
        return cli_fail("%s", err.msg);
    if (count == 0) {
        free(v);
        return cli_fail("whatif: no job of the history was replayed");
    }
    int64_t *e = malloc(count * sizeof *e);
    if (!e) {
        free(v);
        return cli_fail("out of memory");
    }
    double real_jct = 0, sim_jct = 0;
    size_t within[3] = {0};
    static const int64_t limits[3] = {2, 10, 60};
    for (size_t i = 0; i < count; i++) {
        int64_t d = v[i].sim_start - v[i].first_start;
        e[i] = d < 0 ? -d : d;
        for (int k = 0; k < 3; k++)
            within[k] += e[i] <= limits[k];
        real_jct += (double)(v[i].end - v[i].submit);
        sim_jct += (double)(v[i].sim_end - v[i].submit);
    }
    real_jct /= (double)count;
    sim_jct /= (double)count;
    qsort(e, count, sizeof *e, cmp_i64);
    char *text = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&text, &len);
    if (!o) {
        free(v);
        free(e);
        return cli_fail("out of memory");
    }
    /* What the twin was configured with (the import's keys). */
    char setup[512] = "";
    lucid_experiment exp;
    lucid_experiment_defaults(&exp);
    lucid_error load_err = {{0}};
    if (lucid_experiment_load(&exp, ini, &load_err) == 0) {
        int32_t accounts = exp.slurm_accounts
                               ? lucid_slurm_accounts_parse(exp.slurm_accounts, NULL, 0, NULL,
                                                            &load_err)
                               : 0;
        char tree[64];
        if (exp.slurm_fair_tree && strcmp(exp.slurm_fair_tree, "no") == 0)
            snprintf(tree, sizeof tree, "classic fair share");
        else if (accounts > 0)
            snprintf(tree, sizeof tree, "Fair Tree over %d account%s", accounts,
                     accounts == 1 ? "" : "s");
        else
            snprintf(tree, sizeof tree, "Fair Tree, every user under the root");
        snprintf(setup, sizeof setup,
                 "  with %s, billing CPU=%s GRES/gpu=%s, start latency %s s\n", tree,
                 exp.slurm_billing_cpu ? exp.slurm_billing_cpu : "1",
                 exp.slurm_billing_gpu ? exp.slurm_billing_gpu : "0",
                 exp.slurm_start_latency ? exp.slurm_start_latency : "0");
    }
    lucid_experiment_free(&exp);
    fprintf(o,
            "The twin: the slurm policy (%s) replaying %zu jobs of the history\n"
            "%s"
            "  starts within 2 / 10 / 60 s of Slurm's: %.1f / %.1f / %.1f %%\n"
            "  start error median %lld s, p90 %lld s, max %lld s\n"
            "  average JCT %.1f s simulated, %.1f s in the history (%+.1f %%)\n\n"
            "The same jobs under each policy (JCT against the replay; read each\n"
            "difference beside the replay's own error above):\n",
            conf, count, setup, 100.0 * (double)within[0] / (double)count,
            100.0 * (double)within[1] / (double)count, 100.0 * (double)within[2] / (double)count,
            (long long)e[(count - 1) / 2], (long long)e[(size_t)(0.9 * (double)(count - 1))],
            (long long)e[count - 1], sim_jct, real_jct, 100.0 * (sim_jct / real_jct - 1.0));
    snprintf(path, sizeof path, "%s/summary.csv", results);
    rc = summary_lines(path, o, &err);
    fclose(o);
    free(v);
    free(e);
    if (rc < 0) {
        free(text);
        return cli_fail("%s", err.msg);
    }
    snprintf(path, sizeof path, "%s/whatif.txt", out);
    if (lucid_write_file_atomic(path, text, len, &err) < 0) {
        free(text);
        return cli_fail("%s", err.msg);
    }
    fwrite(text, 1, len, stdout);
    free(text);
    return 0;
}
