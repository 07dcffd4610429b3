/* csv.c — the strict CSV reader behind every input format (csv.h).
 *
 * A file is read through one window of CSV_CHUNK bytes (grown only for a
 * row longer than that): reading the whole file into fresh memory cost a
 * page fault per 4 KB and as much memory as the file (820 MB for a 10M-job
 * trace).  Parsing writes NUL terminators into the window so fields are
 * handed out without further allocation; a row cut by the window's end is
 * moved to its front and the reading goes on.  Line numbers count physical
 * lines (a quoted field spanning lines advances them). */
#include "lucid/csv.h"
#include "lucid/util.h"
#include "numparse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Bytes read at a time: large enough that the reads cost little, small
 * enough to stay in the L2/L3 cache while the rows are split. */
#define CSV_CHUNK ((size_t)1 << 20)
/* Zeroed bytes allocated after the window's terminating NUL: split_plain
 * reads 16 bytes at a time and may pass the NUL by up to 15. */
#define CSV_PAD 16

struct lucid_csv {
    char *name;
    FILE *f;         /* open while the file has unread bytes; NULL for memory input */
    char *buf;       /* window on the input (all of it for memory input), NUL-terminated */
    size_t len;      /* bytes in buf */
    size_t cap;      /* buf holds cap + 1 + CSV_PAD bytes */
    size_t pos;      /* next unread byte */
    size_t base;     /* the file offset of buf[0] */
    int is_file;     /* read from a file (lucid_csv_open, lucid_csv_open_from) */
    long line;       /* physical line of the current row's first byte */
    long next_line;  /* physical line at `pos` */
    char **fields;   /* current row */
    size_t *lens;    /* their lengths */
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
        size_t *lens = realloc(csv->lens, (size_t)cap * sizeof *lens);
        if (!lens)
            return -1;
        csv->lens = lens;
        csv->cap_fields = cap;
    }
    csv->lens[csv->nfields] = (size_t)(end - field);
    csv->fields[csv->nfields++] = field;
    return 0;
}

/* Drops the bytes before `keep` (rows already handed out) and reads more
 * after what is left.  1 when bytes were added, 0 at the end of the input,
 * -1 on a read error or out of memory.  Pointers into the window move: the
 * caller rebases them (by offset from `keep`). */
static int refill(lucid_csv *csv, size_t keep, lucid_error *err)
{
    if (!csv->f)
        return 0;
    size_t left = csv->len - keep;
    if (keep)
        memmove(csv->buf, csv->buf + keep, left);
    csv->len = left;
    csv->pos -= keep;
    csv->base += keep;
    if (csv->cap - left < CSV_CHUNK / 2) { /* a row longer than half the window */
        size_t cap = csv->cap ? csv->cap * 2 : CSV_CHUNK;
        char *grown = realloc(csv->buf, cap + 1 + CSV_PAD);
        if (!grown)
            return lucid_error_set(err, "%s: out of memory", csv->name);
        csv->buf = grown;
        csv->cap = cap;
    }
    size_t got = fread(csv->buf + left, 1, csv->cap - left, csv->f);
    csv->len += got;
    memset(csv->buf + csv->len, 0, 1 + CSV_PAD); /* the terminator, and defined bytes to over-read */
    if (got == 0) {
        int failed = ferror(csv->f);
        fclose(csv->f);
        csv->f = NULL;
        if (failed)
            return lucid_error_set(err, "%s: read error", csv->name);
        return 0;
    }
    return 1;
}

/* refill() in the middle of a row that began at `start`: the row's fields
 * and the caller's two cursors are rebased to the window's new front. */
