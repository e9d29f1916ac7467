/* slide.c — the sliding node of a clamped rod end. The clamp holds the end node and the end
 * edge's direction, so the edge's other node moves on a line through the end node: one free
 * coordinate along it, the other directions constraints, imposed exactly. Newton's system
 * keeps the node's three rows; they are turned into the line's basis after assembly (the
 * first row along the line, the others identity rows), and the step is turned back. The
 * line moves with a `move` or `rotate` of its clamp. */
#include "sim.h"
#include "vec3.h"
#include <math.h>
#include <string.h>

/* The free rows of a slide's node and an orthonormal basis of their span whose first vector
 * lies along the line: basis[i][j] is component i of vector j. Returns the row count, 0 when
 * the slide does not act (its clamp was released). */
typedef struct {
    int    n;
    int    row[3];
    double basis[3][3];
} slide_frame;

static bool anchor_held(const srd_sim *s, int k)
{
    int d = s->m->node_dof[s->m->slide_anchor[k]];
    return s->fixed[d] && s->fixed[d + 1] && s->fixed[d + 2];
}

static void unit3(double *v)
{
    double n = sqrt(srd_dot3(v, v));
    for (int c = 0; c < 3; c++)
        v[c] /= n;
}

/* A unit vector normal to a. */
static void normal_to(const double *a, double *n)
{
    double e[3] = { 0, 0, 0 };
    e[fabs(a[0]) < 0.6 ? 0 : fabs(a[1]) < 0.6 ? 1 : 2] = 1;
    srd_cross3(a, e, n);
    unit3(n);
}

static int frame_of(const srd_sim *s, int k, slide_frame *f)
{
    const srd_model *m = s->m;
    const double *a = &s->slide_axis[3 * k];
    int d = m->node_dof[m->slide_node[k]], comp[3];
    f->n = 0;
    if (!anchor_held(s, k))
        return 0;
    for (int c = 0; c < 3; c++)
        if (s->solver.sys.free_index[d + c] >= 0) {
            comp[f->n] = c;
            f->row[f->n++] = s->solver.sys.free_index[d + c];
        }
    if (f->n == 3) {
        double n1[3], n2[3];
        normal_to(a, n1);
        srd_cross3(a, n1, n2);
        for (int i = 0; i < 3; i++) {
            f->basis[i][0] = a[i];
            f->basis[i][1] = n1[i];
            f->basis[i][2] = n2[i];
        }
    } else if (f->n == 2) { /* a planar model: the line lies in the plane of the free rows */
        double a0 = a[comp[0]], a1 = a[comp[1]], len = hypot(a0, a1);
        f->basis[0][0] = a0 / len;
        f->basis[1][0] = a1 / len;
        f->basis[0][1] = -a1 / len;
        f->basis[1][1] = a0 / len;
    } else {
        f->n = 0;
    }
    return f->n;
}

/* The stored Jacobian entry (r, c), or NULL when the layout does not store it (outside the
 * band); the symmetric band stores the upper triangle. */
static double *entry(const srd_solver *sv, int r, int c)
{
    if (sv->sys.layout == SRD_JAC_BAND_SYM && r > c) {
        int t = r;
        r = c;
        c = t;
    }
    long long p = srd_system_position(&sv->sys, r, c);
    return p >= 0 ? &sv->jac[p] : NULL;
}

static double get(const srd_solver *sv, int r, int c)
{
    const double *e = entry(sv, r, c);
    return e ? *e : 0;
}

static void set(const srd_solver *sv, int r, int c, double v)
{
    double *e = entry(sv, r, c);
    if (e)
        *e = v;
}

static bool in_frame(const slide_frame *f, int c)
{
    for (int i = 0; i < f->n; i++)
        if (f->row[i] == c)
            return true;
    return false;
}

/* Rows (transpose: columns) of the frame against column (row) c: the first becomes the
 * combination along the line, the others zero. */
static void reduce_line(const srd_solver *sv, const slide_frame *f, int c, bool transpose)
{
    double along = 0;
    for (int i = 0; i < f->n; i++)
        along += f->basis[i][0] * (transpose ? get(sv, c, f->row[i]) : get(sv, f->row[i], c));
    for (int i = 0; i < f->n; i++) {
        double v = i ? 0 : along;
        if (transpose)
            set(sv, c, f->row[i], v);
        else
            set(sv, f->row[i], c, v);
    }
}

/* The frame's own block: along the line b0^T K b0; identity rows, scaled alike, across it. */
static void reduce_block(const srd_solver *sv, const slide_frame *f)
{
    double kaa = 0;
    for (int i = 0; i < f->n; i++)
        for (int j = 0; j < f->n; j++)
            kaa += f->basis[i][0] * get(sv, f->row[i], f->row[j]) * f->basis[j][0];
    double scale = kaa != 0 && isfinite(kaa) ? fabs(kaa) : 1;
    for (int i = 0; i < f->n; i++)
        for (int j = 0; j < f->n; j++)
            set(sv, f->row[i], f->row[j], i != j ? 0 : i ? scale : kaa);
}

/* The CSC pattern is symmetric: the columns a row of the frame touches are the rows its own
 * column holds, and the node's rows share one column pattern (stencils hold whole nodes). */
