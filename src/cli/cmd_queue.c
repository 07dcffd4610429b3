/* cmd_queue.c — `lucid queue`: lucidd's view of the jobs it manages, like
 * squeue (its columns, -u/--me/-j/-t filters and -o format letters) with
 * lucid's phase, priority and the reason each job waits; `--job ID` adds the decisions taken for one job and why.  Also home
 * of the small client every live verb uses to ask lucidd over its socket. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

const char *cli_lucidd_socket(const char *option_value)
{
    if (option_value)
        return option_value;
    const char *env = getenv("LUCID_SOCKET");
    return env && *env ? env : "/run/lucid/lucidd.sock";
}

json_t *cli_lucidd_request(const char *socket_path, const char *request)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(socket_path) >= sizeof addr.sun_path) {
        cli_fail("socket path %s is too long", socket_path);
        return NULL;
    }
    memcpy(addr.sun_path, socket_path, strlen(socket_path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
        cli_fail("cannot reach lucidd at %s: %s (is it running? --socket or $LUCID_SOCKET)",
                 socket_path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    size_t len = strlen(request);
    if (write(fd, request, len) != (ssize_t)len || write(fd, "\n", 1) != 1) {
        close(fd);
        cli_fail("lucidd at %s: write failed", socket_path);
        return NULL;
    }
    char *buf = NULL;
    size_t used = 0, cap = 0;
    for (;;) {
        if (used + 4096 > cap) {
            char *grown = realloc(buf, cap + 65536);
            if (!grown)
                break;
            buf = grown;
            cap += 65536;
        }
        ssize_t n = read(fd, buf + used, cap - used - 1);
        if (n <= 0)
            break;
        used += (size_t)n;
    }
    close(fd);
    json_error_t jerr;
    json_t *reply = buf ? json_loadb(buf, used, 0, &jerr) : NULL;
    free(buf);
    if (!reply) {
        cli_fail("lucidd at %s: unreadable answer", socket_path);
        return NULL;
    }
    if (!json_is_true(json_object_get(reply, "ok"))) {
        cli_fail("lucidd: %s", json_string_value(json_object_get(reply, "error"))
                                   ? json_string_value(json_object_get(reply, "error"))
                                   : "request failed");
        json_decref(reply);
        return NULL;
    }
    return reply;
}

static const char *str(json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

static json_int_t num(json_t *obj, const char *key)
{
    return json_integer_value(json_object_get(obj, key));
}

static double real(json_t *obj, const char *key)
{
    return json_number_value(json_object_get(obj, key));
}

/* Slurm users read priorities higher-is-first; lucid's (estimate x GPUs, in
 * GPU-seconds) runs lower first.  Shown as 10^9 - 10^8 log10(1 + p): strictly
 * decreasing, a whole number like Slurm's, 10^9 for a job of priority 0 and
 * 10^8 less for every factor of ten (0 from p = 10^10 on, more than a
 * year on 256 GPUs).  `--json` carries lucid's own value. */
long long cli_queue_display_priority(double priority)
{
    if (!(priority > 0))
        return 1000000000LL;
    double shown = 1e9 - 1e8 * log10(1.0 + priority);
    return shown > 0 ? llround(shown) : 0;
}

/* Time used, as squeue's %M: M:SS, H:MM:SS or D-HH:MM:SS. */
static void format_elapsed(long long s, char *out, size_t size)
{
    if (s < 0)
        s = 0;
    long long d = s / 86400, h = s % 86400 / 3600, m = s % 3600 / 60, sec = s % 60;
    if (d)
        snprintf(out, size, "%lld-%02lld:%02lld:%02lld", d, h, m, sec);
    else if (h)
        snprintf(out, size, "%lld:%02lld:%02lld", h, m, sec);
    else
        snprintf(out, size, "%lld:%02lld", m, sec);
}

