/* distance.c — distances between segments, between a point and a triangle, and from a point to a
 * body's shape (distance.h). */
#include "distance.h"
#include <math.h>
#include "srd_model.h"

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static double clamp01(double x) { return x < 0 ? 0 : x > 1 ? 1 : x; }

static void sub3(const double *a, const double *b, double *out)
{
    for (int c = 0; c < 3; c++)
        out[c] = a[c] - b[c];
}

double srd_segment_distance(const double *a0, const double *a1, const double *b0, const double *b1)
{
    double d1[3], d2[3], r[3];
    sub3(a1, a0, d1);
    sub3(b1, b0, d2);
    sub3(a0, b0, r);
    double aa = dot3(d1, d1), ee = dot3(d2, d2), bb = dot3(d1, d2), cc = dot3(d1, r), ff = dot3(d2, r);
    double den = aa * ee - bb * bb;
    double s = den > 1e-12 * aa * ee ? clamp01((bb * ff - cc * ee) / den) : 0;
    double t = ee > 0 ? (bb * s + ff) / ee : 0;
    if (!(ee > 0)) /* b is a point (a sphere's centre): a's point nearest to it */
        s = aa > 0 ? clamp01(-cc / aa) : 0;
    else if (t < 0)
        s = aa > 0 ? clamp01(-cc / aa) : 0;
    else if (t > 1)
        s = aa > 0 ? clamp01((bb - cc) / aa) : 0;
    t = clamp01(t);
    double g[3];
    for (int c = 0; c < 3; c++)
        g[c] = r[c] + s * d1[c] - t * d2[c];
    return sqrt(dot3(g, g));
}

/* (v, w) of the closest point a + v (b - a) + w (c - a): the regions of triangle_params. */
static void triangle_params(const double *p, const double *a, const double *b, const double *c, double *v,
                            double *w)
{
    double ab[3], ac[3], ap[3], bp[3], cp[3];
    sub3(b, a, ab);
    sub3(c, a, ac);
    sub3(p, a, ap);
    sub3(p, b, bp);
    sub3(p, c, cp);
    double d1 = dot3(ab, ap), d2 = dot3(ac, ap), d3 = dot3(ab, bp), d4 = dot3(ac, bp), d5 = dot3(ab, cp),
           d6 = dot3(ac, cp);
    double va = d3 * d6 - d5 * d4, vb = d5 * d2 - d1 * d6, vc = d1 * d4 - d3 * d2;
    *v = *w = 0;
    if (d1 <= 0 && d2 <= 0)
        return;
    if (d3 >= 0 && d4 <= d3)
        *v = 1;
    else if (vc <= 0 && d1 >= 0 && d3 <= 0)
        *v = d1 / (d1 - d3);
    else if (d6 >= 0 && d5 <= d6)
        *w = 1;
    else if (vb <= 0 && d2 >= 0 && d6 <= 0)
        *w = d2 / (d2 - d6);
    else if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {
        *w = (d4 - d3) / (d4 - d3 + d5 - d6);
        *v = 1 - *w;
    } else {
        *v = vb / (va + vb + vc);
        *w = vc / (va + vb + vc);
    }
}

double srd_point_triangle_distance(const double *p, const double *a, const double *b, const double *c)
{
    double v, w, g[3];
    triangle_params(p, a, b, c, &v, &w);
    for (int k = 0; k < 3; k++)
        g[k] = p[k] - a[k] - v * (b[k] - a[k]) - w * (c[k] - a[k]);
    return sqrt(dot3(g, g));
}

/* Capsule (a sphere when l = 0) of radius r along the local z axis, caps' centres l apart. */
static double capsule_gap(const double *p, double r, double l)
{
    double z = p[2] < -l / 2 ? p[2] + l / 2 : p[2] > l / 2 ? p[2] - l / 2 : 0;
    return sqrt(p[0] * p[0] + p[1] * p[1] + z * z) - r;
}

/* Box of half sizes h: outside, the distance to it; inside, minus the distance to the nearest face. */
static double box_gap(const double *p, const double *h)
{
    double out2 = 0, in = -INFINITY;
    for (int c = 0; c < 3; c++) {
        double d = fabs(p[c]) - h[c];
        out2 += d > 0 ? d * d : 0;
        in = fmax(in, d);
    }
    return in > 0 ? sqrt(out2) : in;
}

/* Cylinder of radius r and length l along the local z axis. */
static double cylinder_gap(const double *p, double r, double l)
{
    double dr = sqrt(p[0] * p[0] + p[1] * p[1]) - r, da = fabs(p[2]) - l / 2;
    if (dr > 0 || da > 0)
        return sqrt(fmax(dr, 0) * fmax(dr, 0) + fmax(da, 0) * fmax(da, 0));
    return fmax(dr, da);
}

double srd_shape_gap(const double *p, int shape, const double *size)
{
    switch (shape) {
    case SRD_SHAPE_SPHERE: return capsule_gap(p, size[0], 0);
    case SRD_SHAPE_CAPSULE: return capsule_gap(p, size[0], size[1]);
    case SRD_SHAPE_BOX: {
        double h[3] = { size[0] / 2, size[1] / 2, size[2] / 2 };
        return box_gap(p, h);
    }
    default: return cylinder_gap(p, size[0], size[1]);
    }
}
