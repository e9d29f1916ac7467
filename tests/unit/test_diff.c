/* test_diff.c — unit tests of symbolic differentiation (diff.c): every op's derivative against finite differences, Hessian symmetry, and gradients and Hessians of real element energies. */
#include "diff.h"
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Finite-difference checks (all central differences):
 *   step          h_j = 1e-6 * (1 + |x_j|)
 *   gradient      |g_j - fd_j| <= 1e-6 * (max(|g_j|, |fd_j|) + 1e-2 |g|_inf + 1e-3 (1 + |f|))
 *   Hessian       |H_ij - fd_ij| <= 1e-6 * (max(|H_ij|, |fd_ij|) + 1e-2 |H|_inf + 1e-3 (1 + |g|_inf)),
 *                 fd_ij from central differences of the symbolic gradient
 * The floors cover entries that are zero or tiny next to the others, where a central difference
 * only resolves eps * |f| / h ~ 1e-10 |f|. Points are drawn at least 1e-3 away from every kink. */
static const double FD_REL = 1e-6;
static const double PI = 3.14159265358979323846;

#include "rng.h"
#include "tap.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static double max_abs(const double *v, int n)
{
    double m = 0;
    for (int i = 0; i < n; i++)
        m = fmax(m, fabs(v[i]));
    return m;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        abort();
    return p;
}

/* ------------------------------------------------------------------------------------------ */
/* vector helpers over the DAG builders                                                        */

typedef struct V3 {
    ExprId x, y, z;
} V3;

static V3 v_input(ExprDag *d, int slot) { return (V3){ dag_input(d, slot), dag_input(d, slot + 1), dag_input(d, slot + 2) }; }
static V3 v_sub(ExprDag *d, V3 a, V3 b) { return (V3){ dag_sub(d, a.x, b.x), dag_sub(d, a.y, b.y), dag_sub(d, a.z, b.z) }; }
static ExprId v_dot(ExprDag *d, V3 a, V3 b)
{
    return dag_add(d, dag_add(d, dag_mul(d, a.x, b.x), dag_mul(d, a.y, b.y)), dag_mul(d, a.z, b.z));
}
static V3 v_cross(ExprDag *d, V3 a, V3 b)
{
    return (V3){ dag_sub(d, dag_mul(d, a.y, b.z), dag_mul(d, a.z, b.y)), dag_sub(d, dag_mul(d, a.z, b.x), dag_mul(d, a.x, b.z)),
                 dag_sub(d, dag_mul(d, a.x, b.y), dag_mul(d, a.y, b.x)) };
}
static ExprId v_norm(ExprDag *d, V3 a) { return dag_unary(d, XO_SQRT, v_dot(d, a, a)); }
static ExprId k(ExprDag *d, double v) { return dag_const(d, v); }

/* ------------------------------------------------------------------------------------------ */
/* the generic check: symbolic gradient and Hessian against central differences                */

typedef struct Problem {
    const char *name;
    ExprDag    *d;
    ExprId      f;
    ExprId      kink;  /* |kink| is the distance to the nearest kink or branch cut; -1 if none */
    int         n_wrt; /* DOFs are input slots 0..n_wrt-1 */
    int         n_inputs;
    void (*sample)(Rng *r, double *in, int n_inputs); /* a random configuration */
} Problem;

typedef struct Derivs {
    int     n;
    ExprId *grad, *hess; /* symbolic; hess packed upper */
    double *g, *h;       /* values at the current point */
} Derivs;

static Derivs derivs_build(ExprDag *d, ExprId f, int n)
{
    Derivs r = { .n = n };
    r.grad = xmalloc((size_t)n * sizeof *r.grad);
    r.hess = xmalloc((size_t)(n * (n + 1) / 2) * sizeof *r.hess);
    r.g = xmalloc((size_t)n * sizeof *r.g);
    r.h = xmalloc((size_t)(n * (n + 1) / 2) * sizeof *r.h);
    int *wrt = xmalloc((size_t)n * sizeof *wrt);
    for (int i = 0; i < n; i++)
        wrt[i] = i;
    diff_hessian(d, f, wrt, n, r.grad, r.hess);
    free(wrt);
    return r;
}

static void derivs_free(Derivs *r)
{
    free(r->grad);
    free(r->hess);
    free(r->g);
    free(r->h);
}

static void derivs_eval(const ExprDag *d, Derivs *r, const double *in)
{
    dag_eval_many(d, r->grad, r->n, in, r->g);
    dag_eval_many(d, r->hess, r->n * (r->n + 1) / 2, in, r->h);
}

static double fd_step(double x) { return 1e-6 * (1 + fabs(x)); }

/* Worst error over the tolerance (<= 1 passes) of the gradient and the Hessian at one point. */
static void fd_compare(const Problem *p, Derivs *r, const double *in, double *worst_g, double *worst_h)
{
    int n = p->n_wrt;
    double *x = xmalloc((size_t)p->n_inputs * sizeof *x);
    double *gp = xmalloc((size_t)n * sizeof *gp), *gm = xmalloc((size_t)n * sizeof *gm);
    memcpy(x, in, (size_t)p->n_inputs * sizeof *x);
    derivs_eval(p->d, r, in);
    double f = dag_eval(p->d, p->f, in);
    double gnorm = max_abs(r->g, n), hnorm = max_abs(r->h, n * (n + 1) / 2);
    for (int j = 0; j < n; j++) {
        double h = fd_step(in[j]);
        x[j] = in[j] + h;
        double fp = dag_eval(p->d, p->f, x);
        dag_eval_many(p->d, r->grad, n, x, gp);
        x[j] = in[j] - h;
        double fm = dag_eval(p->d, p->f, x);
        dag_eval_many(p->d, r->grad, n, x, gm);
        x[j] = in[j];
        double fd = (fp - fm) / (2 * h);
        double tol = FD_REL * (fmax(fabs(r->g[j]), fabs(fd)) + 1e-2 * gnorm + 1e-3 * (1 + fabs(f)));
        *worst_g = fmax(*worst_g, fabs(r->g[j] - fd) / tol);
        if (isnan(fd) || isnan(r->g[j]))
            *worst_g = INFINITY;
        for (int i = 0; i < n; i++) {
            double fdh = (gp[i] - gm[i]) / (2 * h);
            double hij = r->h[diff_upper_index(n, i, j)];
            double tolh = FD_REL * (fmax(fabs(hij), fabs(fdh)) + 1e-2 * hnorm + 1e-3 * (1 + gnorm));
            *worst_h = fmax(*worst_h, fabs(hij - fdh) / tolh);
            if (isnan(fdh) || isnan(hij))
                *worst_h = INFINITY;
        }
    }
    free(x);
    free(gp);
    free(gm);
}