/* Seconds the job has run in its current (or last) run. */
static long long elapsed(json_t *job, long long now)
{
    const char *phase = str(job, "phase");
    long long start = num(job, "main_start"), end = num(job, "end_time");
    if (strcmp(phase, "profiling") == 0 || strcmp(phase, "done-in-profiler") == 0 ||
        (start == 0 && num(job, "profile_start") > 0 && strcmp(phase, "failed") == 0))
        start = num(job, "profile_start");
    else if (strcmp(phase, "running") != 0 && strcmp(phase, "done") != 0 &&
             strcmp(phase, "failed") != 0)
        return 0; /* waiting: profile-queue, moving, main-queue */
    if (start <= 0)
        return 0;
    return (end > 0 ? end : now) - start;
}

/* A predicted start as users read it here: "14:20" within a day of now,
 * else "12-04T14:20" (squeue --start's date, to the minute). */
static void clock_text(long long t, long long now, char *out, size_t size)
{
    time_t tt = (time_t)t;
    struct tm tm;
    localtime_r(&tt, &tm);
    strftime(out, size, llabs(t - now) < 20 * 3600 ? "%H:%M" : "%m-%dT%H:%M", &tm);
}

/* START: "now" for a running job, "~14:20 (13:50-15:40)" (P50, then the
 * P10-P90 interval) for a waiting one with an estimate, "- <why>" for one
 * without (held by its owner, a dependency, ...), "-" once it ended. */
static void start_column(json_t *job, long long now, char *out, size_t size)
{
    const char *phase = str(job, "phase");
    if (strcmp(phase, "running") == 0 || strcmp(phase, "profiling") == 0 ||
        strcmp(phase, "releasing") == 0) {
        snprintf(out, size, "now");
        return;
    }
    long long p50 = num(job, "start_p50");
    if (p50 > 0) {
        char a[24], b[24], c[24];
        clock_text(p50, now, a, sizeof a);
        clock_text(num(job, "start_p10"), now, b, sizeof b);
        clock_text(num(job, "start_p90"), now, c, sizeof c);
        snprintf(out, size, "~%s (%s-%s)", a, b, c);
    } else if (*str(job, "start_none")) {
        snprintf(out, size, "- %s", str(job, "start_none"));
    } else {
        snprintf(out, size, "-");
    }
}

/* The backfill reservation a waiting job holds, in a user's words:
 * "reserved for it since 14:02; from ~14:20 on n3,n4" (since: when it was
 * given, kept across ticks and restarts; from: where it lies now, absent
 * while it fits nowhere now), "" when it holds none.  A lucidd without
 * "reserved_since" gives only where it lies. */
static void reservation_text(json_t *job, long long now, char *out, size_t size)
{
    long long since = num(job, "reserved_since"), at = num(job, "reserved_at");
    char when[24];
    int used = 0;
    out[0] = '\0';
    if (since > 0) {
        clock_text(since, now, when, sizeof when);
        used = snprintf(out, size, "reserved for it since %s", when);
    }
    if (at > 0 && used >= 0 && (size_t)used < size) {
        clock_text(at, now, when, sizeof when);
        snprintf(out + used, size - (size_t)used, "%sfrom ~%s on %s",
                 since > 0 ? "; " : "reserved for it ", when, str(job, "reserved_nodes"));
    }
}

/* REASON (%r, and %R of a waiting job): lucid's reason, then the
 * reservation the job holds, if any. */
static void reason_column(json_t *job, long long now, char *out, size_t size)
{
    char held[160];
    reservation_text(job, now, held, sizeof held);
    snprintf(out, size, "%s%s%s", str(job, "reason"), held[0] ? "; " : "", held);
}

/* Why a waiting job waits and when it should start, in one sentence:
 * "waits for 16 GPUs; reserved for it since 14:02; from ~14:20 on n3,n4;
 * 3 jobs ahead of it; start ~14:20 (13:50-15:40)". */
