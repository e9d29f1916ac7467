/* test_kernels.c — the generated kernels of standard and user elements against central
 * finite differences on random configurations, energy Hessians for symmetry, the stretch
 * kernel against a plain C implementation, and the JIT against the AOT object file. */
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "batch.h"
#include "elab.h"
#include "kernels.h"
#include "parse.h"

static int failures, checks;

static void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(int ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s - ", ok ? "ok" : "not ok");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    checks++;
    failures += !ok;
}

/* Every kind of element the kernel compiler must handle, in one model with no fixed DOFs. */
static const char *model_text =
    "use std.springs;\n"
    "use std.contact;\n"
    "param stiff = 3 N/m;\n"
    "let w = 2 Hz;\n"
    "material m { E = 2 MPa; rho = 1200 kg/m^3; nu = 0.4; }\n"
    "rod arm { path = polyline((0, 0, 0) m, (0.05, 0.01, 0) m, (0.1, 0, 0.02) m); nodes = 7; radius = 1 mm; material = m; }\n"
    "shell plate { mesh = rectangle(3 cm, 2 cm, 1 cm, pattern = random, seed = 3, origin = (0, 0.1, 0) m);\n"
    "              thickness = 1 mm; material = m; }\n"
    "fn soft(u) = u / (1 + abs(u));\n"
    "energy piecewise(node a, node b; k, l0) {\n"
    "  let d = norm(b.x - a.x);\n"
    "  let stretch = max(d - l0, 0 m);\n"
    "  let squeeze = min(d - l0, 0 m);\n"
    "  return 0.5 * k * stretch^2 + (d < l0 ? 2 : 1) * k * squeeze^2 + k * l0 * abs(a.x.z - b.x.z);\n"
    "}\n"
    "energy trig(node a, node b, node c; k) {\n"
    "  let u = a.x - b.x;\n"
    "  let v = c.x - b.x;\n"
    "  let th = atan2(norm(cross(u, v)), dot(u, v));\n"
    "  return k * (sin(th)^2 + cos(2 * th) * exp(-norm(u) / 1 cm) + tanh(soft(norm(v) / 1 cm)) + sqrt(dot(u, u)) / 1 m);\n"
    "}\n"
    "energy twister(node a, edge e, node b; k) {\n"
    "  return 0.5 * k * (e.theta - 0.1)^2 * (1 + dot(b.x - a.x, b.x - a.x) / (1 cm)^2) + 0.5 * stiff * norm(b.x - a.x)^2;\n"
    "}\n"
    "force drag_like(node a, node b; c) = c * cross(b.x - a.x, (0, 0, 1)) / 1 m * (1 + sin(2*pi*w*t));\n"
    "force pull(node a; c) = c * (1, 2, 3) * norm(a.x - prev(a.x)) / 1 mm;\n"
    "apply spring(arm.node(1), plate.node(4); k = stiff, l0 = 5 cm);\n"
    "apply spring(arm.node(2), plate.node(5); k = 7 N/m, l0 = 4 cm);\n"
    "apply angle_spring(arm.node(2), arm.node(3), arm.node(4); k = 1e-3 N*m, theta0 = 0.3);\n"
    "apply piecewise(arm.node(0), arm.node(5); k = 20 N/m, l0 = 6 cm);\n"
    "apply piecewise(plate.node(0), plate.node(7); k = 10 N/m, l0 = 2 cm);\n"
    "apply trig(plate.node(1), plate.node(2), plate.node(6); k = 1e-4 N*m);\n"
    "apply twister(arm.node(2), arm.edge(2), arm.node(3); k = 1e-4 N*m);\n"
    "apply ground_contact(arm.node(4); kc = 100 N/m, delta = 5 mm, px = 0 m, py = 0 m, pz = 0.018 m, nx = 0, ny = 0, nz = 1);\n"
    "apply drag_like(arm.node(5), arm.node(6); c = 0.1 N);\n"
    "apply pull(plate.node(3); c = 1e-3 N);\n";

typedef struct Harness {
    const srd_model   *m;
    const KernelSet   *ks;
    int                set;
    srd_system         sys;
    srd_batch_owner    batch;
    double            *q, *q0, *v0, params[8];
    double             t, dt;
} Harness;

/* Energy, residual and Jacobian of one element set at the harness's state. */
static void evaluate(Harness *h, srd_kernel_fn fn, double *energy, double *grad, double *jac)
{
    int n = h->sys.n_free;
    *energy = 0;
    memset(grad, 0, sizeof(double) * (size_t)(n + 1));
    if (jac)
        memset(jac, 0, sizeof(double) * ((size_t)n * (size_t)n + 1));
    srd_eval_ctx ctx = { h->q, h->q0, h->v0, h->params, h->t, h->dt, energy, grad, jac };
    fn(&ctx, &h->batch.b);
}

