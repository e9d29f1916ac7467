/* test_bend_twist.c — the generated bend_twist kernel (std.rods, MAT-DiSMech eq. 11-16 with
 * time-parallel transported reference frames) against an independent plain C implementation
 * of the same energy. Its gradient and Hessian come from second-order forward-mode automatic
 * differentiation implemented here ("jets": value, gradient and full Hessian carried through
 * every operation by the chain rule), which is exact up to rounding, so value, gradient and
 * Hessian are all compared at 1e-12 relative. Nothing here uses the compiler's
 * differentiation: the compiler only provides the kernel under test.
 *
 * Conventions read from stdlib/rods.srd and runtime/batch.c: the stencil is x0 -> x1 -> x2
 * with edges e0 (x0-x1) and e1 (x1-x2); an edge's d1 and twist theta live in the edge's own
 * orientation; sign = +1 when the edge runs along the stencil; seen along the stencil an
 * edge with sign -1 has its tangent and twist negated and its d1 unchanged; ref_twist (of
 * e1) is the reference twist from e0 to e1 at the step start, in the stencil's orientation. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "batch.h"
#include "elab.h"
#include "kernels.h"
#include "parse.h"

static const double PI = 3.14159265358979323846;

#include "tap.h"

static Tally tally;

/* ---- second-order jets over the 11 DOFs of one stencil ----
 * Variables: 0-2 x0, 3-5 x1, 6-8 x2, 9 theta of e0, 10 theta of e1 (each in its edge's own
 * orientation, as the DOF vector stores them). */
enum { NV = 11 };

typedef struct Jet {
    double v, g[NV], h[NV][NV];
} Jet;

typedef struct Jet3 {
    Jet c[3];
} Jet3;

static Jet jconst(double v)
{
    Jet r;
    memset(&r, 0, sizeof r);
    r.v = v;
    return r;
}

static Jet jvar(double v, int i)
{
    Jet r = jconst(v);
    r.g[i] = 1;
    return r;
}

static Jet jadd(Jet a, Jet b)
{
    Jet r;
    r.v = a.v + b.v;
    for (int i = 0; i < NV; i++) {
        r.g[i] = a.g[i] + b.g[i];
        for (int j = 0; j < NV; j++)
            r.h[i][j] = a.h[i][j] + b.h[i][j];
    }
    return r;
}

static Jet jscale(Jet a, double s)
{
    Jet r;
    r.v = s * a.v;
    for (int i = 0; i < NV; i++) {
        r.g[i] = s * a.g[i];
        for (int j = 0; j < NV; j++)
            r.h[i][j] = s * a.h[i][j];
    }
    return r;
}

static Jet jsub(Jet a, Jet b) { return jadd(a, jscale(b, -1)); }

static Jet jaddc(Jet a, double c)
{
    a.v += c;
    return a;
}

/* (ab)'' = a b'' + b a'' + a' b'^T + b' a'^T */
static Jet jmul(Jet a, Jet b)
{
    Jet r;
    r.v = a.v * b.v;
    for (int i = 0; i < NV; i++) {
        r.g[i] = a.v * b.g[i] + b.v * a.g[i];
        for (int j = 0; j < NV; j++)
            r.h[i][j] = a.v * b.h[i][j] + b.v * a.h[i][j] + a.g[i] * b.g[j] + b.g[i] * a.g[j];
    }
    return r;
}

/* f(a) with f' = d1, f'' = d2: (f a)'' = d1 a'' + d2 a' a'^T */
static Jet jchain(Jet a, double f, double d1, double d2)
{
    Jet r;
    r.v = f;
    for (int i = 0; i < NV; i++) {
        r.g[i] = d1 * a.g[i];
        for (int j = 0; j < NV; j++)
            r.h[i][j] = d1 * a.h[i][j] + d2 * a.g[i] * a.g[j];
    }
    return r;
}