static void start_sentence(json_t *job, long long now, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
#define SAY(...)                                                                              \
    do {                                                                                       \
        int n_ = snprintf(out + used, size - used, __VA_ARGS__);                             \
        if (n_ > 0)                                                                            \
            used = used + (size_t)n_ < size ? used + (size_t)n_ : size - 1;                   \
    } while (0)
    long long gpus = num(job, "gpus"), p50 = num(job, "start_p50");
    if (p50 <= 0) {
        SAY("no start estimate: %s", *str(job, "start_none") ? str(job, "start_none")
                                                              : "not waiting in lucid's queues");
        return;
    }
    SAY("waits for %lld GPU%s", gpus, gpus == 1 ? "" : "s");
    char held[160];
    reservation_text(job, now, held, sizeof held);
    if (held[0])
        SAY("; %s", held);
    long long ahead = num(job, "jobs_ahead");
    SAY("; %lld job%s ahead of it", ahead, ahead == 1 ? "" : "s");
    char a[24], b[24], c[24];
    clock_text(p50, now, a, sizeof a);
    clock_text(num(job, "start_p10"), now, b, sizeof b);
    clock_text(num(job, "start_p90"), now, c, sizeof c);
    SAY("; start ~%s (likely %s-%s)", a, b, c);
#undef SAY
}

/* The format letters (squeue's where it has one) and their columns. */
enum field_kind { TEXT, INTEGER, ESTIMATE, ELAPSED, PRIORITY, FACTOR, WHERE_OR_WHY, START };
static const struct {
    char letter;
    const char *title, *key;
    enum field_kind kind;
} fields[] = {
    {'i', "JOBID", "job", INTEGER},         {'P', "PARTITION", "partition", TEXT},
    {'j', "NAME", "name", TEXT},            {'u', "USER", "user", TEXT},
    {'T', "PHASE", "phase", TEXT},          {'b', "GPUS", "gpus", INTEGER},
    {'M', "ELAPSED", NULL, ELAPSED},        {'D', "NODES", "nodes", INTEGER},
    {'N', "NODELIST", "node_list", TEXT},   {'Q', "PRIORITY", "priority", PRIORITY},
    {'e', "EST_S", "estimate_s", ESTIMATE}, {'r', "REASON", NULL, WHERE_OR_WHY},
    /* squeue's %R: where it runs, else why it waits */
    {'R', "NODELIST(REASON)", NULL, WHERE_OR_WHY},
    /* squeue --start's START_TIME: lucid's estimate with its interval */
    {'S', "START", NULL, START},
    /* sprio's factors: Slurm's fair-share factor of the job's association,
     * and the value the queue is ordered by (its priority with the site's
     * factors; what Slurm is given on release), shown as %Q shows one */
    {'F', "FAIRSHARE", "fairshare", FACTOR},
    {'Y', "ORDER", "order_priority", PRIORITY},
};

/* One field of a job into out (job NULL: nothing); its header into title.
 * -1 for a letter lucid does not know. */
static int queue_field(json_t *job, char letter, long long now, char *out, size_t size,
                       const char **title)
{
    size_t f = 0;
    while (f < sizeof fields / sizeof fields[0] && fields[f].letter != letter)
        f++;
    if (f == sizeof fields / sizeof fields[0])
        return -1;
    *title = fields[f].title;
    if (!job)
        return 0;
    const char *key = fields[f].key, *phase = str(job, "phase");
    switch (fields[f].kind) {
    case TEXT:
        snprintf(out, size, "%s", str(job, key));
        break;
    case INTEGER:
        snprintf(out, size, "%lld", (long long)num(job, key));
        break;
    case ESTIMATE:
        snprintf(out, size, "%.0f", real(job, key));
        break;
    case ELAPSED:
        format_elapsed(elapsed(job, now), out, size);
        break;
    case PRIORITY:
        snprintf(out, size, "%lld", cli_queue_display_priority(real(job, key)));
        break;
    case FACTOR: /* 0..1; "-" when unknown (no fair share in Slurm, or not read yet) */
        if (json_is_number(json_object_get(job, key)) && real(job, key) >= 0)
            snprintf(out, size, "%.3f", real(job, key));
        else
            snprintf(out, size, "-");
        break;
    case WHERE_OR_WHY: /* %R: where it runs, else why it waits; %r: why */
        if (letter == 'R' && (strcmp(phase, "running") == 0 || strcmp(phase, "profiling") == 0) &&
            *str(job, "node_list"))
            snprintf(out, size, "%s", str(job, "node_list"));
        else
            reason_column(job, now, out, size);
        break;
    case START:
        start_column(job, now, out, size);
        break;
    }
    return 0;
}