/* Draws a configuration at least 1e-3 away from every kink of the problem. */
static void sample_smooth(const Problem *p, Rng *rng, double *in)
{
    for (int tries = 0; tries < 10000; tries++) {
        p->sample(rng, in, p->n_inputs);
        if (p->kink < 0 || fabs(dag_eval(p->d, p->kink, in)) >= 1e-3)
            return;
    }
}

static void check_problem(Tally *t, const Problem *p, int configs, uint64_t seed)
{
    Derivs r = derivs_build(p->d, p->f, p->n_wrt);
    Rng rng = { seed };
    double *in = xmalloc((size_t)p->n_inputs * sizeof *in);
    double worst_g = 0, worst_h = 0;
    for (int c = 0; c < configs; c++) {
        sample_smooth(p, &rng, in);
        fd_compare(p, &r, in, &worst_g, &worst_h);
    }
    check(t, worst_g <= 1, "%s: gradient = central differences at %d points (worst %.2g of tolerance)", p->name, configs,
          worst_g);
    check(t, worst_h <= 1, "%s: Hessian = central differences of the gradient at %d points (worst %.2g of tolerance)",
          p->name, configs, worst_h);
    free(in);
    derivs_free(&r);
}

/* ------------------------------------------------------------------------------------------ */
/* every op: f = op(u, v) with smooth inner functions u, v of three inputs                     */

static void sample_cube(Rng *r, double *in, int n)
{
    for (int i = 0; i < n; i++)
        in[i] = rng_uniform(r, -1, 1);
}

typedef ExprId (*OpBuilder)(ExprDag *d, ExprId u, ExprId v, ExprId *kink);

/* u in [-0.9, 0.9], v in [0.9, 2.1]: the domains of every op below. */
static ExprId op_add(ExprDag *d, ExprId u, ExprId v, ExprId *kink) { (void)kink; return dag_add(d, u, v); }
static ExprId op_sub(ExprDag *d, ExprId u, ExprId v, ExprId *kink) { (void)kink; return dag_sub(d, u, v); }
static ExprId op_mul(ExprDag *d, ExprId u, ExprId v, ExprId *kink) { (void)kink; return dag_mul(d, u, v); }
static ExprId op_div(ExprDag *d, ExprId u, ExprId v, ExprId *kink) { (void)kink; return dag_div(d, u, v); }
static ExprId op_neg(ExprDag *d, ExprId u, ExprId v, ExprId *kink) { (void)kink; return dag_mul(d, dag_neg(d, u), v); }
static ExprId op_powi(ExprDag *d, ExprId u, ExprId v, ExprId *kink) { (void)kink; return dag_add(d, dag_powi(d, u, 3), dag_powi(d, v, 5)); }
static ExprId op_powi_neg(ExprDag *d, ExprId u, ExprId v, ExprId *kink) { (void)kink; return dag_mul(d, u, dag_powi(d, v, -3)); }
static ExprId op_pow(ExprDag *d, ExprId u, ExprId v, ExprId *kink) { (void)kink; return dag_pow(d, v, u); }
static ExprId op_pow_const(ExprDag *d, ExprId u, ExprId v, ExprId *kink) { (void)kink; return dag_mul(d, u, dag_pow(d, v, k(d, 2.5))); }
static ExprId op_sqrt(ExprDag *d, ExprId u, ExprId v, ExprId *kink) { (void)u; (void)kink; return dag_unary(d, XO_SQRT, v); }
static ExprId op_exp(ExprDag *d, ExprId u, ExprId v, ExprId *kink) { (void)v; (void)kink; return dag_unary(d, XO_EXP, u); }
static ExprId op_log(ExprDag *d, ExprId u, ExprId v, ExprId *kink) { (void)u; (void)kink; return dag_unary(d, XO_LOG, v); }
static ExprId op_sin(ExprDag *d, ExprId u, ExprId v, ExprId *kink) { (void)v; (void)kink; return dag_unary(d, XO_SIN, dag_mul(d, k(d, 3), u)); }
static ExprId op_cos(ExprDag *d, ExprId u, ExprId v, ExprId *kink) { (void)v; (void)kink; return dag_unary(d, XO_COS, dag_mul(d, k(d, 3), u)); }
static ExprId op_tan(ExprDag *d, ExprId u, ExprId v, ExprId *kink) { (void)v; (void)kink; return dag_unary(d, XO_TAN, u); }
static ExprId op_asin(ExprDag *d, ExprId u, ExprId v, ExprId *kink) { (void)v; (void)kink; return dag_unary(d, XO_ASIN, u); }
static ExprId op_acos(ExprDag *d, ExprId u, ExprId v, ExprId *kink) { (void)v; (void)kink; return dag_unary(d, XO_ACOS, u); }
static ExprId op_atan(ExprDag *d, ExprId u, ExprId v, ExprId *kink) { (void)v; (void)kink; return dag_unary(d, XO_ATAN, dag_mul(d, k(d, 3), u)); }
static ExprId op_tanh(ExprDag *d, ExprId u, ExprId v, ExprId *kink) { (void)v; (void)kink; return dag_unary(d, XO_TANH, dag_mul(d, k(d, 2), u)); }
static ExprId op_abs(ExprDag *d, ExprId u, ExprId v, ExprId *kink)
{
    *kink = u;
    return dag_mul(d, dag_unary(d, XO_ABS, u), v);
}
static ExprId op_atan2(ExprDag *d, ExprId u, ExprId v, ExprId *kink) { (void)kink; return dag_binary(d, XO_ATAN2, u, v); }
static ExprId op_atan2_swapped(ExprDag *d, ExprId u, ExprId v, ExprId *kink)
{
    *kink = v; /* atan2(v, u) with v > 0: the branch cut is on the negative y axis, far away */
    return dag_binary(d, XO_ATAN2, v, u);
}
static ExprId op_min(ExprDag *d, ExprId u, ExprId v, ExprId *kink)
{
    ExprId w = dag_sub(d, v, k(d, 1.5));
    *kink = dag_sub(d, u, w);
    return dag_binary(d, XO_MIN, dag_mul(d, u, v), dag_mul(d, w, v));
}
static ExprId op_max(ExprDag *d, ExprId u, ExprId v, ExprId *kink)
{
    ExprId w = dag_sub(d, v, k(d, 1.5));
    *kink = dag_sub(d, u, w);
    return dag_binary(d, XO_MAX, dag_mul(d, u, v), dag_mul(d, w, v));
}
static ExprId op_select(ExprDag *d, ExprId u, ExprId v, ExprId *kink)
{
    *kink = u;
    return dag_select(d, dag_binary(d, XO_LT, u, k(d, 0)), dag_mul(d, dag_powi(d, u, 2), v), dag_unary(d, XO_SIN, dag_mul(d, u, v)));
}
/* Comparisons, logic and floor have zero derivatives: they may only add a piecewise constant. */
static ExprId op_logic(ExprDag *d, ExprId u, ExprId v, ExprId *kink)
{
    ExprId lt = dag_binary(d, XO_LT, u, k(d, 0)), le = dag_binary(d, XO_LE, v, k(d, 1.5));
    ExprId eq = dag_binary(d, XO_EQ, u, v), ne = dag_binary(d, XO_NE, u, k(d, 0.25));
    ExprId logic = dag_add(d, dag_binary(d, XO_AND, lt, le), dag_binary(d, XO_OR, eq, dag_unary(d, XO_NOT, ne)));
    *kink = dag_mul(d, u, dag_mul(d, dag_sub(d, v, k(d, 1.5)), dag_sub(d, u, k(d, 0.25))));
    return dag_add(d, dag_mul(d, u, v), dag_mul(d, logic, dag_powi(d, v, 2)));
}
static ExprId op_floor(ExprDag *d, ExprId u, ExprId v, ExprId *kink)
{
    ExprId s = dag_mul(d, k(d, 3), u);
    ExprId fl = dag_unary(d, XO_FLOOR, s);
    *kink = dag_sub(d, s, dag_unary(d, XO_FLOOR, dag_add(d, s, k(d, 0.5)))); /* distance to the nearest integer */
    return dag_add(d, dag_mul(d, fl, v), u);
}