static double uniform(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return ((*seed >> 8) & 0xFFFFFF) / (double)0x1000000;
}

/* Moves every DOF of the reference configuration by up to `amp` of the model's size. */
static void randomize(Harness *h, unsigned *seed, double amp)
{
    const srd_model *m = h->m;
    for (int d = 0; d < m->n_dofs; d++) {
        double base = m->dof_kind[d] <= SRD_DOF_NODE_Z ? m->x0[3 * m->dof_owner[d] + m->dof_kind[d]] : 0;
        h->q[d] = base + amp * (2 * uniform(seed) - 1);
        h->q0[d] = h->q[d] + amp * (2 * uniform(seed) - 1);
        h->v0[d] = 2 * uniform(seed) - 1;
    }
    h->t = uniform(seed);
}

static double max_abs(const double *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s = fmax(s, fabs(v[i]));
    return s;
}

/* Central differences of the energy (energies) and of the residual (all), compared with
 * the kernel's residual and Jacobian, relative to the largest entry. Configurations move
 * every DOF by up to 2 mm around the reference (the model is about 10 cm across). */
static void fd_check(Harness *h, srd_kernel_fn fn, unsigned seed, int configs, double *worst_g, double *worst_j,
                     double *worst_sym)
{
    int n = h->sys.n_free;
    double *g = malloc(sizeof(double) * (size_t)(n + 1)), *J = malloc(sizeof(double) * ((size_t)n * (size_t)n + 1));
    double *gp = malloc(sizeof(double) * (size_t)(n + 1)), *gfd = malloc(sizeof(double) * (size_t)(n + 1));
    int *dof_of_free = malloc(sizeof(int) * (size_t)n);
    for (int d = 0; d < h->m->n_dofs; d++)
        if (h->sys.free_index[d] >= 0)
            dof_of_free[h->sys.free_index[d]] = d;
    *worst_g = *worst_j = *worst_sym = 0;
    bool is_force = h->ks->lowered.is_force;
    for (int c = 0; c < configs; c++) {
        randomize(h, &seed, 2e-3);
        double E, Ep;
        evaluate(h, fn, &E, g, J);
        double gscale = max_abs(g, n) + 1e-300, jscale = max_abs(J, n * n) + 1e-300;
        for (int f = 0; f < n; f++) {
            int d = dof_of_free[f];
            /* Five-point central differences: truncation error O(h^4). */
            double step = 1e-6, keep = h->q[d];
            static const double offsets[4] = { 2, 1, -1, -2 }, weights[4] = { -1, 8, -8, 1 };
            double fdE = 0;
            memset(gfd, 0, sizeof(double) * (size_t)n);
            for (int k = 0; k < 4; k++) {
                h->q[d] = keep + offsets[k] * step;
                evaluate(h, fn, &Ep, gp, NULL);
                fdE += weights[k] * Ep;
                for (int r = 0; r < n; r++)
                    gfd[r] += weights[k] * gp[r];
            }
            h->q[d] = keep;
            if (!is_force)
                *worst_g = fmax(*worst_g, fabs(fdE / (12 * step) - g[f]) / gscale);
            for (int r = 0; r < n; r++)
                *worst_j = fmax(*worst_j, fabs(gfd[r] / (12 * step) - J[(size_t)f * n + r]) / jscale);
        }
        if (!is_force)
            for (int r = 0; r < n; r++)
                for (int col = 0; col < n; col++)
                    *worst_sym = fmax(*worst_sym, fabs(J[(size_t)col * n + r] - J[(size_t)r * n + col]) / jscale);
    }
    free(g);
    free(J);
    free(gp);
    free(gfd);
    free(dof_of_free);
}

/* The stretching energy and its derivatives written out by hand, for comparison. */
static void stretch_by_hand(const double *x0, const double *x1, double ks, double l, double *E, double g[6],
                            double H[36])
{
    double e[3] = { x1[0] - x0[0], x1[1] - x0[1], x1[2] - x0[2] };
    double len = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
    double eps = len / l - 1;
    *E = 0.5 * ks * eps * eps * l;
    double u[3] = { e[0] / len, e[1] / len, e[2] / len };
    for (int c = 0; c < 3; c++) {
        g[c] = -ks * eps * u[c];
        g[3 + c] = ks * eps * u[c];
    }
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            double k = ks / l * u[a] * u[b] + ks * eps / len * ((a == b) - u[a] * u[b]);
            H[a * 6 + b] = H[(a + 3) * 6 + b + 3] = k;
            H[a * 6 + b + 3] = H[(a + 3) * 6 + b] = -k;
        }
}