static Jet jrecip(Jet a) { return jchain(a, 1 / a.v, -1 / (a.v * a.v), 2 / (a.v * a.v * a.v)); }
static Jet jdiv(Jet a, Jet b) { return jmul(a, jrecip(b)); }
static Jet jsqrt(Jet a)
{
    double s = sqrt(a.v);
    return jchain(a, s, 0.5 / s, -0.25 / (s * a.v));
}
static Jet jsin(Jet a) { return jchain(a, sin(a.v), cos(a.v), -sin(a.v)); }
static Jet jcos(Jet a) { return jchain(a, cos(a.v), -sin(a.v), -cos(a.v)); }
static Jet jsq(Jet a) { return jmul(a, a); }

/* atan2(y, x): first partials (-y, x) / r^2; second xx 2xy / r^4, yy -2xy / r^4,
 * xy (y^2 - x^2) / r^4. */
static Jet jatan2(Jet y, Jet x)
{
    double r2 = x.v * x.v + y.v * y.v, r4 = r2 * r2;
    double fx = -y.v / r2, fy = x.v / r2;
    double fxx = 2 * x.v * y.v / r4, fyy = -fxx, fxy = (y.v * y.v - x.v * x.v) / r4;
    Jet r;
    r.v = atan2(y.v, x.v);
    for (int i = 0; i < NV; i++) {
        r.g[i] = fx * x.g[i] + fy * y.g[i];
        for (int j = 0; j < NV; j++)
            r.h[i][j] = fx * x.h[i][j] + fy * y.h[i][j] + fxx * x.g[i] * x.g[j] + fyy * y.g[i] * y.g[j] +
                        fxy * (x.g[i] * y.g[j] + y.g[i] * x.g[j]);
    }
    return r;
}

/* floor has a zero derivative wherever it is differentiable */
static Jet jfloor(Jet a) { return jconst(floor(a.v)); }

static Jet3 v3const(const double *p)
{
    Jet3 r;
    for (int c = 0; c < 3; c++)
        r.c[c] = jconst(p[c]);
    return r;
}

static Jet3 v3add(Jet3 a, Jet3 b)
{
    for (int c = 0; c < 3; c++)
        a.c[c] = jadd(a.c[c], b.c[c]);
    return a;
}

static Jet3 v3sub(Jet3 a, Jet3 b)
{
    for (int c = 0; c < 3; c++)
        a.c[c] = jsub(a.c[c], b.c[c]);
    return a;
}

static Jet3 v3mul(Jet s, Jet3 a)
{
    for (int c = 0; c < 3; c++)
        a.c[c] = jmul(s, a.c[c]);
    return a;
}

static Jet v3dot(Jet3 a, Jet3 b)
{
    return jadd(jadd(jmul(a.c[0], b.c[0]), jmul(a.c[1], b.c[1])), jmul(a.c[2], b.c[2]));
}

static Jet3 v3cross(Jet3 a, Jet3 b)
{
    Jet3 r;
    r.c[0] = jsub(jmul(a.c[1], b.c[2]), jmul(a.c[2], b.c[1]));
    r.c[1] = jsub(jmul(a.c[2], b.c[0]), jmul(a.c[0], b.c[2]));
    r.c[2] = jsub(jmul(a.c[0], b.c[1]), jmul(a.c[1], b.c[0]));
    return r;
}

static Jet3 v3normalize(Jet3 a) { return v3mul(jrecip(jsqrt(v3dot(a, a))), a); }

/* ---- the energy of stdlib/rods.srd, written plainly ---- */

/* Parallel transport of u from unit tangent t0 to unit tangent t1 (rods.srd's transport). */
static Jet3 transport(Jet3 u, Jet3 t0, Jet3 t1)
{
    Jet3 b = v3cross(t0, t1);
    Jet c = v3dot(t0, t1);
    return v3add(v3add(v3mul(c, u), v3cross(b, u)), v3mul(jdiv(v3dot(b, u), jaddc(c, 1)), b));
}

static Jet wrap(Jet a)
{
    Jet turns = jfloor(jscale(jaddc(a, PI), 1 / (2 * PI)));
    return jsub(a, jscale(turns, 2 * PI));
}

static double clampd(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }
static double discrete_curvature(double k, double l) { return 2 * tan(asin(clampd(k * l / 2, -0.99, 0.99))); }