/* One field as a terminal shows it: control characters (a job name may hold
 * newlines or escape sequences) as '?', and a width counted in characters,
 * cut on a UTF-8 character boundary, never inside one. */
static void put_field(FILE *out, const char *text, long width, int right)
{
    char clean[1024];
    size_t used = 0;
    long chars = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p && used + 5 < sizeof clean;) {
        size_t len = *p < 0x80 ? 1 : (*p >> 5) == 6 ? 2 : (*p >> 4) == 14 ? 3 : (*p >> 3) == 30 ? 4 : 1;
        size_t k = 1;
        while (k < len && (p[k] & 0xC0) == 0x80)
            k++;
        if (width > 0 && chars == width)
            break;
        if (k != len || (len == 1 && (*p < 0x20 || *p == 0x7f || *p >= 0x80))) {
            clean[used++] = '?'; /* control character or broken sequence */
            p += k;
        } else {
            memcpy(clean + used, p, len);
            used += len;
            p += len;
        }
        chars++;
    }
    clean[used] = '\0';
    long pad = width > chars ? width - chars : 0;
    if (right)
        fprintf(out, "%*s", (int)pad, "");
    fputs(clean, out);
    if (!right)
        fprintf(out, "%*s", (int)pad, "");
}

/* Walks a squeue-style format ("%.8i %10P %r": '.' right-justifies, a
 * width pads and truncates, other text is copied) for one job, or for the
 * header line when job is NULL.  -1 (after printing) on an unknown letter. */
static int queue_line(FILE *out, const char *format, json_t *job, long long now)
{
    for (const char *p = format; *p; p++) {
        if (*p != '%') {
            if (out)
                fputc(*p, out);
            continue;
        }
        if (p[1] == '%') {
            if (out)
                fputc('%', out);
            p++;
            continue;
        }
        int right = 0;
        long width = 0;
        if (*++p == '.')
            right = 1, p++;
        while (*p >= '0' && *p <= '9' && width < 1000)
            width = width * 10 + (*p++ - '0');
        char value[512] = "";
        const char *title = "";
        if (!*p || queue_field(job, *p, now, value, sizeof value, &title) < 0) {
            cli_usage_error("queue: format '%s': unknown field '%%%.1s' (known: %%i %%P %%j %%u "
                            "%%T %%b %%M %%D %%N %%Q %%e %%r %%R %%S %%F %%Y)", format, p);
            return -1;
        }
        const char *text = job ? value : title;
        if (out)
            put_field(out, text, width, right);
    }
    if (out)
        fputc('\n', out);
    return 0;
}

/* Membership of text in a comma-separated list (NULL list: everything). */
static int in_list(const char *list, const char *text)
{
    if (!list)
        return 1;
    size_t n = strlen(text);
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, text, n) == 0)
            return 1;
        p += len + (comma != NULL);
    }
    return 0;
}

/* Whether the filters (-u, -j, -t) keep the job: the text and the JSON
 * output list the same jobs. */
static int kept(const cli_queue_filter *filter, json_t *job)
{
    char id[32];
    snprintf(id, sizeof id, "%lld", (long long)num(job, "job"));
    return in_list(filter->users, str(job, "user")) && in_list(filter->jobs, id) &&
           in_list(filter->phases, str(job, "phase"));
}

int cli_queue_print(FILE *out, json_t *jobs, const cli_queue_filter *filter, const char *format,
                    int header, long long now)
{
    if (queue_line(header ? out : NULL, format, NULL, now) < 0)
        return 2;
    size_t i;
    json_t *job;
    json_array_foreach(jobs, i, job)
    {
        if (!kept(filter, job))
            continue;
        if (queue_line(out, format, job, now) < 0)
            return 2;
    }
    return 0;
}