static void test_every_op(Tally *t)
{
    static const struct {
        const char *name;
        OpBuilder   build;
    } ops[] = {
        { "add", op_add },       { "sub", op_sub },     { "mul", op_mul },          { "div", op_div },
        { "neg", op_neg },       { "powi", op_powi },   { "powi<0", op_powi_neg },  { "pow", op_pow },
        { "pow(v,2.5)", op_pow_const }, { "sqrt", op_sqrt }, { "exp", op_exp },    { "log", op_log },
        { "sin", op_sin },       { "cos", op_cos },     { "tan", op_tan },          { "asin", op_asin },
        { "acos", op_acos },     { "atan", op_atan },   { "tanh", op_tanh },        { "abs", op_abs },
        { "atan2", op_atan2 },   { "atan2 swapped", op_atan2_swapped }, { "min", op_min }, { "max", op_max },
        { "select", op_select }, { "comparisons and logic", op_logic }, { "floor", op_floor },
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        ExprDag *d = dag_new();
        ExprId x0 = dag_input(d, 0), x1 = dag_input(d, 1), x2 = dag_input(d, 2);
        ExprId u = dag_add(d, dag_mul(d, k(d, 0.6), x0), dag_mul(d, k(d, 0.3), dag_mul(d, x1, x2)));
        ExprId v = dag_add(d, k(d, 1.5), dag_add(d, dag_mul(d, k(d, 0.4), dag_unary(d, XO_SIN, x1)),
                                                  dag_mul(d, k(d, 0.2), dag_mul(d, x0, x2))));
        ExprId kink = -1;
        ExprId f = ops[i].build(d, u, v, &kink);
        char name[64];
        snprintf(name, sizeof name, "op %s", ops[i].name);
        Problem p = { name, d, f, kink, 3, 3, sample_cube };
        check_problem(t, &p, 200, 0x1234 + i);
        dag_free(d);
    }
}

