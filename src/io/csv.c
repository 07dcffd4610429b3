/* csv.c — the strict in-memory CSV reader behind every input format (csv.h).
 *
 * The input is copied once; parsing writes NUL terminators into the copy so
 * fields are handed out without further allocation.  Line numbers count
 * physical lines (a quoted field spanning lines advances them). */
#include "lucid/csv.h"
#include "lucid/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct lucid_csv {
    char *name;
    char *buf;       /* owned copy of the input, NUL-terminated */
    size_t len;
    size_t pos;      /* next unread byte */
    long line;       /* physical line of the current row's first byte */
    long next_line;  /* physical line at `pos` */
    char **fields;   /* current row */
    int nfields;
    int cap_fields;
    char **header;   /* owned strings */
    int ncols;
};

/* Ends the field [field, end) and records it, blanks trimmed on both sides
 * (trimming here, where the end is known, saves a strlen per field). */
static int push_field(lucid_csv *csv, char *field, char *end)
{
    while (end > field && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    *end = '\0';
    while (*field == ' ' || *field == '\t')
        field++;
    if (csv->nfields == csv->cap_fields) {
        int cap = csv->cap_fields ? csv->cap_fields * 2 : 32;
        char **grown = realloc(csv->fields, (size_t)cap * sizeof *grown);
        if (!grown)
            return -1;
        csv->fields = grown;
        csv->cap_fields = cap;
    }
    csv->fields[csv->nfields++] = field;
    return 0;
}

/* Bytes with a meaning outside quotes; everything else is copied as is. */
static const unsigned char special[256] = {['\0'] = 1, [','] = 1, ['\n'] = 1, ['\r'] = 1, ['"'] = 1};

/* True when only blanks were written to the field so far: a quote may open it. */
static int trim_is_empty_prefix(const char *field, const char *out)
{
    for (const char *p = field; p < out; p++)
        if (*p != ' ' && *p != '\t')
            return 0;
    return 1;
}

/* Splits the next non-blank physical row into fields.  1 row, 0 end, -1 error. */
static int read_row(lucid_csv *csv, lucid_error *err)
{
    for (;;) {
        if (csv->pos >= csv->len)
            return 0;
        char c = csv->buf[csv->pos];
        if (c == '\n') {
            csv->pos++;
            csv->next_line++;
            continue;
        }
        if (c == '\r' && csv->pos + 1 < csv->len && csv->buf[csv->pos + 1] == '\n') {
            csv->pos += 2;
            csv->next_line++;
            continue;
        }
        break;
    }
    csv->line = csv->next_line;
    csv->nfields = 0;
    char *out = csv->buf + csv->pos; /* fields are compacted in place */
    char *field = out;
    int quoted = 0, was_quoted = 0;
    while (csv->pos <= csv->len) {
        if (!quoted) {
            /* The common case: a run of ordinary bytes, moved only when an
             * earlier quote made the field shorter than its source. */
            const char *from = csv->buf + csv->pos, *p = from;
            while (!special[(unsigned char)*p])
                p++;
            size_t n = (size_t)(p - from);
            if (n) {
                if (out != from)
                    memmove(out, from, n);
                out += n;
                csv->pos += n;
            }
        }
        char c = csv->pos < csv->len ? csv->buf[csv->pos] : '\n';
        if (c == '\0' && csv->pos < csv->len)
            return lucid_error_at(err, csv->name, csv->line, NULL, "NUL byte in input");
        if (quoted) {
            if (csv->pos == csv->len)
                return lucid_error_at(err, csv->name, csv->line, NULL, "unterminated quoted field");
            csv->pos++;
            if (c == '"') {
                if (csv->pos < csv->len && csv->buf[csv->pos] == '"') {
                    *out++ = '"';
                    csv->pos++;
                } else {
                    quoted = 0;
                }
            } else {
                if (c == '\n')
                    csv->next_line++;
                *out++ = c;
            }
            continue;
        }
        if (c == '"' && !was_quoted && trim_is_empty_prefix(field, out)) {
            quoted = was_quoted = 1;
            out = field;
            csv->pos++;
            continue;
        }
        if (c == ',' || c == '\n' || (c == '\r' && (csv->pos + 1 >= csv->len || csv->buf[csv->pos + 1] == '\n'))) {
            if (push_field(csv, field, out) < 0)
                return lucid_error_set(err, "%s: out of memory", csv->name);
            csv->pos++;
            if (c == '\r' && csv->pos < csv->len)
                csv->pos++; /* the '\n' of CRLF */
            if (c == ',') {
                out = field = out + 1;
                was_quoted = 0;
                continue;
            }
            csv->next_line++;
            break;
        }
        *out++ = c;
        csv->pos++;
    }
    return 1;
}

static lucid_csv *open_owned(const char *name, char *buf, size_t len, lucid_error *err)
{
    lucid_csv *csv = calloc(1, sizeof *csv);
    if (!csv) {
        free(buf);
        lucid_error_set(err, "%s: out of memory", name);
        return NULL;
    }
    csv->buf = buf;
    csv->len = len;
    csv->next_line = 1;
    /* A UTF-8 byte-order mark (spreadsheet exports) is not part of the first column's name. */
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
        csv->pos = 3;
    csv->name = lucid_strdup(name);
    if (!csv->name) {
        lucid_csv_close(csv);
        lucid_error_set(err, "%s: out of memory", name);
        return NULL;
    }
    int got = read_row(csv, err);
    if (got <= 0) {
        if (got == 0)
            lucid_error_at(err, name, 1, NULL, "empty file: expected a header row");
        lucid_csv_close(csv);
        return NULL;
    }
    csv->header = calloc((size_t)csv->nfields, sizeof *csv->header);
    if (!csv->header) {
        lucid_csv_close(csv);
        lucid_error_set(err, "%s: out of memory", name);
        return NULL;
    }
    csv->ncols = csv->nfields;
    for (int i = 0; i < csv->ncols; i++) {
        csv->header[i] = lucid_strdup(csv->fields[i]);
        if (!csv->header[i]) {
            lucid_csv_close(csv);
            lucid_error_set(err, "%s: out of memory", name);
            return NULL;
        }
    }
    csv->nfields = 0;
    return csv;
}

lucid_csv *lucid_csv_open_mem(const char *name, const char *data, size_t len, lucid_error *err)
{
    char *buf = malloc(len + 1);
    if (!buf) {
        lucid_error_set(err, "%s: out of memory", name);
        return NULL;
    }
    if (len)
        memcpy(buf, data, len);
    buf[len] = '\0';
    return open_owned(name, buf, len, err);
}

lucid_csv *lucid_csv_open(const char *path, lucid_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        lucid_error_set(err, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    /* One allocation of the file's size when it is known (a regular
     * file); pipes and the like grow the buffer as they go. */
    struct stat st;
    size_t cap = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0
                     ? (size_t)st.st_size + 1
                     : (size_t)1 << 16;
    size_t len = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (len < cap)
            break;
        cap *= 2;
        char *grown = realloc(buf, cap + 1);
        if (!grown)
            free(buf);
        buf = grown;
    }
    int read_failed = ferror(f);
    fclose(f);
    if (!buf) {
        lucid_error_set(err, "%s: out of memory", path);
        return NULL;
    }
    if (read_failed) {
        free(buf);
        lucid_error_set(err, "%s: read error", path);
        return NULL;
    }
    buf[len] = '\0';
    return open_owned(path, buf, len, err);
}

void lucid_csv_close(lucid_csv *csv)
{
    if (!csv)
        return;
    if (csv->header)
        for (int i = 0; i < csv->ncols; i++)
            free(csv->header[i]);
    free(csv->header);
    free(csv->fields);
    free(csv->buf);
    free(csv->name);
    free(csv);
}

int lucid_csv_col(const lucid_csv *csv, const char *name)
{
    for (int i = 0; i < csv->ncols; i++)
        if (strcmp(csv->header[i], name) == 0)
            return i;
    return -1;
}

int lucid_csv_ncols(const lucid_csv *csv) { return csv->ncols; }

const char *lucid_csv_header(const lucid_csv *csv, int col)
{
    return col >= 0 && col < csv->ncols ? csv->header[col] : "";
}

int lucid_csv_next(lucid_csv *csv, lucid_error *err)
{
    int got = read_row(csv, err);
    if (got <= 0)
        return got;
    if (csv->nfields != csv->ncols)
        return lucid_error_at(err, csv->name, csv->line, NULL,
                              "expected %d fields as in the header, found %d", csv->ncols,
                              csv->nfields);
    return 1;
}

const char *lucid_csv_field(const lucid_csv *csv, int col)
{
    return col >= 0 && col < csv->nfields ? csv->fields[col] : "";
}

long lucid_csv_line(const lucid_csv *csv) { return csv->line; }
const char *lucid_csv_name(const lucid_csv *csv) { return csv->name; }

/* Plain decimal notation only: strtod alone would also take hexadecimal
 * ("0x10" = 16), "inf", "nan" and "infinity". */
static int decimal_text(const char *s)
{
    for (; *s; s++)
        if (!isdigit((unsigned char)*s) && *s != '.' && *s != '-' && *s != '+' && *s != 'e' &&
            *s != 'E')
            return 0;
    return 1;
}

/* Exact powers of ten as doubles. */
static const double pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* [-]digits[.digits] with at most 15 significant digits in all and at most
 * 22 after the point: the digits as an integer m < 2^53 and a power of ten
 * are both exact doubles, so m / 10^k is the correctly rounded value — the
 * one strtod gives (Clinger's fast path), at a fraction of its cost.
 * 1 when done, 0 when the text needs strtod. */
static int parse_simple_decimal(const char *s, double *out)
{
    int negative = *s == '-';
    s += negative;
    uint64_t m = 0;
    int digits = 0, frac = -1;
    for (;; s++) {
        if (*s >= '0' && *s <= '9') {
            if (++digits > 15)
                return 0;
            m = m * 10 + (uint64_t)(*s - '0');
            if (frac >= 0)
                frac++;
        } else if (*s == '.' && frac < 0) {
            frac = 0;
        } else {
            break;
        }
    }
    if (*s != '\0' || digits == 0 || frac > 22)
        return 0;
    double v = (double)m;
    if (frac > 0)
        v /= pow10_exact[frac];
    *out = negative ? -v : v;
    return 1;
}

int lucid_parse_f64(const char *s, double *out)
{
    if (s && parse_simple_decimal(s, out))
        return 0;
    if (!s || !*s || isspace((unsigned char)*s) || !decimal_text(s))
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end != '\0' || errno == ERANGE || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int lucid_parse_i64(const char *s, int64_t *out)
{
    if (!s)
        return -1;
    /* Plain digits (up to 18: no overflow) without strtoll. */
    const char *p = s + (*s == '-');
    int64_t v = 0;
    int digits = 0;
    while (*p >= '0' && *p <= '9' && digits < 18) {
        v = v * 10 + (*p++ - '0');
        digits++;
    }
    if (*p == '\0' && digits > 0) { /* 18 digits at most: no overflow */
        *out = *s == '-' ? -v : v;
        return 0;
    }
    if (!*s || isspace((unsigned char)*s) || !decimal_text(s))
        return -1;
    char *end;
    errno = 0;
    long long w = strtoll(s, &end, 10);
    if (*end == '\0' && errno == 0) {
        *out = (int64_t)w;
        return 0;
    }
    double d;
    /* "3600.0" and "9e18" are integers too (pandas writes the former);
     * anything below 2^63 converts safely, and the callers' range checks
     * then name the field and the limit. */
    if (lucid_parse_f64(s, &d) < 0 || d != floor(d) || fabs(d) >= 0x1p63)
        return -1;
    *out = (int64_t)d;
    return 0;
}

int lucid_csv_i64(const lucid_csv *csv, int col, int64_t *out, lucid_error *err)
{
    const char *s = lucid_csv_field(csv, col);
    if (!*s)
        return lucid_error_at(err, csv->name, csv->line, lucid_csv_header(csv, col),
                              "missing value");
    if (lucid_parse_i64(s, out) < 0)
        return lucid_error_at(err, csv->name, csv->line, lucid_csv_header(csv, col),
                              "'%s' is not an integer", s);
    return 0;
}

int lucid_csv_f64(const lucid_csv *csv, int col, double *out, lucid_error *err)
{
    const char *s = lucid_csv_field(csv, col);
    if (!*s)
        return lucid_error_at(err, csv->name, csv->line, lucid_csv_header(csv, col),
                              "missing value");
    if (lucid_parse_f64(s, out) < 0)
        return lucid_error_at(err, csv->name, csv->line, lucid_csv_header(csv, col),
                              "'%s' is not a number", s);
    return 0;
}

void lucid_csv_write_field(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}