typedef struct Stencil {
    double x[9], theta[2];  /* now: positions x0, x1, x2 and the edges' twists */
    double xp[9];           /* at the step start */
    double d1[2][3];        /* each edge's reference director at the step start (own orientation) */
    double sign[2];         /* +1 along the stencil */
    double ref_twist;       /* e1's reference twist at the step start */
    double data[7];         /* voronoi_length EI1 EI2 GJ kappa1_bar kappa2_bar tau_bar */
} Stencil;

static void unit(const double *a, const double *b, double *t)
{
    double n = 0;
    for (int c = 0; c < 3; c++) {
        t[c] = b[c] - a[c];
        n += t[c] * t[c];
    }
    n = sqrt(n);
    for (int c = 0; c < 3; c++)
        t[c] /= n;
}

static Jet bend_twist(const Stencil *s)
{
    Jet3 x[3];
    for (int k = 0; k < 3; k++)
        for (int c = 0; c < 3; c++)
            x[k].c[c] = jvar(s->x[3 * k + c], 3 * k + c);
    Jet theta0 = jvar(s->theta[0], 9), theta1 = jvar(s->theta[1], 10);
    double p0[3], p1[3]; /* step-start tangents along the stencil */
    unit(&s->xp[0], &s->xp[3], p0);
    unit(&s->xp[3], &s->xp[6], p1);
    Jet3 t0 = v3normalize(v3sub(x[1], x[0]));
    Jet3 t1 = v3normalize(v3sub(x[2], x[1]));
    Jet3 a0 = transport(v3const(s->d1[0]), v3const(p0), t0);
    Jet3 a1 = transport(v3const(s->d1[1]), v3const(p1), t1);
    Jet3 b0 = v3cross(t0, a0), b1 = v3cross(t1, a1);
    Jet th0 = jscale(theta0, s->sign[0]), th1 = jscale(theta1, s->sign[1]);
    Jet c0 = jcos(th0), s0 = jsin(th0), c1 = jcos(th1), s1 = jsin(th1);
    Jet3 m1_0 = v3add(v3mul(c0, a0), v3mul(s0, b0));
    Jet3 m2_0 = v3sub(v3mul(c0, b0), v3mul(s0, a0));
    Jet3 m1_1 = v3add(v3mul(c1, a1), v3mul(s1, b1));
    Jet3 m2_1 = v3sub(v3mul(c1, b1), v3mul(s1, a1));
    Jet3 kb = v3mul(jdiv(jconst(2), jaddc(v3dot(t0, t1), 1)), v3cross(t0, t1));
    Jet k1 = jscale(v3dot(v3add(m2_0, m2_1), kb), 0.5);
    Jet k2 = jscale(v3dot(v3add(m1_0, m1_1), kb), -0.5);
    Jet3 u = transport(a0, t0, t1);
    Jet angle = jatan2(v3dot(v3cross(u, a1), t1), v3dot(u, a1));
    Jet mref = jaddc(wrap(jaddc(angle, -s->ref_twist)), s->ref_twist);
    Jet tau = jadd(jsub(th1, th0), mref);
    double l = s->data[0], EI1 = s->data[1], EI2 = s->data[2], GJ = s->data[3];
    Jet e1 = jscale(jsq(jaddc(k1, -discrete_curvature(s->data[4], l))), 0.5 * EI1 / l);
    Jet e2 = jscale(jsq(jaddc(k2, -discrete_curvature(s->data[5], l))), 0.5 * EI2 / l);
    Jet e3 = jscale(jsq(jaddc(tau, -s->data[6] * l)), 0.5 * GJ / l);
    return jadd(jadd(e1, e2), e3);
}

/* The reference twist of the stencil at the step start (x = xp, so a0 = d1 of e0), in the
 * stencil's orientation: angle about p1 from d1 of e0 carried across the node to d1 of e1. */
static double step_start_ref_twist(const Stencil *s)
{
    double p0[3], p1[3];
    unit(&s->xp[0], &s->xp[3], p0);
    unit(&s->xp[3], &s->xp[6], p1);
    Jet3 u = transport(v3const(s->d1[0]), v3const(p0), v3const(p1));
    Jet3 a1 = v3const(s->d1[1]);
    return atan2(v3dot(v3cross(u, a1), v3const(p1)).v, v3dot(u, a1).v);
}

