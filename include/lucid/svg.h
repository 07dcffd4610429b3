/* svg.h — a very small SVG writer for charts: lines, polylines, rectangles
 * and text, collected in memory and written as one standalone file that
 * any browser (and rsvg-convert) opens. */
#ifndef LUCID_SVG_H
#define LUCID_SVG_H

#include "lucid/error.h"

typedef struct lucid_svg lucid_svg;

lucid_svg *lucid_svg_new(double width, double height);
void lucid_svg_free(lucid_svg *svg);
/* Colours are SVG colour strings ("#1f77b4", "none"). */
void lucid_svg_rect(lucid_svg *svg, double x, double y, double w, double h, const char *fill,
                    const char *stroke);
void lucid_svg_line(lucid_svg *svg, double x1, double y1, double x2, double y2, const char *stroke,
                    double width);
/* A polyline through n points; `dash` NULL for a solid line. */
void lucid_svg_polyline(lucid_svg *svg, const double *xs, const double *ys, int n,
                        const char *stroke, double width, const char *dash);
/* A filled polygon (used for bands). */
void lucid_svg_polygon(lucid_svg *svg, const double *xs, const double *ys, int n,
                       const char *fill, double opacity);
/* Text (escaped); anchor "start", "middle" or "end"; rotate in degrees. */
void lucid_svg_text(lucid_svg *svg, double x, double y, double size, const char *anchor,
                    double rotate, const char *text);
/* Writes the document; fails if any earlier call ran out of memory. */
int lucid_svg_save(const lucid_svg *svg, const char *path, lucid_error *err);
/* About five round axis ticks (1, 2 or 5 x a power of ten apart) covering
 * [lo, hi]; returns how many were written (at most max). */
int lucid_svg_ticks(double lo, double hi, double *ticks, int max);

#endif