/* d/dx op(x) against the closed form, for the elementary functions of one argument. */
static void test_closed_forms(Tally *t)
{
    static const struct {
        ExprOp op;
        double lo, hi;
    } fns[] = {
        { XO_SQRT, 0.1, 3 }, { XO_EXP, -2, 2 },  { XO_LOG, 0.1, 3 },    { XO_SIN, -3, 3 },     { XO_COS, -3, 3 },
        { XO_TAN, -1.2, 1.2 }, { XO_ASIN, -0.9, 0.9 }, { XO_ACOS, -0.9, 0.9 }, { XO_ATAN, -3, 3 }, { XO_TANH, -3, 3 },
        { XO_ABS, -3, 3 },
    };
    Rng r = { 77 };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        ExprDag *d = dag_new();
        int wrt = 0;
        ExprId f = dag_unary(d, fns[i].op, dag_input(d, 0)), g;
        diff_gradient(d, f, &wrt, 1, &g);
        double worst = 0;
        for (int s = 0; s < 100; s++) {
            double x = rng_uniform(&r, fns[i].lo, fns[i].hi), want = 0;
            switch (fns[i].op) {
            case XO_SQRT: want = 0.5 / sqrt(x); break;
            case XO_EXP: want = exp(x); break;
            case XO_LOG: want = 1 / x; break;
            case XO_SIN: want = cos(x); break;
            case XO_COS: want = -sin(x); break;
            case XO_TAN: want = 1 / (cos(x) * cos(x)); break;
            case XO_ASIN: want = 1 / sqrt(1 - x * x); break;
            case XO_ACOS: want = -1 / sqrt(1 - x * x); break;
            case XO_ATAN: want = 1 / (1 + x * x); break;
            case XO_TANH: want = 1 / (cosh(x) * cosh(x)); break;
            default: want = x < 0 ? -1 : 1; break;
            }
            worst = fmax(worst, fabs(dag_eval(d, g, &x) - want) / fmax(fabs(want), 1e-300));
        }
        char buf[128];
        dag_print(d, g, buf, sizeof buf);
        check(t, worst <= 1e-13, "d/dx of a single op = closed form to 1e-13 relative: %s (worst %.2g)", buf, worst);
        dag_free(d);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* structural properties                                                                       */

static void test_structure(Tally *t)
{
    ExprDag *d = dag_new();
    ExprId x = dag_input(d, 0), y = dag_input(d, 1), z = dag_input(d, 2);
    int wx = 0, wxy[] = { 0, 1 };
    ExprId g[4];

    diff_gradient(d, dag_powi(d, x, 3), &wx, 1, g);
    check(t, g[0] == dag_mul(d, k(d, 3), dag_powi(d, x, 2)), "d/dx x^3 is the node 3*x^2");
    diff_gradient(d, dag_unary(d, XO_SIN, x), &wx, 1, g);
    check(t, g[0] == dag_unary(d, XO_COS, x), "d/dx sin(x) is the node cos(x)");
    ExprId ex = dag_unary(d, XO_EXP, x);
    diff_gradient(d, ex, &wx, 1, g);
    check(t, g[0] == ex, "d/dx exp(x) is the node exp(x) itself");
    ExprId s = dag_add(d, x, y);
    diff_gradient(d, dag_powi(d, s, 2), wxy, 2, g);
    check(t, g[0] == g[1] && g[0] == dag_mul(d, k(d, 2), s), "d/dx (x+y)^2 = d/dy (x+y)^2 = 2*(x+y), one node");
    diff_gradient(d, dag_mul(d, x, y), &wx, 1, g);
    check(t, g[0] == y, "inputs not in wrt are constants: d/dx (x*y) = y");

    /* Nothing that does not depend on a wrt input gets adjoint work. */
    ExprId heavy = y;
    for (int i = 0; i < 200; i++)
        heavy = dag_add(d, dag_unary(d, XO_SIN, dag_mul(d, heavy, z)), dag_unary(d, XO_COS, heavy));
    ExprId f = dag_mul(d, x, heavy);
    int before = dag_size(d);
    diff_gradient(d, f, &wx, 1, g);
    check(t, g[0] == heavy && dag_size(d) - before <= 1,
          "d/dx (x*H(y,z)) is the node H, and the sweep adds %d nodes for H's 600 ops", dag_size(d) - before);

    int slots[] = { 1, 5, 0, 1 };
    diff_gradient(d, dag_mul(d, dag_powi(d, x, 2), y), slots, 4, g);
    check(t, g[0] == g[3] && g[0] == dag_powi(d, x, 2) && g[1] == k(d, 0) && g[2] == dag_mul(d, k(d, 2), dag_mul(d, x, y)),
          "a slot listed twice gets its derivative twice; an unused slot gets 0");
    diff_gradient(d, dag_binary(d, XO_LT, x, y), wxy, 2, g);
    check(t, g[0] == k(d, 0) && g[1] == k(d, 0), "comparisons have zero derivative");
    diff_gradient(d, -1, wxy, 2, g);
    check(t, g[0] == -1 && g[1] == -1, "differentiating no node gives no nodes");

    /* The Hessian's upper triangle is the same nodes a full Jacobian of the gradient has there. */
    int w3[] = { 0, 1, 2 };
    ExprId e = dag_mul(d, dag_unary(d, XO_SIN, dag_mul(d, x, y)), dag_unary(d, XO_EXP, dag_mul(d, y, z)));
    ExprId grad[3], hess[6], jac[9];
    diff_hessian(d, e, w3, 3, grad, hess);
    diff_jacobian(d, grad, 3, w3, 3, jac);
    bool same = true, symmetric = true;
    double in[] = { 0.3, -0.7, 0.4 }, jv[9];
    dag_eval_many(d, jac, 9, in, jv);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            if (j >= i)
                same = same && hess[diff_upper_index(3, i, j)] == jac[i * 3 + j];
            symmetric = symmetric && fabs(jv[i * 3 + j] - jv[j * 3 + i]) <= 1e-14 * fmax(1, fabs(jv[i * 3 + j]));
        }
    check(t, same, "Hessian upper triangle = the Jacobian of the gradient there, node for node");
    check(t, symmetric, "the full Jacobian of the gradient is symmetric (1e-14)");
    ExprId hg[3], hh[6];
    diff_hessian(d, e, w3, 3, hg, hh);
    diff_hessian(d, e, w3, 3, NULL, hh);
    check(t, memcmp(hg, grad, sizeof hg) == 0 && memcmp(hh, hess, sizeof hh) == 0,
          "differentiating again finds the same nodes (deterministic, hash-consed)");
    check(t, diff_upper_index(4, 0, 0) == 0 && diff_upper_index(4, 0, 3) == 3 && diff_upper_index(4, 1, 1) == 4 &&
                 diff_upper_index(4, 3, 1) == 6 && diff_upper_index(4, 3, 3) == 9,
          "packed upper-triangle indexing");
    dag_free(d);
}