/* ---- the model ---- */

/* Three rods of different sections, materials and natural shapes, joined so that the two
 * junction elements each have one edge against the stencil: at a.start, a's first edge
 * leaves the joint (e0 sign -1); at a.end, c's last edge enters it (e1 sign -1). */
static const char *model_text =
    "material soft { E = 2 MPa; rho = 1200 kg/m^3; nu = 0.4; }\n"
    "material hard { E = 5 MPa; rho = 1100 kg/m^3; nu = 0.3; }\n"
    "rod a { path = polyline((0, 0, 0) m, (0.03, 0.01, 0.005) m, (0.06, 0, 0.02) m); nodes = 7;\n"
    "        section = elliptic(1.2 mm, 0.7 mm); material = soft; curvature = (20 /m, -12 /m); twist = 8 /m; }\n"
    "rod b { path = arc((0, -0.03, 0) m, 3 cm, 90 deg, 180 deg); nodes = 6; section = rectangular(2 mm, 1 mm);\n"
    "        material = hard; }\n"
    "rod c { path = line((0.07, 0.04, 0.03) m, (0.06, 0, 0.02) m); nodes = 5; radius = 0.8 mm; material = hard;\n"
    "        curvature = (0, 30 /m); twist = -5 /m; }\n"
    "join a.start, b.start;\n"
    "join a.end, c.end;\n";

static double uniform(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return ((*seed >> 8) & 0xFFFFFF) / (double)0x1000000;
}

static double sym(unsigned *seed) { return 2 * uniform(seed) - 1; }

/* A random unit vector normal to the unit vector t. */
static void random_normal(unsigned *seed, const double *t, double *d)
{
    double n;
    do {
        double r[3] = { sym(seed), sym(seed), sym(seed) };
        double along = r[0] * t[0] + r[1] * t[1] + r[2] * t[2];
        for (int c = 0; c < 3; c++)
            d[c] = r[c] - along * t[c];
        n = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    } while (n < 0.1);
    for (int c = 0; c < 3; c++)
        d[c] /= n;
}

typedef struct Worst {
    double value, grad, hess;
} Worst;

/* Evaluates instance i of the set with the kernel, reading the state from `state`, and
 * compares with the C implementation on the stencil s. */
static void compare_instance(const KernelSet *ks, const srd_batch_owner *bo, int i, const double *q,
                             const double *q0, const double *v0, const double *state, const Stencil *s, Worst *w)
{
    const srd_kernel_info *in = &ks->info;
    int nd = in->nd;
    int32_t res[NV];
    int64_t pos[NV * NV];
    for (int k = 0; k < nd; k++) {
        res[k] = k;
        for (int l = 0; l < nd; l++)
            pos[k * nd + l] = (int64_t)l * nd + k; /* entry (row k, col l), column-major */
    }
    srd_elem_batch one = { 1, nd, bo->b.n_data, bo->b.n_state, &bo->b.dofs[(size_t)i * nd], res, pos,
                           &bo->b.data[(size_t)i * bo->b.n_data], state };
    double E = 0, g[NV + 1] = { 0 }, J[NV * NV + 1] = { 0 };
    double params[1] = { 0 };
    srd_eval_ctx ctx = { q, q0, v0, params, 0.0, 1e-3, &E, g, J };
    ks->fn(&ctx, &one);

    Jet e = bend_twist(s);
    /* the kernel's stencil DOF k is component dof_comp[k] of parameter dof_param[k] */
    int var[NV];
    for (int k = 0; k < nd; k++) {
        int p = in->dof_param[k], c = in->dof_comp[k];
        var[k] = p < 3 ? 3 * p + c : 9 + (p - 3);
    }
    double gs = 0, hs = 0;
    for (int k = 0; k < nd; k++) {
        gs = fmax(gs, fabs(e.g[var[k]]));
        for (int l = 0; l < nd; l++)
            hs = fmax(hs, fabs(e.h[var[k]][var[l]]));
    }
    w->value = fmax(w->value, fabs(E - e.v) / fabs(e.v));
    for (int k = 0; k < nd; k++) {
        w->grad = fmax(w->grad, fabs(g[k] - e.g[var[k]]) / gs);
        for (int l = 0; l < nd; l++)
            w->hess = fmax(w->hess, fabs(J[(size_t)l * nd + k] - e.h[var[k]][var[l]]) / hs);
    }
}