static int refill_row(lucid_csv *csv, size_t start, char **out, char **field, lucid_error *err)
{
    size_t out_at = (size_t)(*out - csv->buf) - start, field_at = (size_t)(*field - csv->buf) - start;
    for (int i = 0; i < csv->nfields; i++)
        csv->fields[i] = (char *)(uintptr_t)((size_t)(csv->fields[i] - csv->buf) - start);
    int got = refill(csv, start, err);
    for (int i = 0; i < csv->nfields; i++)
        csv->fields[i] = csv->buf + (size_t)(uintptr_t)csv->fields[i];
    *out = csv->buf + out_at;
    *field = csv->buf + field_at;
    return got;
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

#if !defined(__SSE2__)
/* For split_plain: 0 an ordinary byte, 1 ',', 2 '\n', 3 a byte it leaves
 * to the general splitter (a quote, CR, NUL: also the window's end). */
static const unsigned char plain_class[256] = {[','] = 1, ['\n'] = 2, ['"'] = 3, ['\r'] = 3,
                                               ['\0'] = 3};
#endif

static int is_blank(char c) { return c == ' ' || c == '\t'; }

/* The common row — no quotes, LF end, no blanks around fields, complete in
 * the window — split in one pass without moving bytes: 1 when done, 0 when
 * read_row's general splitter must take it (nothing was changed then).
 *
 * With SSE2 (every x86-64), 16 bytes are classified at once and the
 * separators found as bits of a mask: a byte loop mispredicted its exit at
 * the end of every field (15 per trace row, a quarter of loading).  The
 * loads may reach up to 15 bytes past the window's terminating NUL; the
 * window is allocated with CSV_PAD zeroed bytes after it for that, and the
 * NUL (a byte this splitter leaves to read_row) stops the row first. */
static int add_plain_field(lucid_csv *csv, int n, char *field, char *end)
{
    if (n == csv->cap_fields || (end > field && (is_blank(*field) || is_blank(end[-1]))))
        return 0;
    csv->fields[n] = field;
    csv->lens[n] = (size_t)(end - field);
    return 1;
}

static int split_plain(lucid_csv *csv)
{
    char *const first = csv->buf + csv->pos;
    char *field = first;
    int n = 0;
#if defined(__SSE2__)
    const __m128i comma = _mm_set1_epi8(','), lf = _mm_set1_epi8('\n');
    const __m128i quote = _mm_set1_epi8('"'), cr = _mm_set1_epi8('\r'), nul = _mm_setzero_si128();
    for (char *block = first;; block += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)block);
        unsigned sep = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(v, comma), _mm_cmpeq_epi8(v, lf)));
        unsigned other = (unsigned)_mm_movemask_epi8(_mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, cr)), _mm_cmpeq_epi8(v, nul)));
        if (other) /* only the separators before it count; then it is read_row's */
            sep &= (1u << __builtin_ctz(other)) - 1;
        for (; sep; sep &= sep - 1) {
            char *end = block + __builtin_ctz(sep);
            if (!add_plain_field(csv, n++, field, end))
                return 0;
            if (*end == '\n')
                goto row_done;
            field = end + 1;
        }
        if (other)
            return 0;
    }
row_done:;
    const char *p = csv->fields[n - 1] + csv->lens[n - 1];
#else
    const unsigned char *p = (const unsigned char *)first;
    for (;;) {
        unsigned char k;
        while ((k = plain_class[*p]) == 0)
            p++;
        if (k == 3 || !add_plain_field(csv, n++, field, (char *)p))
            return 0;
        if (k == 2)
            break;
        field = (char *)p + 1;
        p++;
    }
#endif
    for (int i = 0; i < n; i++) /* the separators become terminators */
        csv->fields[i][csv->lens[i]] = '\0';
    csv->nfields = n;
    csv->pos += (size_t)((const char *)p - first) + 1;
    csv->next_line++;
    return 1;
}