/* A Jacobian of m general functions against central differences. */
static void test_jacobian(Tally *t)
{
    ExprDag *d = dag_new();
    ExprId x = dag_input(d, 0), y = dag_input(d, 1), z = dag_input(d, 2);
    ExprId f[4] = {
        dag_mul(d, x, y),
        dag_add(d, dag_unary(d, XO_SIN, x), dag_powi(d, z, 3)),
        dag_binary(d, XO_ATAN2, y, dag_add(d, k(d, 2), z)),
        dag_div(d, dag_unary(d, XO_EXP, z), dag_add(d, k(d, 1.5), dag_unary(d, XO_COS, y))),
    };
    int wrt[] = { 0, 1, 2 };
    ExprId jac[12];
    diff_jacobian(d, f, 4, wrt, 3, jac);
    Rng r = { 99 };
    double worst = 0;
    for (int s = 0; s < 100; s++) {
        double in[3], xp[3], xm[3], jv[12];
        sample_cube(&r, in, 3);
        dag_eval_many(d, jac, 12, in, jv);
        for (int j = 0; j < 3; j++) {
            memcpy(xp, in, sizeof in);
            memcpy(xm, in, sizeof in);
            double h = fd_step(in[j]);
            xp[j] += h;
            xm[j] -= h;
            for (int i = 0; i < 4; i++) {
                double fd = (dag_eval(d, f[i], xp) - dag_eval(d, f[i], xm)) / (2 * h);
                worst = fmax(worst, fabs(jv[i * 3 + j] - fd) / (FD_REL * (fmax(fabs(fd), fabs(jv[i * 3 + j])) + 1e-9)));
            }
        }
    }
    check(t, worst <= 1, "Jacobian of 4 functions = central differences at 100 points (worst %.2g of tolerance)", worst);
    dag_free(d);
}

/* ------------------------------------------------------------------------------------------ */
/* element energies                                                                            */

/* (1) discrete-rod stretching: slots 0..5 the two nodes, 6 ks, 7 rest length. */
static ExprId stretch_energy(ExprDag *d, int node0, int node1, ExprId ks, ExprId l)
{
    ExprId len = v_norm(d, v_sub(d, v_input(d, node1), v_input(d, node0)));
    ExprId strain = dag_sub(d, dag_div(d, len, l), k(d, 1));
    return dag_mul(d, dag_mul(d, k(d, 0.5), ks), dag_mul(d, dag_powi(d, strain, 2), l));
}

static void sample_stretch(Rng *r, double *in, int n)
{
    (void)n;
    double dir[3], len = 0;
    do {
        for (int i = 0; i < 3; i++)
            dir[i] = rng_uniform(r, -1, 1);
        len = sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
    } while (len < 0.2 || len > 1);
    double target = rng_uniform(r, 0.5, 2);
    for (int i = 0; i < 3; i++) {
        in[i] = rng_uniform(r, -1, 1);
        in[3 + i] = in[i] + dir[i] / len * target;
    }
    in[6] = rng_uniform(r, 1, 10);    /* ks */
    in[7] = rng_uniform(r, 0.5, 1.5); /* rest length */
}

/* The same energy's gradient and Hessian written out by hand. */
static void stretch_by_hand(const double *in, double *g, double *hfull)
{
    double e[3], u[3], ks = in[6], l = in[7];
    for (int i = 0; i < 3; i++)
        e[i] = in[3 + i] - in[i];
    double len = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
    for (int i = 0; i < 3; i++)
        u[i] = e[i] / len;
    double dEdL = ks * (len / l - 1);
    double kb[3][3];
    for (int i = 0; i < 3; i++) {
        g[3 + i] = dEdL * u[i];
        g[i] = -g[3 + i];
        for (int j = 0; j < 3; j++)
            kb[i][j] = ks / l * u[i] * u[j] + dEdL * ((i == j) - u[i] * u[j]) / len;
    }
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            hfull[i * 6 + j] = ((i < 3) == (j < 3) ? 1 : -1) * kb[i % 3][j % 3];
}

static void test_stretch_by_hand(Tally *t, ExprDag *d, ExprId f)
{
    Derivs r = derivs_build(d, f, 6);
    Rng rng = { 4242 };
    double worst_g = 0, worst_h = 0, in[8], g[6], h[36];
    for (int c = 0; c < 200; c++) {
        sample_stretch(&rng, in, 8);
        derivs_eval(d, &r, in);
        stretch_by_hand(in, g, h);
        double gn = max_abs(g, 6), hn = max_abs(h, 36);
        for (int i = 0; i < 6; i++) {
            worst_g = fmax(worst_g, fabs(r.g[i] - g[i]) / fmax(fabs(g[i]), 1e-3 * gn));
            for (int j = i; j < 6; j++)
                worst_h = fmax(worst_h, fabs(r.h[diff_upper_index(6, i, j)] - h[i * 6 + j]) / fmax(fabs(h[i * 6 + j]), 1e-3 * hn));
        }
    }
    check(t, worst_g <= 1e-12, "stretch: gradient = hand-written C to 1e-12 relative at 200 points (worst %.2g)", worst_g);
    check(t, worst_h <= 1e-12, "stretch: Hessian = hand-written C to 1e-12 relative at 200 points (worst %.2g)", worst_h);
    derivs_free(&r);
}

/* (2) hinge bending: slots 0..11 nodes x0..x3 (hinge edge x1-x2), 12 kb, 13 phi0. */
static ExprId hinge_angle(ExprDag *d, int first_slot)
{
    V3 x0 = v_input(d, first_slot), x1 = v_input(d, first_slot + 3), x2 = v_input(d, first_slot + 6),
       x3 = v_input(d, first_slot + 9);
    V3 e = v_sub(d, x2, x1);
    V3 n0 = v_cross(d, v_sub(d, x1, x0), v_sub(d, x2, x0)); /* triangle x0 x1 x2 */
    V3 n1 = v_cross(d, v_sub(d, x2, x3), v_sub(d, x1, x3)); /* triangle x3 x2 x1 */
    ExprId sin_part = dag_div(d, v_dot(d, v_cross(d, n0, n1), e), v_norm(d, e));
    return dag_binary(d, XO_ATAN2, sin_part, v_dot(d, n0, n1));
}