/* The jets against central differences of the C energy itself (a check of the reference,
 * independent of the kernel): gradient from values, Hessian from jet gradients. */
static void jets_vs_differences(const Stencil *s0, double *wg, double *wh)
{
    Jet e = bend_twist(s0);
    double gs = 0, hs = 0;
    for (int i = 0; i < NV; i++) {
        gs = fmax(gs, fabs(e.g[i]));
        for (int j = 0; j < NV; j++)
            hs = fmax(hs, fabs(e.h[i][j]));
    }
    for (int i = 0; i < NV; i++) {
        Stencil s = *s0;
        double *x = i < 9 ? &s.x[i] : &s.theta[i - 9], keep = *x, h = i < 9 ? 1e-6 : 1e-5;
        static const double off[4] = { 2, 1, -1, -2 }, wt[4] = { -1, 8, -8, 1 };
        double fe = 0, fg[NV] = { 0 };
        for (int k = 0; k < 4; k++) {
            *x = keep + off[k] * h;
            Jet ek = bend_twist(&s);
            fe += wt[k] * ek.v;
            for (int j = 0; j < NV; j++)
                fg[j] += wt[k] * ek.g[j];
        }
        *x = keep;
        *wg = fmax(*wg, fabs(fe / (12 * h) - e.g[i]) / gs);
        for (int j = 0; j < NV; j++)
            *wh = fmax(*wh, fabs(fg[j] / (12 * h) - e.h[j][i]) / hs);
    }
}