static void print_explain(json_t *reply, long long now)
{
    json_t *job = json_object_get(reply, "job"), *profile = json_object_get(reply, "profile");
    printf("job %lld (%s, %lld GPUs): %s — %s\n", (long long)num(job, "job"), str(job, "user"),
           (long long)num(job, "gpus"), str(job, "phase"), str(job, "reason"));
    const char *phase = str(job, "phase");
    if (strcmp(phase, "profile-queue") == 0 || strcmp(phase, "main-queue") == 0 ||
        strcmp(phase, "moving") == 0 || strcmp(phase, "handed-back") == 0) {
        char sentence[512];
        start_sentence(job, now, sentence, sizeof sentence);
        printf("start: %s\n", sentence);
    }
    printf("priority %.0f = estimate %.0f s x %lld GPUs; sharing score %lld\n",
           real(job, "priority"), real(job, "estimate_s"), (long long)num(job, "gpus"),
           (long long)num(job, "sharing_score"));
    json_t *estimate = json_object_get(reply, "estimate");
    if (estimate)
        printf("estimate: %s v%lld — %s\n", str(estimate, "model"),
               (long long)num(estimate, "version"), str(estimate, "why"));
    if (num(profile, "samples") > 0)
        printf("profile: %lld samples, GPU util %.1f %%, memory %.0f MiB, memory util %.1f %%\n",
               (long long)num(profile, "samples"), real(profile, "gpu_util_pct"),
               real(profile, "gmem_used_mib"), real(profile, "gmem_util_pct"));
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(reply, "decisions"), i, d)
    {
        printf("  decision %-8s %-20s %s%s\n", str(d, "action"), str(d, "target"),
               str(d, "reason"), json_is_true(json_object_get(d, "acked")) ? "" : " (unacknowledged)");
    }
}

static const char usage_text[] =
    "usage: lucid queue [options]            like squeue, for the jobs lucidd manages\n"
    "       lucid queue --job ID             one job: phases, profile, estimate, decisions\n"
    "\n"
    "  -u, --user LIST      only these users' jobs (comma-separated)\n"
    "      --me             only my jobs\n"
    "  -j, --jobs LIST      only these job ids\n"
    "  -t, --states LIST    only these phases: profile-queue, profiling, moving, main-queue,\n"
    "                       running, done-in-profiler, done, failed (finished ones imply --all)\n"
    "  -o, --format FORMAT  squeue-style fields: %i job, %P partition, %j name, %u user,\n"
    "                       %T phase, %b GPUs, %M elapsed, %D nodes, %N node list,\n"
    "                       %Q priority, %e estimate (s), %r reason (and the backfill\n"
    "                       reservation it holds: since when, from when, where), %R node\n"
    "                       list if running else reason, %S start (\"now\" when running, else the\n"
    "                       predicted start ~P50 (P10-P90), or - and why there is none);\n"
    "                       %F fair-share factor (Slurm's, 0..1), %Y order (the priority\n"
    "                       with the site's factors, as Slurm is given it); %.8i\n"
    "                       right-justifies in 8 columns\n"
    "      --factors        the order and its factors, like sprio: job, user, phase, GPUs,\n"
    "                       estimate, priority, fair share, order (-o overrides)\n"
    "      --noheader       no header line\n"
    "  -a, --all            also finished jobs\n"
    "      --json           lucidd's answer as JSON (lucid's own priority: lower runs first)\n"
    "      --socket PATH    lucidd's socket ($LUCID_SOCKET, else /run/lucid/lucidd.sock)\n"
    "\n"
    "PRIORITY is shown higher-runs-first as in Slurm: 10^9 - 10^8 log10(1 + p), where\n"
    "p = estimated seconds x GPUs is lucid's priority (lower runs first).\n";

/* The phases -t accepts; finished ones need the daemon's "all" list. */
static int check_phases(const char *list, int *all)
{
    static const char *const known[] = {"profile-queue", "profiling", "moving", "main-queue",
                                        "running", "done-in-profiler", "done", "failed"};
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        size_t k = 0;
        while (k < sizeof known / sizeof known[0] &&
               !(strlen(known[k]) == len && strncmp(known[k], p, len) == 0))
            k++;
        if (k == sizeof known / sizeof known[0])
            return cli_usage_error("queue: -t: unknown phase '%.*s' (see lucid queue --help)",
                                   (int)len, p);
        if (k >= 5)
            *all = 1;
        p += len + (comma != NULL);
    }
    return 0;
}