static ExprId hinge_energy(ExprDag *d, ExprId *kink)
{
    ExprId phi = hinge_angle(d, 0);
    ExprId dphi = dag_sub(d, phi, dag_input(d, 13));
    /* The branch cut of atan2 (phi = +-pi) is the only place the energy is not smooth. */
    *kink = dag_sub(d, k(d, PI), dag_unary(d, XO_ABS, phi));
    return dag_mul(d, dag_mul(d, k(d, 0.5), dag_input(d, 12)), dag_powi(d, dphi, 2));
}

static void sample_hinge(Rng *r, double *in, int n)
{
    (void)n;
    double theta = rng_uniform(r, -2.2, 2.2); /* fold angle */
    double base[12] = { rng_uniform(r, 0.2, 0.8), rng_uniform(r, -1.2, -0.5), 0, 0, 0, 0, 1, 0, 0, 0, 0, 0 };
    double b1 = rng_uniform(r, 0.5, 1.2);
    base[9] = rng_uniform(r, 0.2, 0.8);
    base[10] = b1 * cos(theta);
    base[11] = b1 * sin(theta);
    double shift[3] = { rng_uniform(r, -1, 1), rng_uniform(r, -1, 1), rng_uniform(r, -1, 1) };
    for (int i = 0; i < 12; i++)
        in[i] = base[i] + shift[i % 3] + rng_uniform(r, -0.08, 0.08);
    in[12] = rng_uniform(r, 0.5, 2);    /* kb */
    in[13] = rng_uniform(r, -0.5, 0.5); /* phi0 */
}

/* (3) smooth ground contact: slots 0..2 the point, 3 kc, 4 sharpness K; plane n.x = 0.1. */
static ExprId contact_energy(ExprDag *d)
{
    V3 x = v_input(d, 0);
    double nx = 0.2, ny = -0.1, nz = 1, nn = sqrt(nx * nx + ny * ny + nz * nz);
    V3 n = { k(d, nx / nn), k(d, ny / nn), k(d, nz / nn) };
    ExprId dist = dag_sub(d, v_dot(d, n, x), k(d, 0.1));
    ExprId K = dag_input(d, 4);
    ExprId soft = dag_div(d, dag_unary(d, XO_LOG, dag_add(d, k(d, 1), dag_unary(d, XO_EXP, dag_mul(d, dag_neg(d, K), dist)))), K);
    return dag_mul(d, dag_input(d, 3), dag_powi(d, soft, 2));
}

static void sample_contact(Rng *r, double *in, int n)
{
    (void)n;
    double nx = 0.2, ny = -0.1, nz = 1, nn = sqrt(nx * nx + ny * ny + nz * nz);
    in[0] = rng_uniform(r, -1, 1);
    in[1] = rng_uniform(r, -1, 1);
    double dist = rng_uniform(r, -0.05, 0.08);
    in[2] = ((dist + 0.1) * nn - nx * in[0] - ny * in[1]) / nz; /* puts the point at that distance */
    in[3] = rng_uniform(r, 1e2, 1e4); /* kc */
    in[4] = rng_uniform(r, 20, 100);  /* K */
}

/* (4) piecewise spring: stiffer in tension, with hard stops beyond smax and -smin. */
static ExprId piecewise_energy(ExprDag *d, ExprId *kink)
{
    ExprId len = v_norm(d, v_sub(d, v_input(d, 3), v_input(d, 0)));
    ExprId s = dag_sub(d, len, dag_input(d, 6));
    ExprId smax = k(d, 0.3), smin = k(d, 0.2);
    ExprId s2 = dag_powi(d, s, 2);
    ExprId spring = dag_select(d, dag_binary(d, XO_LT, k(d, 0), s), dag_mul(d, k(d, 1.5), s2), dag_mul(d, k(d, 0.25), s2));
    ExprId over = dag_powi(d, dag_binary(d, XO_MAX, dag_sub(d, s, smax), k(d, 0)), 3);
    ExprId under = dag_powi(d, dag_binary(d, XO_MIN, dag_add(d, s, smin), k(d, 0)), 2);
    *kink = dag_binary(d, XO_MIN, dag_unary(d, XO_ABS, s),
                       dag_binary(d, XO_MIN, dag_unary(d, XO_ABS, dag_sub(d, s, smax)), dag_unary(d, XO_ABS, dag_add(d, s, smin))));
    return dag_add(d, spring, dag_add(d, dag_mul(d, k(d, 20), over), dag_mul(d, k(d, 10), under)));
}

static void sample_piecewise(Rng *r, double *in, int n)
{
    (void)n;
    in[6] = rng_uniform(r, 0.8, 1.2); /* rest length */
    double len = in[6] + rng_uniform(r, -0.5, 0.6), dir[3], norm;
    do {
        for (int i = 0; i < 3; i++)
            dir[i] = rng_uniform(r, -1, 1);
        norm = sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
    } while (norm < 0.2 || norm > 1);
    for (int i = 0; i < 3; i++) {
        in[i] = rng_uniform(r, -1, 1);
        in[3 + i] = in[i] + dir[i] / norm * len;
    }
}