int main(void)
{
    Arena arena;
    arena_init(&arena);
    Program prog = { 0 };
    bool parsed = parse_program_text(&arena, "bend_twist.srd", model_text, strlen(model_text), parse_stdlib_dir(),
                                     &prog);
    srd_model *m = parsed ? elab_program(&prog, &arena, "bend_twist.srd") : NULL;
    diag_flush(stdout);
    check(&tally, m != NULL, "test model elaborates");
    if (!m)
        return 1;
    ModelKernels mk;
    char err[512] = "";
    bool lowered = kernels_lower(&mk, &prog, m, false, err, sizeof err);
    check(&tally, lowered, "every element set lowers (%s)", lowered ? "ok" : err);
    bool jitted = lowered && kernels_jit(&mk, JIT_CHUNK_OPS, err, sizeof err);
    check(&tally, jitted, "kernels JIT-compile (%s)", jitted ? "ok" : err);
    if (!jitted)
        return 1;
    int set = -1;
    for (int s = 0; s < mk.n; s++)
        if (mk.sets[s].fn && !strcmp(mk.sets[s].lowered.kind, "bend_twist"))
            set = s;
    check(&tally, set >= 0, "the model has a bend_twist kernel");
    if (set < 0)
        return 1;
    const KernelSet *ks = &mk.sets[set];
    const srd_kernel_info *in = &ks->info;
    const srd_elemset *es = &m->sets[set];
    srd_system sys;
    srd_system_init(&sys, m, SRD_JAC_DENSE);
    srd_batch_owner bo;
    check(&tally, srd_batch_build(&bo, m, set, in, &sys) == 0, "bend_twist: batch of %d instances", es->n);

    /* The kernel's signature: 11 DOFs (9 node coordinates, 2 twists) and, as state, the two
     * edges' d1, their signs and ref_twist; nothing else. */
    bool layout = in->nd == NV && in->n_params == 5 && es->n_data >= 7;
    for (int k = 0; k < in->nd && layout; k++)
        layout = in->dof_param[k] < 3 ? in->dof_comp[k] <= SRD_COMP_Z
                                       : in->dof_param[k] < 5 && in->dof_comp[k] == SRD_COMP_TWIST;
    for (int k = 0; k < in->n_state && layout; k++)
        layout = in->state_param[k] >= 3 && (in->state_kind[k] == SRD_STATE_D1 || in->state_kind[k] == SRD_STATE_SIGN ||
                                             in->state_kind[k] == SRD_STATE_REF_TWIST);
    check(&tally, layout, "bend_twist kernel reads 11 DOFs and only d1, sign and ref_twist of its edges (%d DOFs, %d state)",
          in->nd, in->n_state);
    if (!layout)
        return 1;
    int against[2] = { 0, 0 };
    for (int i = 0; i < es->n; i++)
        for (int k = 0; k < 2; k++)
            against[k] += es->signs[2 * i + k] < 0;
    check(&tally, against[0] > 0 && against[1] > 0, "the model has junctions with e0 against the stencil (%d) and e1 (%d)",
          against[0], against[1]);

    /* batch.c's initial state against the conventions above: each d1 is a unit normal of its
     * edge's reference tangent, and ref_twist is the reference twist this file measures at the
     * reference configuration. */
    double worst_frame = 0, worst_twist = 0;
    for (int i = 0; i < es->n; i++) {
        Stencil s;
        memset(&s, 0, sizeof s);
        for (int k = 0; k < 3; k++)
            memcpy(&s.xp[3 * k], &m->x0[3 * es->nodes[3 * i + k]], 3 * sizeof(double));
        const double *bs = &bo.b.state[(size_t)i * in->n_state];
        for (int k = 0; k < in->n_state; k++) {
            int p = in->state_param[k];
            if (in->state_kind[k] == SRD_STATE_D1)
                s.d1[p - 3][in->state_comp[k]] = bs[k];
            else if (in->state_kind[k] == SRD_STATE_SIGN)
                s.sign[p - 3] = bs[k];
            else if (p == 4)
                s.ref_twist = bs[k];
        }
        for (int k = 0; k < 2; k++) {
            int e = es->edges[2 * i + k];
            double t[3];
            unit(&m->x0[3 * m->edge_nodes[2 * e]], &m->x0[3 * m->edge_nodes[2 * e + 1]], t);
            const double *d = s.d1[k];
            worst_frame = fmax(worst_frame, fabs(d[0] * t[0] + d[1] * t[1] + d[2] * t[2]));
            worst_frame = fmax(worst_frame, fabs(sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) - 1));
            worst_frame = fmax(worst_frame, fabs(s.sign[k] - es->signs[2 * i + k]));
        }
        worst_twist = fmax(worst_twist, fabs(step_start_ref_twist(&s) - s.ref_twist));
    }
    check(&tally, worst_frame < 1e-14 && worst_twist < 1e-14,
          "batch.c's d1 are unit normals of the edges, signs as elaborated (worst %.2e), ref_twist as measured here "
          "(worst %.2e), tol 1e-14",
          worst_frame, worst_twist);

    double *q = calloc((size_t)m->n_dofs, sizeof(double)), *q0 = calloc((size_t)m->n_dofs, sizeof(double));
    double *v0 = calloc((size_t)m->n_dofs, sizeof(double)); /* bend_twist reads no velocity */
    double *d1 = calloc((size_t)m->n_edges * 3, sizeof(double));
    double *state = calloc((size_t)in->n_state + 1, sizeof(double));
    unsigned seed = 2024;
    Worst own = { 0 }, built = { 0 };
    double fd_g = 0, fd_h = 0;
    int wrapped = 0;
    for (int c = 0; c < 100; c++) {
        /* positions: reference +-2 mm, step start +-2 mm from there (edges are 1-2 cm);
         * twists anywhere in [-pi, pi] */
        for (int d = 0; d < m->n_dofs; d++) {
            int kind = m->dof_kind[d];
            if (kind <= SRD_DOF_NODE_Z) {
                q[d] = m->x0[3 * m->dof_owner[d] + kind] + 2e-3 * sym(&seed);
                q0[d] = q[d] + 2e-3 * sym(&seed);
            } else {
                q[d] = PI * sym(&seed);
                q0[d] = PI * sym(&seed);
            }
        }
        /* every edge's d1: a random unit vector normal to its tangent at the step start */
        for (int e = 0; e < m->n_edges; e++) {
            double t[3];
            unit(&q0[m->node_dof[m->edge_nodes[2 * e]]], &q0[m->node_dof[m->edge_nodes[2 * e + 1]]], t);
            random_normal(&seed, t, &d1[3 * e]);
        }
        for (int i = 0; i < es->n; i++) {
            Stencil s;
            for (int k = 0; k < 3; k++) {
                int base = m->node_dof[es->nodes[3 * i + k]];
                for (int cc = 0; cc < 3; cc++) {
                    s.x[3 * k + cc] = q[base + cc];
                    s.xp[3 * k + cc] = q0[base + cc];
                }
            }
            for (int k = 0; k < 2; k++) {
                int e = es->edges[2 * i + k];
                s.theta[k] = q[m->edge_twist[e]];
                s.sign[k] = es->signs[2 * i + k];
                memcpy(s.d1[k], &d1[3 * e], sizeof s.d1[k]);
            }
            /* the values the kernel reads: the batch's, where natural shapes measured from the
             * reference replace the model's for flagged instances */
            for (int k = 0; k < 7; k++)
                s.data[k] = bo.b.data[(size_t)i * bo.b.n_data + k];
            /* ref_twist continued from earlier steps: the true value at the step start, plus a
             * whole number of turns and a little drift */
            int turns = (int)floor(3 * uniform(&seed)) - 1;
            s.ref_twist = step_start_ref_twist(&s) + 2 * PI * turns + 0.3 * sym(&seed);
            wrapped += turns != 0;
            for (int k = 0; k < in->n_state; k++) {
                int p = in->state_param[k];
                switch (in->state_kind[k]) {
                case SRD_STATE_D1: state[k] = s.d1[p - 3][in->state_comp[k]]; break;
                case SRD_STATE_SIGN: state[k] = s.sign[p - 3]; break;
                case SRD_STATE_REF_TWIST: state[k] = p == 4 ? s.ref_twist : 0; break;
                }
            }
            compare_instance(ks, &bo, i, q, q0, v0, state, &s, &own);
            if (c < 5)
                jets_vs_differences(&s, &fd_g, &fd_h);

            /* the same configuration with the state batch.c initialised (reference frames of
             * the reference configuration) */
            const double *bs = &bo.b.state[(size_t)i * in->n_state];
            for (int k = 0; k < in->n_state; k++) {
                int p = in->state_param[k];
                switch (in->state_kind[k]) {
                case SRD_STATE_D1: s.d1[p - 3][in->state_comp[k]] = bs[k]; break;
                case SRD_STATE_SIGN: s.sign[p - 3] = bs[k]; break;
                case SRD_STATE_REF_TWIST:
                    if (p == 4)
                        s.ref_twist = bs[k];
                    break;
                }
            }
            compare_instance(ks, &bo, i, q, q0, v0, bs, &s, &built);
        }
    }
    printf("# %d instances x 100 configurations; %d with ref_twist a turn away\n", es->n, wrapped);
    check(&tally, fd_g < 1e-7 && fd_h < 1e-7,
          "reference: jets match central differences of the C energy (gradient %.2e, Hessian %.2e, tol 1e-7)", fd_g,
          fd_h);
    check(&tally, own.value < 1e-12, "bend_twist value equals the C energy (worst relative %.2e, tol 1e-12)", own.value);
    check(&tally, own.grad < 1e-12, "bend_twist gradient equals the C gradient (worst %.2e relative to the largest entry, tol 1e-12)",
          own.grad);
    check(&tally, own.hess < 1e-12, "bend_twist Hessian equals the C Hessian (worst %.2e relative to the largest entry, tol 1e-12)",
          own.hess);
    check(&tally, built.value < 1e-12 && built.grad < 1e-12 && built.hess < 1e-12,
          "with batch.c's initial state: value %.2e, gradient %.2e, Hessian %.2e (tol 1e-12)", built.value, built.grad,
          built.hess);

    free(q);
    free(q0);
    free(v0);
    free(d1);
    free(state);
    srd_batch_free(&bo);
    srd_system_free(&sys);
    kernels_free(&mk);
    srd_model_free(m);
    arena_free(&arena);
    diag_reset();
    printf("%d passed, %d failed\n", tally.run - tally.failed, tally.failed);
    return tally.failed != 0;
}