static void reduce_jacobian_csc(const srd_solver *sv, const slide_frame *f)
{
    const srd_system *sys = &sv->sys;
    int col = f->row[0];
    for (int k = sys->col_start[col]; k < sys->col_start[col + 1]; k++) {
        int c = sys->row_index[k];
        if (in_frame(f, c))
            continue;
        reduce_line(sv, f, c, false);
        reduce_line(sv, f, c, true);
    }
    reduce_block(sv, f);
}

static void reduce_jacobian(const srd_solver *sv, const slide_frame *f)
{
    const srd_system *sys = &sv->sys;
    if (sys->layout == SRD_JAC_CSC) {
        reduce_jacobian_csc(sv, f);
        return;
    }
    int lo = f->row[0], hi = f->row[0];
    for (int i = 1; i < f->n; i++) {
        lo = f->row[i] < lo ? f->row[i] : lo;
        hi = f->row[i] > hi ? f->row[i] : hi;
    }
    int reach = sys->layout == SRD_JAC_DENSE ? sys->n_free : (sys->kl > sys->ku ? sys->kl : sys->ku);
    lo = lo - reach < 0 ? 0 : lo - reach;
    hi = hi + reach >= sys->n_free ? sys->n_free - 1 : hi + reach;
    for (int c = lo; c <= hi; c++) {
        if (in_frame(f, c))
            continue;
        reduce_line(sv, f, c, false);
        if (sys->layout != SRD_JAC_BAND_SYM) /* there a row's entries are the column's too */
            reduce_line(sv, f, c, true);
    }
    reduce_block(sv, f);
}

void srd_slides_reduce(srd_sim *s, int with_jacobian)
{
    slide_frame f;
    for (int k = 0; k < s->m->n_slides; k++) {
        if (!frame_of(s, k, &f))
            continue;
        double along = 0;
        for (int i = 0; i < f.n; i++)
            along += f.basis[i][0] * s->res[f.row[i]];
        for (int i = 0; i < f.n; i++)
            s->res[f.row[i]] = i ? 0 : along;
        if (with_jacobian)
            reduce_jacobian(&s->solver, &f);
    }
}

void srd_slides_expand(const srd_sim *s, double *x)
{
    slide_frame f;
    for (int k = 0; k < s->m->n_slides; k++) {
        if (!frame_of(s, k, &f))
            continue;
        double along = x[f.row[0]];
        for (int i = 0; i < f.n; i++)
            x[f.row[i]] = f.basis[i][0] * along;
    }
}

int srd_slides_across(const srd_sim *s, unsigned char *across)
{
    slide_frame f;
    int n = 0;
    for (int k = 0; k < s->m->n_slides; k++)
        for (int i = 1; i < frame_of(s, k, &f); i++, n++)
            across[f.row[i]] = 1;
    return n;
}

/* v at node `node` (3 model DOFs from dof) less its part across the line through `base`. */
static void onto_line(const double *a, const double *base, double *v)
{
    double r[3];
    srd_sub3(v, base, r);
    double along = srd_dot3(a, r);
    for (int c = 0; c < 3; c++)
        v[c] = base[c] + along * a[c];
}

void srd_slides_place(const srd_sim *s, double *q, double *v)
{
    const srd_model *m = s->m;
    for (int k = 0; k < m->n_slides; k++) {
        if (!anchor_held(s, k))
            continue;
        int d = m->node_dof[m->slide_node[k]], d0 = m->node_dof[m->slide_anchor[k]];
        onto_line(&s->slide_axis[3 * k], &q[d0], &q[d]);
        if (v)
            onto_line(&s->slide_axis[3 * k], &v[d0], &v[d]);
    }
}

void srd_slides_along(const srd_sim *s, double *x)
{
    const srd_model *m = s->m;
    double zero[3] = { 0, 0, 0 };
    for (int k = 0; k < m->n_slides; k++)
        if (anchor_held(s, k))
            onto_line(&s->slide_axis[3 * k], zero, &x[m->node_dof[m->slide_node[k]]]);
}

void srd_slides_across_part(const srd_sim *s, const double *x, double *out)
{
    const srd_model *m = s->m;
    for (int k = 0; k < m->n_slides; k++) {
        if (!anchor_held(s, k))
            continue;
        int d = m->node_dof[m->slide_node[k]];
        const double *a = &s->slide_axis[3 * k];
        double along = srd_dot3(a, &x[d]);
        for (int c = 0; c < 3; c++)
            out[d + c] = x[d + c] - along * a[c];
    }
}

void srd_slides_turn(srd_sim *s, const srd_motion *mo, const double *axis, double angle)
{
    const srd_model *m = s->m;
    double c = cos(angle), sn = sin(angle);
    for (int k = 0; k < m->n_slides; k++) {
        bool driven = false;
        for (int i = 0; i < mo->n_nodes && !driven; i++)
            driven = mo->nodes[i] == m->slide_anchor[k];
        if (!driven)
            continue;
        const double *a0 = &m->slide_axis[3 * k];
        double ax[3], along = srd_dot3(axis, a0);
        srd_cross3(axis, a0, ax);
        for (int j = 0; j < 3; j++)
            s->slide_axis[3 * k + j] = c * a0[j] + sn * ax[j] + (1 - c) * along * axis[j];
    }
}