/* (5) trigonometry and friends over six inputs. */
static ExprId trig_energy(ExprDag *d, ExprId *kink)
{
    ExprId x[6];
    for (int i = 0; i < 6; i++)
        x[i] = dag_input(d, i);
    ExprId terms[] = {
        dag_mul(d, dag_unary(d, XO_SIN, dag_mul(d, x[0], x[1])), dag_unary(d, XO_COS, x[2])),
        dag_unary(d, XO_TAN, dag_mul(d, k(d, 0.3), x[3])),
        dag_unary(d, XO_ASIN, dag_mul(d, k(d, 0.5), dag_unary(d, XO_TANH, x[4]))),
        dag_unary(d, XO_ACOS, dag_mul(d, k(d, 0.4), dag_unary(d, XO_SIN, x[5]))),
        dag_powi(d, dag_unary(d, XO_ATAN, dag_sub(d, x[0], x[2])), 2),
        dag_mul(d, dag_unary(d, XO_EXP, dag_unary(d, XO_SIN, x[1])),
                dag_unary(d, XO_SQRT, dag_add(d, k(d, 2), dag_unary(d, XO_COS, dag_mul(d, x[3], x[4]))))),
        dag_pow(d, dag_add(d, k(d, 1.5), dag_unary(d, XO_SIN, x[5])), x[0]),
        dag_binary(d, XO_ATAN2, dag_add(d, x[1], k(d, 2)), dag_add(d, x[2], k(d, 3))),
        dag_unary(d, XO_LOG, dag_add(d, k(d, 2), dag_unary(d, XO_SIN, dag_add(d, x[0], x[5])))),
        dag_mul(d, dag_unary(d, XO_ABS, dag_sub(d, x[1], x[4])), dag_unary(d, XO_COS, x[3])),
        dag_div(d, dag_unary(d, XO_SIN, dag_mul(d, x[2], x[5])), dag_add(d, k(d, 2), dag_powi(d, x[4], 2))),
    };
    ExprId f = k(d, 0);
    for (size_t i = 0; i < sizeof terms / sizeof terms[0]; i++)
        f = dag_add(d, f, terms[i]);
    *kink = dag_sub(d, x[1], x[4]);
    return f;
}

/* (6) a 10-node discrete rod (30 DOFs): stretching of each edge and bending (kappa b)^2 at each
 * interior node. Slots 0..29 positions. */
static ExprId rod_energy(ExprDag *d, int nodes)
{
    ExprId f = k(d, 0), one = k(d, 1);
    for (int i = 0; i + 1 < nodes; i++)
        f = dag_add(d, f, stretch_energy(d, 3 * i, 3 * (i + 1), k(d, 50), one));
    for (int i = 1; i + 1 < nodes; i++) {
        V3 e0 = v_sub(d, v_input(d, 3 * i), v_input(d, 3 * (i - 1))), e1 = v_sub(d, v_input(d, 3 * (i + 1)), v_input(d, 3 * i));
        V3 c = v_cross(d, e0, e1);
        ExprId denom = dag_add(d, dag_mul(d, v_norm(d, e0), v_norm(d, e1)), v_dot(d, e0, e1));
        ExprId kb2 = dag_div(d, dag_mul(d, k(d, 4), v_dot(d, c, c)), dag_powi(d, denom, 2));
        f = dag_add(d, f, dag_mul(d, k(d, 0.5 * 0.1), kb2));
    }
    return f;
}

static void sample_rod(Rng *r, double *in, int n)
{
    double p[3] = { 0, 0, 0 }, heading = 0, pitch = 0;
    for (int i = 0; i < n / 3; i++) {
        for (int c = 0; c < 3; c++)
            in[3 * i + c] = p[c] + rng_uniform(r, -0.02, 0.02);
        heading += rng_uniform(r, -0.6, 0.6);
        pitch += rng_uniform(r, -0.3, 0.3);
        double len = rng_uniform(r, 0.8, 1.2);
        p[0] += len * cos(heading) * cos(pitch);
        p[1] += len * sin(heading) * cos(pitch);
        p[2] += len * sin(pitch);
    }
}

static void report_counts(const char *name, ExprDag *d, ExprId f, int n)
{
    Derivs r = derivs_build(d, f, n);
    int nh = n * (n + 1) / 2;
    ExprId *all = xmalloc((size_t)(1 + n + nh) * sizeof *all);
    all[0] = f;
    memcpy(all + 1, r.grad, (size_t)n * sizeof *all);
    memcpy(all + 1 + n, r.hess, (size_t)nh * sizeof *all);
    printf("# op counts %s (%d DOFs): value %d, gradient %d, Hessian %d, value+gradient %d, all together %d\n", name, n,
           dag_count_ops(d, &f, 1), dag_count_ops(d, r.grad, n), dag_count_ops(d, r.hess, nh),
           dag_count_ops(d, all, 1 + n), dag_count_ops(d, all, 1 + n + nh));
    free(all);
    derivs_free(&r);
}

/* Both triangles of the hinge Hessian (the full Jacobian of the gradient) agree numerically. */
static void test_hinge_symmetry(Tally *t, ExprDag *d, ExprId f)
{
    int wrt[12];
    for (int i = 0; i < 12; i++)
        wrt[i] = i;
    ExprId grad[12], jac[144];
    diff_gradient(d, f, wrt, 12, grad);
    diff_jacobian(d, grad, 12, wrt, 12, jac);
    Rng r = { 11 };
    double in[14], jv[144], worst = 0;
    for (int c = 0; c < 100; c++) {
        sample_hinge(&r, in, 14);
        dag_eval_many(d, jac, 144, in, jv);
        double norm = max_abs(jv, 144);
        for (int i = 0; i < 12; i++)
            for (int j = i + 1; j < 12; j++)
                worst = fmax(worst, fabs(jv[i * 12 + j] - jv[j * 12 + i]) / norm);
    }
    check(t, worst <= 1e-12, "hinge: full Hessian symmetric to 1e-12 of its largest entry at 100 points (worst %.2g)",
          worst);
}