/* Splits the next non-blank physical row into fields.  1 row, 0 end, -1 error. */
static int read_row(lucid_csv *csv, lucid_error *err)
{
    for (;;) {
        /* two bytes of look-ahead: a CRLF must not be split by the window */
        if (csv->f && csv->len - csv->pos < 2 && refill(csv, csv->pos, err) < 0)
            return -1;
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
    if (split_plain(csv))
        return 1;
    csv->nfields = 0;
    size_t start = csv->pos;
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
        /* The window ends within a byte or two: keep the row, read on (the
         * look-ahead decides CRLF and a doubled quote). */
        if (csv->f && csv->len - csv->pos < 2) {
            int got = refill_row(csv, start, &out, &field, err);
            if (got < 0)
                return -1;
            start = 0;
            if (got > 0)
                continue;
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

/* Takes `buf` (memory input, len bytes) or `f` (a file, read in windows). */
static lucid_csv *open_owned(const char *name, char *buf, size_t len, FILE *f, lucid_error *err)
{
    lucid_csv *csv = calloc(1, sizeof *csv);
    if (!csv) {
        free(buf);
        if (f)
            fclose(f);
        lucid_error_set(err, "%s: out of memory", name);
        return NULL;
    }
    csv->buf = buf;
    csv->len = len;
    csv->cap = len;
    csv->f = f;
    csv->next_line = 1;
    csv->name = lucid_strdup(name);
    if (!csv->name) {
        lucid_csv_close(csv);
        lucid_error_set(err, "%s: out of memory", name);
        return NULL;
    }
    if (f && refill(csv, 0, err) < 0) {
        lucid_csv_close(csv);
        return NULL;
    }
    /* A UTF-8 byte-order mark (spreadsheet exports) is not part of the first column's name. */
    if (csv->len >= 3 && memcmp(csv->buf, "\xEF\xBB\xBF", 3) == 0)
        csv->pos = 3;
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
    char *buf = malloc(len + 1 + CSV_PAD);
    if (!buf) {
        lucid_error_set(err, "%s: out of memory", name);
        return NULL;
    }
    if (len)
        memcpy(buf, data, len);
    memset(buf + len, 0, 1 + CSV_PAD);
    return open_owned(name, buf, len, NULL, err);
}

lucid_csv *lucid_csv_open(const char *path, lucid_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        lucid_error_set(err, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    /* The window replaces stdio's buffer: one copy of each byte, not two. */
    setvbuf(f, NULL, _IONBF, 0);
    lucid_csv *csv = open_owned(path, NULL, 0, f, err);
    if (csv)
        csv->is_file = 1;
    return csv;
}

int64_t lucid_csv_file_size(const lucid_csv *csv)
{
    struct stat st;
    if (!csv->f || fstat(fileno(csv->f), &st) != 0 || !S_ISREG(st.st_mode))
        return -1;
    return (int64_t)st.st_size;
}

size_t lucid_csv_offset(const lucid_csv *csv) { return csv->base + csv->pos; }
long lucid_csv_offset_line(const lucid_csv *csv) { return csv->next_line; }

lucid_csv *lucid_csv_open_from(const lucid_csv *like, size_t from)
{
    if (!like->is_file || from == 0)
        return NULL;
    FILE *f = fopen(like->name, "rb");
    lucid_csv *csv = f ? calloc(1, sizeof *csv) : NULL;
    if (!csv) {
        if (f)
            fclose(f);
        return NULL;
    }
    setvbuf(f, NULL, _IONBF, 0);
    csv->f = f;
    csv->is_file = 1;
    csv->next_line = 1;
    csv->name = lucid_strdup(like->name);
    csv->header = calloc((size_t)like->ncols + 1, sizeof *csv->header);
    int ok = csv->name && csv->header && fseeko(f, (off_t)(from - 1), SEEK_SET) == 0;
    csv->ncols = ok ? like->ncols : 0;
    for (int i = 0; ok && i < csv->ncols; i++)
        ok = (csv->header[i] = lucid_strdup(like->header[i])) != NULL;
    /* From the byte before `from`: a line starts at `from` when that byte
     * ends one.  The bytes up to the first line end are skipped, read in
     * small pieces here: the window is filled by the first row's reading,
     * on the thread that reads this part. */
    struct stat st;
    ok = ok && fstat(fileno(f), &st) == 0;
    size_t at = from - 1, start = 0;
    while (ok && !start) {
        char piece[4096];
        size_t got = fread(piece, 1, sizeof piece, f);
        char *nl = got ? memchr(piece, '\n', got) : NULL;
        if (nl)
            start = at + (size_t)(nl - piece) + 1;
        at += got;
        ok = got > 0;
    }
    /* a line start with nothing after it is no start */
    ok = ok && (off_t)start < st.st_size && fseeko(f, (off_t)start, SEEK_SET) == 0;
    csv->base = start;
    if (!ok) {
        lucid_csv_close(csv);
        return NULL;
    }
    return csv;
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
    free(csv->lens);
    free(csv->buf);
    if (csv->f)
        fclose(csv->f);
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

const char *const *lucid_csv_row(const lucid_csv *csv) { return (const char *const *)csv->fields; }

const char *lucid_csv_field(const lucid_csv *csv, int col)
{
    return col >= 0 && col < csv->nfields ? csv->fields[col] : "";
}

size_t lucid_csv_field_len(const lucid_csv *csv, int col)
{
    return col >= 0 && col < csv->nfields ? csv->lens[col] : 0;
}

const size_t *lucid_csv_row_lens(const lucid_csv *csv) { return csv->lens; }

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

int lucid_parse_f64(const char *s, double *out)
{
    if (s && lucid_fast_f64(s, out))
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
    if (lucid_fast_i64(s, out)) /* plain digits without strtoll */
        return 0;
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