static void compare_stretch(Harness *h, srd_kernel_fn fn)
{
    const srd_model *m = h->m;
    const srd_elemset *set = &m->sets[h->set];
    unsigned seed = 11;
    double worst = 0;
    int n = h->sys.n_free;
    double *g = calloc((size_t)n + 1, sizeof(double)), *J = calloc((size_t)n * (size_t)n + 1, sizeof(double));
    for (int c = 0; c < 100; c++) {
        randomize(h, &seed, 2e-3);
        double E;
        evaluate(h, fn, &E, g, J);
        double Eh = 0, *gh = calloc((size_t)n + 1, sizeof(double)), *Jh = calloc((size_t)n * (size_t)n + 1, sizeof(double));
        for (int i = 0; i < set->n; i++) {
            int a = set->nodes[2 * i], b = set->nodes[2 * i + 1];
            double e, ge[6], He[36];
            stretch_by_hand(&h->q[m->node_dof[a]], &h->q[m->node_dof[b]], set->data[2 * i + 1], set->data[2 * i], &e,
                            ge, He);
            Eh += e;
            int dofs[6];
            for (int k = 0; k < 3; k++) {
                dofs[k] = h->sys.free_index[m->node_dof[a] + k];
                dofs[3 + k] = h->sys.free_index[m->node_dof[b] + k];
            }
            for (int k = 0; k < 6; k++) {
                gh[dofs[k]] += ge[k];
                for (int l = 0; l < 6; l++)
                    Jh[(size_t)dofs[l] * n + dofs[k]] += He[k * 6 + l];
            }
        }
        worst = fmax(worst, fabs(E - Eh) / fabs(Eh));
        for (int k = 0; k < n; k++)
            worst = fmax(worst, fabs(g[k] - gh[k]) / (max_abs(gh, n)));
        for (int k = 0; k < n * n; k++)
            worst = fmax(worst, fabs(J[k] - Jh[k]) / (max_abs(Jh, n * n)));
        free(gh);
        free(Jh);
    }
    check(worst < 1e-12, "stretch kernel equals the hand-written energy, gradient and Hessian (worst %.2e, tol 1e-12)",
          worst);
    free(g);
    free(J);
}

/* Builds the same module as an object file, links it as a shared library and compares. */
static void compare_aot(ModelKernels *mk, const srd_model *m)
{
    char dir[] = "/tmp/srd_aot_XXXXXX";
    if (!mkdtemp(dir)) {
        check(0, "temporary directory for the AOT comparison");
        return;
    }
    char obj[256], so[256], cmd[1024], err[512];
    snprintf(obj, sizeof obj, "%s/k.o", dir);
    snprintf(so, sizeof so, "%s/k.so", dir);
    LLVMContextRef C = LLVMContextCreate();
    LLVMModuleRef M = kernels_emit(mk, C, JIT_CHUNK_OPS);
    bool wrote = aot_write_object(M, obj, err, sizeof err);
    LLVMDisposeModule(M);
    LLVMContextDispose(C);
    check(wrote, "kernels written as an object file (%s)", wrote ? "ok" : err);
    snprintf(cmd, sizeof cmd, "cc -shared -o %s %s -lm", so, obj);
    if (!wrote || system(cmd) != 0) {
        check(0, "object file links into a shared library");
        return;
    }
    void *lib = dlopen(so, RTLD_NOW);
    check(lib != NULL, "AOT library loads");
    if (!lib)
        return;
    double worst = 0;
    for (int s = 0; s < mk->n; s++) {
        if (!mk->sets[s].fn)
            continue;
        char name[256];
        snprintf(name, sizeof name, SRD_KERNEL_PREFIX "%s", mk->sets[s].lowered.kind);
        srd_kernel_fn aot = (srd_kernel_fn)dlsym(lib, name);
        if (!aot) {
            check(0, "AOT symbol %s", name);
            continue;
        }
        Harness h = { 0 };
        h.m = m;
        h.ks = &mk->sets[s];
        h.set = s;
        srd_system_init(&h.sys, m, SRD_JAC_DENSE);
        srd_batch_build(&h.batch, m, s, &mk->sets[s].info, &h.sys);
        h.q = calloc((size_t)m->n_dofs, sizeof(double));
        h.q0 = calloc((size_t)m->n_dofs, sizeof(double));
        h.v0 = calloc((size_t)m->n_dofs, sizeof(double));
        h.params[0] = m->n_params ? m->params[0].value : 0;
        h.dt = 1e-3;
        unsigned seed = 5;
        int n = h.sys.n_free;
        double *g1 = malloc(sizeof(double) * (size_t)(n + 1)), *g2 = malloc(sizeof(double) * (size_t)(n + 1));
        double *J1 = malloc(sizeof(double) * ((size_t)n * n + 1)), *J2 = malloc(sizeof(double) * ((size_t)n * n + 1));
        for (int c = 0; c < 10; c++) {
            randomize(&h, &seed, 2e-3);
            double E1, E2;
            evaluate(&h, mk->sets[s].fn, &E1, g1, J1);
            evaluate(&h, aot, &E2, g2, J2);
            double sc = max_abs(g1, n) + 1e-300, jc = max_abs(J1, n * n) + 1e-300;
            worst = fmax(worst, fabs(E1 - E2) / (fabs(E1) + 1e-300));
            for (int k = 0; k < n; k++)
                worst = fmax(worst, fabs(g1[k] - g2[k]) / sc);
            for (int k = 0; k < n * n; k++)
                worst = fmax(worst, fabs(J1[k] - J2[k]) / jc);
        }
        free(g1);
        free(g2);
        free(J1);
        free(J2);
        free(h.q);
        free(h.q0);
        free(h.v0);
        srd_batch_free(&h.batch);
        srd_system_free(&h.sys);
    }
    check(worst <= 1e-14, "JIT and AOT kernels agree (worst relative difference %.2e, tol 1e-14)", worst);
    dlclose(lib);
    unlink(obj);
    unlink(so);
    rmdir(dir);
}

