/* csv.h — a small, strict CSV reader shared by every input format.
 *
 * A file is read through a window of 1 MiB (memory input is copied whole);
 * rows are handed out one at a time with fields addressed by column index
 * (look columns up by header name once).  A row's fields are valid until
 * the next lucid_csv_next.
 * Quoted fields ("a,b", "say ""hi""") and CRLF line ends are understood.
 * Blank lines are skipped.  A row with a different number of fields than the
 * header is an error naming the file and line.  Numeric helpers produce
 * "file:line: field: reason" errors. */
#ifndef LUCID_CSV_H
#define LUCID_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lucid/error.h"

typedef struct lucid_csv lucid_csv;

/* Opens a file and reads its header row. */
lucid_csv *lucid_csv_open(const char *path, lucid_error *err);
/* Same over a caller buffer (copied); `name` is used in messages. */
lucid_csv *lucid_csv_open_mem(const char *name, const char *data, size_t len, lucid_error *err);
void lucid_csv_close(lucid_csv *csv);

/* Index of the header column called `name` (exact match after trimming
 * spaces), or -1. */
int lucid_csv_col(const lucid_csv *csv, const char *name);
int lucid_csv_ncols(const lucid_csv *csv);
const char *lucid_csv_header(const lucid_csv *csv, int col);

/* Advances to the next data row: 1 = a row, 0 = end of input, -1 = error. */
int lucid_csv_next(lucid_csv *csv, lucid_error *err);

/* Field `col` of the current row, NUL-terminated, surrounding spaces removed
 * ("" for col < 0). */
const char *lucid_csv_field(const lucid_csv *csv, int col);
/* All fields of the current row (lucid_csv_ncols of them), for a loader
 * that reads every row: indexing saves a call per field. */
const char *const *lucid_csv_row(const lucid_csv *csv);
/* Its length in bytes (0 for col < 0): saves a strlen where it is hashed. */
size_t lucid_csv_field_len(const lucid_csv *csv, int col);
/* The lengths of all fields of the current row (as lucid_csv_row).  At least
 * 8 bytes from the start of each field of lucid_csv_row may be read (the
 * window is padded), so a parser may load a short field as one word. */
const size_t *lucid_csv_row_lens(const lucid_csv *csv);
long lucid_csv_line(const lucid_csv *csv);
const char *lucid_csv_name(const lucid_csv *csv);

/* For one file read in parts on several threads.  The file's size in
 * bytes (-1 for memory input, or when the whole file has been read);
 * the byte offset of the next unread byte (after lucid_csv_next: the
 * first byte after its row) and that byte's line; and a second reader of the same file with
 * the same header whose rows start at the first line start at or after
 * byte `from` (its lucid_csv_offset then), line numbers counted from 1
 * there, or NULL (memory input, no line start after `from`, out of
 * memory).  A part is read correctly only when `from` is where a row of
 * the whole file starts: the caller checks that the reader before it ends
 * its last row exactly there (a quoted field may span lines). */
int64_t lucid_csv_file_size(const lucid_csv *csv);
size_t lucid_csv_offset(const lucid_csv *csv);
long lucid_csv_offset_line(const lucid_csv *csv);
lucid_csv *lucid_csv_open_from(const lucid_csv *csv, size_t from);

/* Typed accessors for the current row.  Return 0 on success, -1 with a
 * "file:line: column: reason" error.  An empty field is an error for these;
 * test with lucid_csv_field(...)[0] first where a value may be missing. */
int lucid_csv_i64(const lucid_csv *csv, int col, int64_t *out, lucid_error *err);
int lucid_csv_f64(const lucid_csv *csv, int col, double *out, lucid_error *err);

/* Plain parsers (no location): 0 on success, -1 if `s` is not a number.
 * lucid_parse_i64 also accepts an integral float such as "8.0". */
int lucid_parse_i64(const char *s, int64_t *out);
int lucid_parse_f64(const char *s, double *out);

/* Writes one field, quoted (with "" for ") only when it holds a comma, a
 * quote or a line break: what lucid_csv reads back unchanged. */
void lucid_csv_write_field(FILE *out, const char *s);

#endif