int cmd_queue(int argc, char **argv)
{
    static const char default_format[] = "%.8i %10P %12j %8u %16T %.4b %.10M %.5D %.10Q %22S %r";
    const char *socket_path = NULL, *job = NULL, *format = default_format;
    cli_queue_filter filter = {0};
    int as_json = 0, all = 0, header = 1, factors = 0;
    static const struct {
        const char *short_name, *long_name;
    } listed[] = {{"-u", "--user"}, {"-j", "--jobs"}, {"-t", "--states"}, {"-o", "--format"}};
    const char **listed_values[] = {&filter.users, &filter.jobs, &filter.phases, &format};
    for (int i = 1; i < argc; i++) {
        int r = 0;
        if (cli_is_help(argv[i])) {
            fputs(usage_text, stdout);
            return 0;
        } else if (strcmp(argv[i], "--json") == 0) {
            as_json = 1;
            continue;
        } else if (strcmp(argv[i], "--all") == 0 || strcmp(argv[i], "-a") == 0) {
            all = 1;
            continue;
        } else if (strcmp(argv[i], "--factors") == 0) {
            factors = 1;
            continue;
        } else if (strcmp(argv[i], "--noheader") == 0) {
            header = 0;
            continue;
        } else if (strcmp(argv[i], "--me") == 0) {
            struct passwd *pw = getpwuid(getuid());
            if (!pw)
                return cli_fail("queue: --me: no user name for uid %u", (unsigned)getuid());
            filter.users = pw->pw_name;
            continue;
        }
        for (size_t k = 0; k < sizeof listed / sizeof listed[0] && r == 0; k++)
            if ((r = cli_option(argc, argv, &i, listed[k].short_name, listed_values[k])) == 0)
                r = cli_option(argc, argv, &i, listed[k].long_name, listed_values[k]);
        if (r == 0 && (r = cli_option(argc, argv, &i, "--socket", &socket_path)) == 0)
            r = cli_option(argc, argv, &i, "--job", &job);
        if (r < 0)
            return 2;
        if (r == 0)
            return cli_usage_error("queue: unknown argument '%s' (see lucid queue --help)",
                                   argv[i]);
    }
    if (factors && format == default_format)
        format = "%.8i %8u %16T %.4b %.10e %.10Q %.9F %.10Y";
    if (filter.phases && check_phases(filter.phases, &all) != 0)
        return 2;
    char request[128];
    int64_t job_id = 0;
    if (job && cli_int("--job", job, &job_id) < 0)
        return 2;
    if (job)
        snprintf(request, sizeof request, "{\"cmd\":\"explain\",\"job\":%lld}", (long long)job_id);
    else
        snprintf(request, sizeof request, "{\"cmd\":\"queue\",\"all\":%s}", all ? "true" : "false");
    json_t *reply = cli_lucidd_request(cli_lucidd_socket(socket_path), request);
    if (!reply)
        return 1;
    int rc = 0;
    if (as_json && !job) {
        json_t *jobs = json_object_get(reply, "jobs"), *shown = json_array();
        size_t i;
        json_t *one;
        json_array_foreach(jobs, i, one)
            if (kept(&filter, one))
                json_array_append(shown, one);
        json_object_set_new(reply, "jobs", shown);
        json_dumpf(reply, stdout, JSON_INDENT(2)), putchar('\n');
    } else if (as_json)
        json_dumpf(reply, stdout, JSON_INDENT(2)), putchar('\n');
    else if (job)
        print_explain(reply, (long long)time(NULL));
    else
        rc = cli_queue_print(stdout, json_object_get(reply, "jobs"), &filter, format, header,
                             (long long)time(NULL));
    json_decref(reply);
    return rc;
}
