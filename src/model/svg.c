/* svg.c — the SVG writer (svg.h): a growing text buffer of elements. */
#include "lucid/svg.h"

#include "lucid/atomic.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lucid_svg {
    double width, height;
    char *buf;
    size_t len, cap;
    int failed;
};

lucid_svg *lucid_svg_new(double width, double height)
{
    lucid_svg *svg = calloc(1, sizeof *svg);
    if (svg) {
        svg->width = width;
        svg->height = height;
    }
    return svg;
}

void lucid_svg_free(lucid_svg *svg)
{
    if (svg)
        free(svg->buf);
    free(svg);
}

static void put(lucid_svg *svg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(lucid_svg *svg, const char *fmt, ...)
{
    if (svg->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(svg->buf ? svg->buf + svg->len : NULL, svg->buf ? svg->cap - svg->len : 0,
                          fmt, ap);
        va_end(ap);
        if (n < 0) {
            svg->failed = 1;
            return;
        }
        if (svg->buf && svg->len + (size_t)n < svg->cap) {
            svg->len += (size_t)n;
            return;
        }
        size_t cap = svg->cap ? svg->cap * 2 : 4096;
        while (cap < svg->len + (size_t)n + 1)
            cap *= 2;
        char *grown = realloc(svg->buf, cap);
        if (!grown) {
            svg->failed = 1;
            return;
        }
        svg->buf = grown;
        svg->cap = cap;
    }
}

static void put_escaped(lucid_svg *svg, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': put(svg, "&amp;"); break;
        case '<': put(svg, "&lt;"); break;
        case '>': put(svg, "&gt;"); break;
        case '"': put(svg, "&quot;"); break;
        default: put(svg, "%c", *s);
        }
    }
}

void lucid_svg_rect(lucid_svg *svg, double x, double y, double w, double h, const char *fill,
                    const char *stroke)
{
    put(svg, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" stroke=\"%s\"/>\n",
        x, y, w, h, fill, stroke);
}

void lucid_svg_line(lucid_svg *svg, double x1, double y1, double x2, double y2, const char *stroke,
                    double width)
{
    put(svg, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" stroke-width=\"%.2f\"/>\n",
        x1, y1, x2, y2, stroke, width);
}

static void points(lucid_svg *svg, const double *xs, const double *ys, int n)
{
    for (int i = 0; i < n; i++)
        put(svg, "%s%.2f,%.2f", i ? " " : "", xs[i], ys[i]);
}

void lucid_svg_polyline(lucid_svg *svg, const double *xs, const double *ys, int n,
                        const char *stroke, double width, const char *dash)
{
    put(svg, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.2f\"", stroke, width);
    if (dash)
        put(svg, " stroke-dasharray=\"%s\"", dash);
    put(svg, " points=\"");
    points(svg, xs, ys, n);
    put(svg, "\"/>\n");
}

void lucid_svg_polygon(lucid_svg *svg, const double *xs, const double *ys, int n,
                       const char *fill, double opacity)
{
    put(svg, "<polygon fill=\"%s\" fill-opacity=\"%.2f\" stroke=\"none\" points=\"", fill, opacity);
    points(svg, xs, ys, n);
    put(svg, "\"/>\n");
}

void lucid_svg_text(lucid_svg *svg, double x, double y, double size, const char *anchor,
                    double rotate, const char *text)
{
    put(svg, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.1f\" text-anchor=\"%s\"", x, y, size, anchor);
    if (rotate != 0)
        put(svg, " transform=\"rotate(%.1f %.2f %.2f)\"", rotate, x, y);
    put(svg, ">");
    put_escaped(svg, text);
    put(svg, "</text>\n");
}

int lucid_svg_save(const lucid_svg *svg, const char *path, lucid_error *err)
{
    if (svg->failed)
        return lucid_error_set(err, "%s: out of memory while drawing", path);
    lucid_outfile out;
    FILE *f = lucid_outfile_open(&out, path, err);
    if (!f)
        return -1;
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Arial, sans-serif\">\n"
            "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n",
            svg->width, svg->height, svg->width, svg->height, svg->width, svg->height);
    if (svg->len)
        fwrite(svg->buf, 1, svg->len, f);
    fputs("</svg>\n", f);
    return lucid_outfile_commit(&out, err);
}

int lucid_svg_ticks(double lo, double hi, double *ticks, int max)
{
    double span = hi - lo;
    if (!(span > 0))
        span = fabs(lo) > 0 ? fabs(lo) : 1;
    double raw = span / 5, mag = pow(10, floor(log10(raw))), step = mag;
    if (raw / mag > 5)
        step = 10 * mag;
    else if (raw / mag > 2)
        step = 5 * mag;
    else if (raw / mag > 1)
        step = 2 * mag;
    int n = 0;
    for (double v = ceil(lo / step) * step; v <= hi + step * 1e-9 && n < max; v += step)
        ticks[n++] = fabs(v) < step * 1e-9 ? 0 : v;
    return n;
}