int main(void)
{
    Arena arena;
    arena_init(&arena);
    Program prog = { 0 };
    bool parsed = parse_program_text(&arena, "kernels.srd", model_text, strlen(model_text), parse_stdlib_dir(), &prog);
    srd_model *m = parsed ? elab_program(&prog, &arena, "kernels.srd") : NULL;
    diag_flush(stdout);
    check(m != NULL, "test model elaborates");
    if (!m)
        return 1;
    ModelKernels mk;
    char err[512] = "";
    bool lowered = kernels_lower(&mk, &prog, m, true, err, sizeof err);
    check(lowered, "every element set lowers (%s)", lowered ? "ok" : err);
    bool jitted = lowered && kernels_jit(&mk, JIT_CHUNK_OPS, err, sizeof err);
    check(jitted, "kernels JIT-compile (%s)", jitted ? "ok" : err);
    if (!jitted)
        return 1;
    printf("# lower %.2f ms, codegen %.2f ms, jit %.2f ms\n", mk.ms_lower, mk.ms_codegen, mk.ms_jit);
    for (int s = 0; s < mk.n; s++) {
        KernelSet *ks = &mk.sets[s];
        if (!ks->fn)
            continue;
        Harness h = { 0 };
        h.m = m;
        h.ks = ks;
        h.set = s;
        srd_system_init(&h.sys, m, SRD_JAC_DENSE);
        int built = srd_batch_build(&h.batch, m, s, &ks->info, &h.sys);
        check(built == 0, "%s: batch of %d instances", ks->lowered.kind, m->sets[s].n);
        h.q = calloc((size_t)m->n_dofs, sizeof(double));
        h.q0 = calloc((size_t)m->n_dofs, sizeof(double));
        h.v0 = calloc((size_t)m->n_dofs, sizeof(double));
        for (int p = 0; p < m->n_params && p < 8; p++)
            h.params[p] = m->params[p].value;
        h.dt = 1e-3;
        printf("# %s: %d stencil DOFs, ops value %d, gradient %d, %s %d, chunks %d\n", ks->lowered.kind,
               ks->lowered.nd, ks->lowered.ops_value, ks->lowered.ops_grad,
               ks->lowered.is_force ? "Jacobian" : "Hessian", ks->lowered.ops_jac, ks->chunks);
        double wg, wj, ws;
        fd_check(&h, ks->fn, 1000u + (unsigned)s, 100, &wg, &wj, &ws);
        if (!ks->lowered.is_force) {
            check(wg < 1e-6, "%s: gradient matches central differences on 100 configurations (worst %.2e, tol 1e-6)",
                  ks->lowered.kind, wg);
            check(ws < 1e-12, "%s: Hessian is symmetric (worst %.2e, tol 1e-12)", ks->lowered.kind, ws);
        }
        check(wj < 1e-6, "%s: %s matches central differences of the residual (worst %.2e, tol 1e-6)",
              ks->lowered.kind, ks->lowered.is_force ? "Jacobian" : "Hessian", wj);
        if (!strcmp(ks->lowered.kind, "stretch"))
            compare_stretch(&h, ks->fn);
        free(h.q);
        free(h.q0);
        free(h.v0);
        srd_batch_free(&h.batch);
        srd_system_free(&h.sys);
    }
    compare_aot(&mk, m);
    kernels_free(&mk);
    srd_model_free(m);
    arena_free(&arena);
    diag_reset();
    printf("%d passed, %d failed\n", checks - failures, failures);
    return failures != 0;
}