static void test_energies(Tally *t)
{
    ExprDag *d = dag_new();
    ExprId f = stretch_energy(d, 0, 3, dag_input(d, 6), dag_input(d, 7));
    Problem stretch = { "stretch energy (6 DOFs)", d, f, -1, 6, 8, sample_stretch };
    check_problem(t, &stretch, 200, 1);
    test_stretch_by_hand(t, d, f);
    report_counts("stretch", d, f, 6);
    dag_free(d);

    d = dag_new();
    ExprId kink;
    f = hinge_energy(d, &kink);
    Problem hinge = { "hinge bending energy (12 DOFs)", d, f, kink, 12, 14, sample_hinge };
    check_problem(t, &hinge, 200, 2);
    report_counts("hinge", d, f, 12);
    /* The angle itself against an independent computation in plain C. */
    Rng r = { 5 };
    double worst = 0, in[14];
    for (int c = 0; c < 100; c++) {
        sample_hinge(&r, in, 14);
        double e[3], a[3], b[3], n0[3], n1[3], m[3];
        for (int i = 0; i < 3; i++) {
            e[i] = in[6 + i] - in[3 + i];
            a[i] = in[3 + i] - in[i];
            b[i] = in[6 + i] - in[i];
        }
        n0[0] = a[1] * b[2] - a[2] * b[1], n0[1] = a[2] * b[0] - a[0] * b[2], n0[2] = a[0] * b[1] - a[1] * b[0];
        for (int i = 0; i < 3; i++) {
            a[i] = in[6 + i] - in[9 + i];
            b[i] = in[3 + i] - in[9 + i];
        }
        n1[0] = a[1] * b[2] - a[2] * b[1], n1[1] = a[2] * b[0] - a[0] * b[2], n1[2] = a[0] * b[1] - a[1] * b[0];
        m[0] = n0[1] * n1[2] - n0[2] * n1[1], m[1] = n0[2] * n1[0] - n0[0] * n1[2], m[2] = n0[0] * n1[1] - n0[1] * n1[0];
        double elen = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
        double phi = atan2((m[0] * e[0] + m[1] * e[1] + m[2] * e[2]) / elen, n0[0] * n1[0] + n0[1] * n1[1] + n0[2] * n1[2]);
        double want = 0.5 * in[12] * (phi - in[13]) * (phi - in[13]);
        worst = fmax(worst, fabs(dag_eval(d, f, in) - want) / fmax(want, 1e-12));
    }
    check(t, worst <= 1e-12, "hinge energy value = plain C (worst %.2g relative)", worst);
    test_hinge_symmetry(t, d, f);
    dag_free(d);

    d = dag_new();
    f = contact_energy(d);
    Problem contact = { "smooth contact penalty (3 DOFs)", d, f, -1, 3, 5, sample_contact };
    check_problem(t, &contact, 200, 3);
    dag_free(d);

    d = dag_new();
    f = piecewise_energy(d, &kink);
    Problem piecewise = { "piecewise spring with select/min/max (6 DOFs)", d, f, kink, 6, 7, sample_piecewise };
    check_problem(t, &piecewise, 200, 4);
    dag_free(d);

    d = dag_new();
    f = trig_energy(d, &kink);
    Problem trig = { "trig-heavy expression (6 DOFs)", d, f, kink, 6, 6, sample_cube };
    check_problem(t, &trig, 200, 5);
    dag_free(d);

    d = dag_new();
    f = rod_energy(d, 10);
    Problem rod = { "10-node rod, stretch + bending (30 DOFs)", d, f, -1, 30, 30, sample_rod };
    check_problem(t, &rod, 20, 6);
    report_counts("rod10", d, f, 30);
    dag_free(d);
}

/* ------------------------------------------------------------------------------------------ */
/* speed and depth                                                                             */

static void test_speed(Tally *t)
{
    enum { REPEAT = 20 };
    double t0 = now_ms();
    int size = 0;
    for (int i = 0; i < REPEAT; i++) {
        ExprDag *d = dag_new();
        ExprId kink;
        Derivs r = derivs_build(d, hinge_energy(d, &kink), 12);
        size = dag_size(d);
        derivs_free(&r);
        dag_free(d);
    }
    double hinge_ms = (now_ms() - t0) / REPEAT;
    check(t, hinge_ms < 100, "hinge (12 DOFs): energy + gradient + Hessian built in %.2f ms (%d nodes)", hinge_ms, size);

    t0 = now_ms();
    ExprDag *d = dag_new();
    Derivs r = derivs_build(d, rod_energy(d, 10), 30);
    double rod_ms = now_ms() - t0;
    check(t, rod_ms < 1000, "10-node rod (30 DOFs): energy + gradient + Hessian built in %.2f ms (%d nodes)", rod_ms,
          dag_size(d));
    derivs_free(&r);
    dag_free(d);
}

/* A chain far deeper than any C stack could recurse over, against forward-mode duals in C. */
static void test_deep_chain(Tally *t)
{
    enum { DEPTH = 100000 };
    ExprDag *d = dag_new();
    ExprId x = dag_input(d, 0), y = dag_input(d, 1), e = x;
    double in[] = { 0.4, 0.9 }, v = in[0], dvx = 1, dvy = 0;
    for (int i = 0; i < DEPTH; i++) {
        e = dag_add(d, dag_mul(d, dag_unary(d, XO_SIN, e), y), x);
        double s = sin(v), c = cos(v);
        dvx = c * dvx * in[1] + 1;
        dvy = c * dvy * in[1] + s;
        v = s * in[1] + in[0];
    }
    int wrt[] = { 0, 1 };
    ExprId g[2];
    double t0 = now_ms();
    diff_gradient(d, e, wrt, 2, g);
    double ms = now_ms() - t0;
    double gv[2];
    dag_eval_many(d, g, 2, in, gv);
    check(t, fabs(gv[0] - dvx) <= 1e-10 * fabs(dvx) && fabs(gv[1] - dvy) <= 1e-10 * fabs(dvy),
          "gradient of a %d-op chain = forward-mode duals (%.1f ms, %d nodes)", 3 * DEPTH, ms, dag_size(d));
    dag_free(d);
}

int main(void)
{
    Tally t = { 0, 0 };
    test_closed_forms(&t);
    test_structure(&t);
    test_jacobian(&t);
    test_every_op(&t);
    test_energies(&t);
    test_speed(&t);
    test_deep_chain(&t);
    printf("# %d tests, %d failed\n", t.run, t.failed);
    return t.failed ? 1 : 0;
}
