/* test_kernels.c — the generated kernels of standard and user elements against central
 * finite differences on random configurations (also the planar variants, where edges have no
 * twist), energy Hessians for symmetry, the stretch kernel against a plain C implementation,
 * the JIT against the AOT object file and against the interpreted tier. Every element kind in
 * stdlib/ must be among those checked: see "The FD list" below. */
#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "aot.h"
#include "batch.h"
#include "elab.h"
#include "kernels.h"
#include "kernel/interp.h"
#include "kernel/tier.h"
#include "parse.h"

#include "kernel_models.h"
#include "tap.h"

static Tally tally;

typedef struct Harness {
    const srd_model   *m;
    const KernelSet   *ks;
    int                set;
    srd_system         sys;
    srd_batch_owner    batch;
    double            *q, *q0, *v0, params[8];
    double             t, dt;
    bool               steps; /* configurations as the runtime's steps (randomize_step) */
    double             largest; /* the largest residual entry over the checked configurations */
} Harness;

/* DOF d at the reference configuration: the node's coordinate, 0 for a twist or xi. */
static double reference_dof(const srd_model *m, int d)
{
    /* multipliers near 1 (not 0), so that their products with the constraints' curvature count */
    if (m->dof_kind[d] == SRD_DOF_LAMBDA)
        return 1 + 0.37 * (d % 3);
    return m->dof_kind[d] <= SRD_DOF_NODE_Z ? m->x0[3 * m->dof_owner[d] + m->dof_kind[d]] : 0;
}

/* A harness for element set `set` of m with kernel ks: dense storage, the model's params,
 * DOF vectors at zero. Returns srd_batch_build's status. */
static int harness_open(Harness *h, const srd_model *m, const KernelSet *ks, int set)
{
    memset(h, 0, sizeof *h);
    h->m = m;
    h->ks = ks;
    h->set = set;
    srd_system_init(&h->sys, m, SRD_JAC_DENSE);
    int built = srd_batch_build(&h->batch, m, set, &ks->info, &h->sys);
    h->q = calloc((size_t)m->n_dofs, sizeof(double));
    h->q0 = calloc((size_t)m->n_dofs, sizeof(double));
    h->v0 = calloc((size_t)m->n_dofs, sizeof(double));
    for (int d = 0; d < m->n_dofs; d++) /* the batch's state belongs to the reference */
        h->q0[d] = reference_dof(m, d);
    for (int p = 0; p < m->n_params && p < 8; p++)
        h->params[p] = m->params[p].value;
    h->dt = 1e-3;
    return built;
}

static void harness_close(Harness *h)
{
    free(h->q);
    free(h->q0);
    free(h->v0);
    srd_batch_free(&h->batch);
    srd_system_free(&h->sys);
}

/* Residual and Jacobian arrays for the harness's kernels: the free DOFs' entries, then the
 * scratch slots where kernels drop those of fixed DOFs. */
static double *grad_alloc(const Harness *h)
{
    return calloc(srd_system_grad_len(&h->sys), sizeof(double));
}

static double *jac_alloc(const Harness *h)
{
    return calloc(srd_system_jac_len(&h->sys), sizeof(double));
}

/* Energy, residual and Jacobian of one element set at the harness's state. */
static void evaluate(Harness *h, srd_kernel_fn fn, double *energy, double *grad, double *jac)
{
    *energy = 0;
    memset(grad, 0, sizeof(double) * srd_system_grad_len(&h->sys));
    if (jac)
        memset(jac, 0, sizeof(double) * srd_system_jac_len(&h->sys));
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
        h->q[d] = reference_dof(m, d) + amp * (2 * uniform(seed) - 1);
        h->q0[d] = h->q[d] + amp * (2 * uniform(seed) - 1);
        h->v0[d] = 2 * uniform(seed) - 1;
    }
    h->t = uniform(seed);
}

/* A configuration as the runtime meets it within a step: the step starts at q0, the free DOFs
 * moved by up to `amp` from the reference, with the batch's state (reference directors and
 * twists) carried there from the previous step's start as srd_batch_advance_state carries it
 * after an accepted step; q moves the free DOFs by up to `amp` again. Fixed DOFs keep their
 * reference values, so a planar model's configurations stay in the x-z plane (randomize
 * would move every y, which a planar run never does). */
static void randomize_step(Harness *h, unsigned *seed, double amp)
{
    const srd_model *m = h->m;
    double *start = malloc(sizeof(double) * (size_t)m->n_dofs);
    memcpy(start, h->q0, sizeof(double) * (size_t)m->n_dofs);
    for (int d = 0; d < m->n_dofs; d++) {
        bool free_dof = h->sys.free_index[d] >= 0;
        h->q0[d] = reference_dof(m, d) + (free_dof ? amp * (2 * uniform(seed) - 1) : 0);
        h->q[d] = h->q0[d] + (free_dof ? amp * (2 * uniform(seed) - 1) : 0);
        h->v0[d] = free_dof ? 2 * uniform(seed) - 1 : 0;
    }
    srd_batch_advance_state(&h->batch, m, h->set, &h->ks->info, start, h->q0);
    free(start);
    h->t = uniform(seed);
}

/* The next random configuration of the harness's kind. */
static void next_config(Harness *h, unsigned *seed, double amp)
{
    (h->steps ? randomize_step : randomize)(h, seed, amp);
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
/* Column f (DOF d) of the derivatives against five-point central differences with the given
 * step (truncation error O(step^4)): the largest errors of the gradient entry and of the
 * Jacobian column, relative to the scales of g and J. */
typedef struct FdColumn {
    const double *g, *J;
    double       *gp, *gfd;
    double        gscale, jscale;
} FdColumn;

static void fd_column(Harness *h, srd_kernel_fn fn, FdColumn *c, int d, int f, double step, double *eg, double *ej)
{
    int n = h->sys.n_free;
    double keep = h->q[d], Ep, fdE = 0;
    static const double offsets[4] = { 2, 1, -1, -2 }, weights[4] = { -1, 8, -8, 1 };
    memset(c->gfd, 0, sizeof(double) * (size_t)n);
    for (int k = 0; k < 4; k++) {
        h->q[d] = keep + offsets[k] * step;
        evaluate(h, fn, &Ep, c->gp, NULL);
        fdE += weights[k] * Ep;
        for (int r = 0; r < n; r++)
            c->gfd[r] += weights[k] * c->gp[r];
    }
    h->q[d] = keep;
    *eg = fabs(fdE / (12 * step) - c->g[f]) / c->gscale;
    *ej = 0;
    for (int r = 0; r < n; r++)
        *ej = fmax(*ej, fabs(c->gfd[r] / (12 * step) - c->J[(size_t)f * n + r]) / c->jscale);
}

/* A column whose error at the usual step (1e-6) is not clearly small is measured again at
 * 1e-5 and 1e-7 and keeps the smallest error: stiff elements (contact penalties over a short
 * distance) have large higher derivatives, where the usual step's truncation or rounding error
 * can reach 1e-6 of the scale. A wrong derivative is wrong at every step. */
static void fd_column_best(Harness *h, srd_kernel_fn fn, FdColumn *c, int d, int f, double *eg, double *ej)
{
    fd_column(h, fn, c, d, f, 1e-6, eg, ej);
    for (int k = 0; k < 2 && fmax(*eg, *ej) > 1e-7; k++) {
        double g2, j2;
        fd_column(h, fn, c, d, f, k ? 1e-7 : 1e-5, &g2, &j2);
        *eg = fmin(*eg, g2);
        *ej = fmin(*ej, j2);
    }
}

static void fd_check(Harness *h, srd_kernel_fn fn, unsigned seed, int configs, double *worst_g, double *worst_j,
                     double *worst_sym)
{
    int n = h->sys.n_free;
    double *g = grad_alloc(h), *J = jac_alloc(h), *gp = grad_alloc(h), *gfd = grad_alloc(h);
    int *dof_of_free = malloc(sizeof(int) * (size_t)n);
    for (int d = 0; d < h->m->n_dofs; d++)
        if (h->sys.free_index[d] >= 0)
            dof_of_free[h->sys.free_index[d]] = d;
    *worst_g = *worst_j = *worst_sym = 0;
    bool is_force = h->ks->lowered.is_force;
    for (int c = 0; c < configs; c++) {
        next_config(h, &seed, 2e-3);
        double E;
        evaluate(h, fn, &E, g, J);
        h->largest = fmax(h->largest, max_abs(g, n));
        FdColumn col = { g, J, gp, gfd, max_abs(g, n) + 1e-300, max_abs(J, n * n) + 1e-300 };
        for (int f = 0; f < n; f++) {
            double eg, ej;
            fd_column_best(h, fn, &col, dof_of_free[f], f, &eg, &ej);
            if (!is_force)
                *worst_g = fmax(*worst_g, eg);
            *worst_j = fmax(*worst_j, ej);
        }
        if (!is_force)
            for (int r = 0; r < n; r++)
                for (int k = 0; k < n; k++)
                    *worst_sym = fmax(*worst_sym, fabs(J[(size_t)k * n + r] - J[(size_t)r * n + k]) / col.jscale);
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

/* The random configurations of a kind follow from its name, so that adding a kind to the model
 * leaves the others' checks as they were (FNV-1a). */
static unsigned kind_seed(const char *kind)
{
    unsigned h = 2166136261u;
    for (const char *c = kind; *c; c++)
        h = (h ^ (unsigned char)*c) * 16777619u;
    return h;
}

static void compare_stretch(Harness *h, srd_kernel_fn fn)
{
    const srd_model *m = h->m;
    const srd_elemset *set = &m->sets[h->set];
    unsigned seed = 11;
    double worst = 0;
    int n = h->sys.n_free;
    double *g = grad_alloc(h), *J = jac_alloc(h);
    for (int c = 0; c < 100; c++) {
        randomize(h, &seed, 2e-3);
        double E;
        evaluate(h, fn, &E, g, J);
        double Eh = 0, *gh = calloc((size_t)n + 1, sizeof(double)), *Jh = calloc((size_t)n * (size_t)n + 1, sizeof(double));
        for (int i = 0; i < set->n; i++) {
            int a = set->nodes[2 * i], b = set->nodes[2 * i + 1];
            double e, ge[6], He[36];
            stretch_by_hand(&h->q[m->node_dof[a]], &h->q[m->node_dof[b]], set->data[set->n_data * i + 1], set->data[set->n_data * i], &e,
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
        double gs = max_abs(gh, n), js = max_abs(Jh, n * n);
        for (int k = 0; k < n; k++)
            worst = fmax(worst, fabs(g[k] - gh[k]) / gs);
        for (int k = 0; k < n * n; k++)
            worst = fmax(worst, fabs(J[k] - Jh[k]) / js);
        free(gh);
        free(Jh);
    }
    check(&tally, worst < 1e-12, "stretch kernel equals the hand-written energy, gradient and Hessian (worst %.2e, tol 1e-12)",
          worst);
    free(g);
    free(J);
}

/* Builds the same module as an object file, links it as a shared library and compares. */
/* The interpreted tier (compiler/kernel/interp.c) of every kind of the FD list against its JIT
 * kernel, through a trampoline as `srdc run` calls it: equal bit for bit. */
static bool interp_same(Harness *h, srd_kernel_fn jit, srd_kernel_fn tramp)
{
    int n = h->sys.n_free;
    double *g1 = grad_alloc(h), *g2 = grad_alloc(h), *J1 = jac_alloc(h), *J2 = jac_alloc(h), E1, E2;
    evaluate(h, jit, &E1, g1, J1);
    evaluate(h, tramp, &E2, g2, J2);
    bool same = !memcmp(&E1, &E2, sizeof E1) && !memcmp(g1, g2, sizeof(double) * (size_t)n) &&
                !memcmp(J1, J2, sizeof(double) * (size_t)n * (size_t)n);
    free(g1);
    free(g2);
    free(J1);
    free(J2);
    return same;
}

static void compare_interp(ModelKernels *mk, const srd_model *m)
{
    int differ = 0, evaluations = 0;
    for (int s = 0; s < mk->n; s++) {
        const LoweredElement *le = &mk->sets[s].lowered;
        if (!mk->sets[s].fn)
            continue;
        KernelSpec spec = { .kind = le->kind, .dag = le->dag, .n_inputs = le->n_inputs, .inputs = le->inputs,
                            .nd = le->nd, .value = le->value, .res = le->res, .jac = le->jac,
                            .symmetric = le->symmetric, .parts = 1, .lanes = 1 };
        InterpProgram *p = interp_build(&spec);
        int slot;
        srd_kernel_fn tramp = tier_claim(p, &slot);
        Harness h;
        harness_open(&h, m, &mk->sets[s], s);
        unsigned seed = kind_seed(le->kind);
        for (int c = 0; c < 6 && tramp; c++, evaluations++) {
            randomize(&h, &seed, 2e-3);
            differ += !interp_same(&h, mk->sets[s].fn, tramp);
        }
        harness_close(&h);
        tier_release(slot);
        interp_free(p);
    }
    check(&tally, differ == 0 && evaluations > 0,
          "interpreted kernels equal the JIT's bit for bit for every kind of the FD list (%d evaluations, %d differ)",
          evaluations, differ);
}

static void compare_aot(ModelKernels *mk, const srd_model *m)
{
    char dir[512];
    if (!tap_mkdtemp(dir, sizeof dir, "srd_aot_")) {
        check(&tally, 0, "temporary directory for the AOT comparison");
        return;
    }
    char obj[600], so[600], cmd[1400], err[512];
    snprintf(obj, sizeof obj, "%s/k.o", dir);
    snprintf(so, sizeof so, "%s/k.so", dir);
    LLVMContextRef C = LLVMContextCreate();
    LLVMModuleRef M = kernels_emit(mk, C, JIT_CHUNK_OPS);
    bool wrote = aot_write_object(M, obj, true, err, sizeof err);
    LLVMDisposeModule(M);
    LLVMContextDispose(C);
    check(&tally, wrote, "kernels written as an object file (%s)", wrote ? "ok" : err);
    snprintf(cmd, sizeof cmd, "cc -shared -o %s %s -lm", so, obj);
    if (!wrote || system(cmd) != 0) {
        check(&tally, 0, "object file links into a shared library");
        return;
    }
    void *lib = dlopen(so, RTLD_NOW);
    check(&tally, lib != NULL, "AOT library loads");
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
            check(&tally, 0, "AOT symbol %s", name);
            continue;
        }
        Harness h;
        harness_open(&h, m, &mk->sets[s], s);
        unsigned seed = 5;
        int n = h.sys.n_free;
        double *g1 = grad_alloc(&h), *g2 = grad_alloc(&h), *J1 = jac_alloc(&h), *J2 = jac_alloc(&h);
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
        harness_close(&h);
    }
    check(&tally, worst <= 1e-14, "JIT and AOT kernels agree (worst relative difference %.2e, tol 1e-14)", worst);
    dlclose(lib);
    unlink(obj);
    unlink(so);
    rmdir(dir);
}

/* ---- mid-edge bending (std.shells midedge): the reference configuration of a flat and of
 * curved meshes is stress-free, and bending a flat plate into a cylinder costs the plate's
 * continuum energy ---- */

typedef struct MidModel {
    Arena           arena;
    Program         prog;
    srd_model      *m;
    ModelKernels    mk;
    int             set; /* the midedge set */
    srd_system      sys;
    srd_batch_owner batch;
    double         *q, *g, params[1];
} MidModel;

static bool mid_build(MidModel *mm, const char *text)
{
    memset(mm, 0, sizeof *mm);
    arena_init(&mm->arena);
    char err[512] = "";
    bool ok = parse_program_text(&mm->arena, "midedge.srd", text, strlen(text), parse_stdlib_dir(), &mm->prog);
    mm->m = ok ? elab_program(&mm->prog, &mm->arena, "midedge.srd") : NULL;
    diag_flush(stdout);
    ok = mm->m && kernels_lower(&mm->mk, &mm->prog, mm->m, true, err, sizeof err) &&
         kernels_jit(&mm->mk, JIT_CHUNK_OPS, err, sizeof err);
    check(&tally, ok, "mid-edge test model builds and JIT-compiles (%s)", ok ? "ok" : err);
    if (!ok)
        return false;
    mm->set = -1;
    for (int s = 0; s < mm->mk.n; s++)
        if (mm->mk.sets[s].fn && !strcmp(mm->mk.sets[s].lowered.kind, "midedge"))
            mm->set = s;
    srd_system_init(&mm->sys, mm->m, SRD_JAC_DENSE);
    ok = mm->set >= 0 && srd_batch_build(&mm->batch, mm->m, mm->set, &mm->mk.sets[mm->set].info, &mm->sys) == 0;
    check(&tally, ok, "mid-edge test model: batch of %d midedge instances", ok ? mm->m->sets[mm->set].n : 0);
    mm->q = calloc((size_t)mm->m->n_dofs + 1, sizeof(double));
    mm->g = calloc(srd_system_grad_len(&mm->sys), sizeof(double));
    return ok;
}

static void mid_free(MidModel *mm)
{
    free(mm->q);
    free(mm->g);
    if (mm->m) {
        srd_batch_free(&mm->batch);
        srd_system_free(&mm->sys);
        kernels_free(&mm->mk);
        srd_model_free(mm->m);
    }
    arena_free(&mm->arena);
}

/* Energy of the whole set at mm->q, its gradient in mm->g. */
static double mid_energy(MidModel *mm)
{
    double E = 0;
    memset(mm->g, 0, sizeof(double) * srd_system_grad_len(&mm->sys));
    srd_eval_ctx ctx = { mm->q, mm->q, mm->q, mm->params, 0, 1e-3, &E, mm->g, NULL };
    mm->mk.sets[mm->set].fn(&ctx, &mm->batch.b);
    return E;
}

/* Energy, gradient and Hessian (12 x 12, row-major) of instance i alone, in stencil order. */
static double mid_instance(MidModel *mm, int i, double g[13], double H[145])
{
    const srd_elem_batch *b = &mm->batch.b;
    int nd = b->n_dofs;
    int32_t res[64];
    int64_t pos[64 * 64];
    for (int k = 0; k < nd; k++) {
        res[k] = k;
        for (int l = 0; l < nd; l++)
            pos[k * nd + l] = k * nd + l;
    }
    srd_elem_batch one = *b;
    one.n = 1;
    one.dofs = b->dofs + (size_t)i * nd;
    one.res = res;
    one.jac_pos = pos;
    one.data = b->data + (size_t)i * b->n_data;
    one.state = b->state + (size_t)i * b->n_state;
    double E = 0;
    memset(g, 0, sizeof(double) * 13);
    memset(H, 0, sizeof(double) * 145);
    srd_eval_ctx ctx = { mm->q, mm->q, mm->q, mm->params, 0, 1e-3, &E, g, H };
    mm->mk.sets[mm->set].fn(&ctx, &one);
    return E;
}

/* Puts the nodes at x (3 per node) and every xi at 0. */
static void mid_place(MidModel *mm, const double *x)
{
    memset(mm->q, 0, sizeof(double) * (size_t)mm->m->n_dofs);
    for (int i = 0; i < mm->m->n_nodes; i++)
        for (int c = 0; c < 3; c++)
            mm->q[mm->m->node_dof[i] + c] = x[3 * i + c];
}

/* tau = n_avg x e^ of every edge at x, written independently of the runtime's. */
static void mid_taus(const srd_model *m, const double *x, double *tau)
{
    double *navg = calloc((size_t)m->n_edges * 3 + 1, sizeof(double));
    for (int t = 0; t < m->n_tris; t++) {
        const double *a = &x[3 * m->tri_nodes[3 * t]], *b = &x[3 * m->tri_nodes[3 * t + 1]],
                     *c = &x[3 * m->tri_nodes[3 * t + 2]];
        double u[3] = { b[0] - a[0], b[1] - a[1], b[2] - a[2] }, v[3] = { c[0] - a[0], c[1] - a[1], c[2] - a[2] };
        double n[3] = { u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0] };
        double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (int k = 0; k < 3; k++)
            for (int d = 0; d < 3; d++)
                navg[3 * m->tri_edges[3 * t + k] + d] += n[d] / len;
    }
    for (int e = 0; e < m->n_edges; e++) {
        const double *a = &x[3 * m->edge_nodes[2 * e]], *b = &x[3 * m->edge_nodes[2 * e + 1]];
        double *n = &navg[3 * e], u[3] = { b[0] - a[0], b[1] - a[1], b[2] - a[2] };
        double ln = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]), lu = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
        if (ln == 0) {
            memset(&tau[3 * e], 0, sizeof(double) * 3);
            continue;
        }
        tau[3 * e] = (n[1] * u[2] - n[2] * u[1]) / (ln * lu);
        tau[3 * e + 1] = (n[2] * u[0] - n[0] * u[2]) / (ln * lu);
        tau[3 * e + 2] = (n[0] * u[1] - n[1] * u[0]) / (ln * lu);
    }
    free(navg);
}

/* Largest difference between the batch's state values of kind `kind` and tau; with set_them,
 * writes tau into them instead (a step starting at the configuration tau was computed at). */
static double mid_tau_state(MidModel *mm, int kind, double *tau, bool set_them)
{
    const srd_kernel_info *in = &mm->mk.sets[mm->set].info;
    const srd_elemset *set = &mm->m->sets[mm->set];
    int rank[64], edges = 0;
    for (int p = 0; p < in->n_params && p < 64; p++)
        rank[p] = in->param_is_node[p] ? -1 : edges++;
    double worst = 0;
    int found = 0;
    for (int i = 0; i < set->n; i++)
        for (int k = 0; k < in->n_state; k++) {
            if (in->state_kind[k] != kind)
                continue;
            double *v = &mm->batch.state[(size_t)i * in->n_state + k];
            double want = tau[3 * set->edges[i * set->n_edge + rank[in->state_param[k]]] + in->state_comp[k]];
            worst = fmax(worst, fabs(*v - want));
            if (set_them)
                *v = want;
            found++;
        }
    return found ? worst : INFINITY;
}

static int mid_object(const srd_model *m, const char *name)
{
    for (int o = 0; o < m->n_objects; o++)
        if (!strcmp(m->objects[o].name, name))
            return o;
    return -1;
}

/* Energy and rest area of object o's instances: all of them, or with `inner` those with no
 * boundary edge, or (margin > 0) those whose reference centroid lies at least margin inside
 * box = [x0, x1] x [y0, y1]. */
static void mid_sum(MidModel *mm, int o, bool inner, double margin, const double box[4], double *E, double *A)
{
    const srd_model *m = mm->m;
    const srd_elemset *set = &m->sets[mm->set];
    double g[13], H[145];
    int *on = calloc((size_t)m->n_edges + 1, sizeof(int));
    for (int t = 0; t < m->n_tris; t++)
        for (int k = 0; k < 3; k++)
            on[m->tri_edges[3 * t + k]]++;
    *E = *A = 0;
    for (int i = 0; i < set->n; i++) {
        if (set->object[i] != o)
            continue;
        if (inner && (on[set->edges[3 * i]] < 2 || on[set->edges[3 * i + 1]] < 2 || on[set->edges[3 * i + 2]] < 2))
            continue;
        double cx = 0, cy = 0;
        for (int k = 0; k < 3; k++) {
            cx += mm->m->x0[3 * set->nodes[3 * i + k]] / 3;
            cy += mm->m->x0[3 * set->nodes[3 * i + k] + 1] / 3;
        }
        if (margin > 0 && (cx < box[0] + margin || cx > box[1] - margin || cy < box[2] + margin || cy > box[3] - margin))
            continue;
        *E += mid_instance(mm, i, g, H);
        *A += set->data[i * set->n_data + 2];
    }
    free(on);
}

/* Minimises the energy over the xi of object o's edges at fixed positions: the energy is
 * quadratic in them, so one Newton step (a dense solve) reaches the minimum. Returns the
 * largest remaining |dE/dxi|. */
static double mid_relax_xi(MidModel *mm, int o)
{
    const srd_model *m = mm->m;
    const srd_elemset *set = &m->sets[mm->set];
    int *slot = malloc(sizeof(int) * (size_t)(m->n_edges + 1)), nx = 0;
    for (int e = 0; e < m->n_edges; e++)
        slot[e] = m->edge_object[e] == o && m->edge_xi[e] >= 0 ? nx++ : -1;
    double *A = calloc((size_t)nx * nx + 1, sizeof(double)), *b = calloc((size_t)nx + 1, sizeof(double));
    double g[13], H[145];
    for (int i = 0; i < set->n; i++) {
        if (set->object[i] != o)
            continue;
        mid_instance(mm, i, g, H);
        for (int k = 0; k < 3; k++) {
            int r = slot[set->edges[3 * i + k]];
            b[r] -= g[9 + k];
            for (int l = 0; l < 3; l++)
                A[(size_t)r * nx + slot[set->edges[3 * i + l]]] += H[(9 + k) * 12 + 9 + l];
        }
    }
    /* Gaussian elimination; A is symmetric positive definite. */
    for (int k = 0; k < nx; k++)
        for (int r = k + 1; r < nx; r++) {
            double f = A[(size_t)r * nx + k] / A[(size_t)k * nx + k];
            if (f == 0)
                continue;
            for (int c = k; c < nx; c++)
                A[(size_t)r * nx + c] -= f * A[(size_t)k * nx + c];
            b[r] -= f * b[k];
        }
    for (int k = nx - 1; k >= 0; k--) {
        double s = b[k];
        for (int c = k + 1; c < nx; c++)
            s -= A[(size_t)k * nx + c] * b[c];
        b[k] = s / A[(size_t)k * nx + k];
    }
    for (int e = 0; e < m->n_edges; e++)
        if (slot[e] >= 0)
            mm->q[m->edge_xi[e]] += b[slot[e]];
    mid_energy(mm);
    double worst = 0;
    for (int e = 0; e < m->n_edges; e++)
        if (slot[e] >= 0 && mm->sys.free_index[m->edge_xi[e]] >= 0)
            worst = fmax(worst, fabs(mm->g[mm->sys.free_index[m->edge_xi[e]]]));
    free(slot);
    free(A);
    free(b);
    return worst;
}

/* Writes a surface patch as an OBJ file: an nu x nv grid over the parameters [0, a] x [0, b]
 * with the interior points moved by up to 0.2 of a cell and each cell split along a random
 * diagonal, mapped by `surface`. */
static void mid_write_obj(const char *path, int nu, int nv, double a, double b, unsigned seed,
                          void (*surface)(double u, double v, double *p))
{
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    for (int j = 0; j < nv; j++)
        for (int i = 0; i < nu; i++) {
            double u = a * i / (nu - 1), v = b * j / (nv - 1);
            if (i > 0 && i < nu - 1 && j > 0 && j < nv - 1) {
                u += 0.2 * a / (nu - 1) * (2 * uniform(&seed) - 1);
                v += 0.2 * b / (nv - 1) * (2 * uniform(&seed) - 1);
            }
            double p[3];
            surface(u, v, p);
            fprintf(f, "v %.17g %.17g %.17g\n", p[0], p[1], p[2]);
        }
    for (int j = 0; j + 1 < nv; j++)
        for (int i = 0; i + 1 < nu; i++) {
            int p00 = 1 + j * nu + i, p10 = p00 + 1, p01 = p00 + nu, p11 = p01 + 1;
            if (uniform(&seed) < 0.5)
                fprintf(f, "f %d %d %d\nf %d %d %d\n", p00, p10, p11, p00, p11, p01);
            else
                fprintf(f, "f %d %d %d\nf %d %d %d\n", p00, p10, p01, p10, p11, p01);
        }
    fclose(f);
}

#define MID_TUBE_R 0.02   /* m */
#define MID_CAP_R 0.03    /* m */
static void mid_tube(double u, double v, double *p)
{
    p[0] = MID_TUBE_R * sin(u / MID_TUBE_R);
    p[1] = v;
    p[2] = MID_TUBE_R * (1 - cos(u / MID_TUBE_R));
}
static void mid_cap(double u, double v, double *p)
{
    double x = u - 0.015, y = v - 0.015, r = sqrt(x * x + y * y + MID_CAP_R * MID_CAP_R);
    p[0] = MID_CAP_R * x / r;
    p[1] = MID_CAP_R * y / r;
    p[2] = MID_CAP_R * (MID_CAP_R / r - 1);
}

static void midedge_checks(void)
{
    char dir[512];
    if (!tap_mkdtemp(dir, sizeof dir, "srd_midedge_")) {
        check(&tally, 0, "temporary directory for the mid-edge meshes");
        return;
    }
    char tube[600], cap[600], text[4096];
    snprintf(tube, sizeof tube, "%s/tube.obj", dir);
    snprintf(cap, sizeof cap, "%s/cap.obj", dir);
    /* A quarter of a cylinder of radius 2 cm, 3 cm long, and a spherical cap of radius 3 cm
     * over 3 cm x 3 cm, both with jittered nodes and random diagonals (about 4 mm edges). */
    mid_write_obj(tube, 9, 8, 0.25 * 2 * acos(-1) * MID_TUBE_R, 0.03, 17, mid_tube);
    mid_write_obj(cap, 8, 8, 0.03, 0.03, 23, mid_cap);
    /* The plates to bend: 4 cm x 3 cm, 2.5 mm edges, equilateral and random meshes. */
    static const char *plates[2] = { "plate", "plate_random" };
    static const double boxes[2][4] = { { 0, 0.04, 0.2, 0.23 }, { 0, 0.04, 0.3, 0.33 } };
    snprintf(text, sizeof text,
             "material m { E = 2 MPa; rho = 1200 kg/m^3; nu = 0.4; }\n"
             "shell flat { mesh = rectangle(4 cm, 3 cm, 5 mm, pattern = random, seed = 9, origin = (0, 0.1, 0) m);\n"
             "             thickness = 1 mm; material = m; bending = midedge; }\n"
             "shell tube { mesh = obj(\"%s\"); thickness = 1 mm; material = m; bending = midedge; }\n"
             "shell cap { mesh = obj(\"%s\"); thickness = 1 mm; material = m; bending = midedge; }\n"
             "shell plate { mesh = rectangle(4 cm, 3 cm, 2.5 mm, pattern = equilateral, origin = (0, 0.2, 0) m);\n"
             "              thickness = 1 mm; material = m; bending = midedge; }\n"
             "shell plate_random { mesh = rectangle(4 cm, 3 cm, 2.5 mm, pattern = random, seed = 4, origin = (0, 0.3, 0) m);\n"
             "                     thickness = 1 mm; material = m; bending = midedge; }\n",
             tube, cap);
    MidModel mm;
    bool built = mid_build(&mm, text);
    unlink(tube);
    unlink(cap);
    rmdir(dir);
    if (!built) {
        mid_free(&mm);
        return;
    }
    const srd_model *m = mm.m;
    double *x = calloc((size_t)m->n_nodes * 3 + 1, sizeof(double)), *tau = calloc((size_t)m->n_edges * 3 + 1, sizeof(double));
    double kb = m->sets[mm.set].data[0];
    int o_tube = mid_object(m, "tube");

    /* 1. The runtime's tau0 and tau_ref at the reference configuration are n_avg x e^. */
    mid_taus(m, m->x0, tau);
    double d0 = mid_tau_state(&mm, SRD_STATE_TAU0, tau, false), dr = mid_tau_state(&mm, SRD_STATE_TAU_REF, tau, false);
    check(&tally, d0 < 1e-15 && dr < 1e-15, "midedge: tau0 and tau_ref of the reference are n_avg x e (worst %.1e, %.1e, tol 1e-15)",
          d0, dr);

    /* 2. Stress-free reference, flat and curved: energy and gradient vanish (exactly, since
     * the shape operator and its natural value are the same expression of equal inputs; the
     * check allows rounding against the scale of unrolling the tube). That the natural value
     * carries the curvature: unrolling the tube (a step starting flat, xi = 0) costs about the
     * continuum kb A / R^2 in its triangles off the boundary (a boundary edge's n_avg is its
     * one triangle's normal, so it adds no natural curvature). Tolerance 10%: with xi = 0 the
     * mid-edge normals are the n_avg of the jittered mesh, which differ from the cylinder's by
     * O(h / R), an O(1) part of the curvature seen by each triangle that averages out only
     * partly over the tube's 30 such triangles. */
    mid_place(&mm, m->x0);
    double E_ref = mid_energy(&mm), g_ref = max_abs(mm.g, mm.sys.n_free);
    memcpy(x, m->x0, sizeof(double) * 3 * (size_t)m->n_nodes);
    for (int i = 0; i < m->n_nodes; i++)
        if (m->node_object[i] == o_tube) {
            double X = x[3 * i], Z = x[3 * i + 2] - MID_TUBE_R;
            x[3 * i] = MID_TUBE_R * atan2(X, -Z);
            x[3 * i + 2] = 0;
        }
    mid_place(&mm, x);
    mid_taus(m, x, tau);
    mid_tau_state(&mm, SRD_STATE_TAU0, tau, true);
    double E_unrolled = mid_energy(&mm), g_unrolled = max_abs(mm.g, mm.sys.n_free);
    check(&tally, fabs(E_ref) <= 1e-15 * E_unrolled && g_ref <= 1e-12 * g_unrolled,
          "midedge: flat, cylindrical and spherical meshes are stress-free as meshed: E = %.1e J, max |dE/dq| = %.1e "
          "(unrolling the tube: %.2e J, %.2e; tol 1e-15, 1e-12 of those)",
          E_ref, g_ref, E_unrolled, g_unrolled);
    double E_tube, A_tube;
    mid_sum(&mm, o_tube, true, 0, NULL, &E_tube, &A_tube);
    double ratio = E_tube / (kb * A_tube / (MID_TUBE_R * MID_TUBE_R));
    check(&tally, fabs(ratio - 1) < 0.1, "midedge: unrolling the tube costs %.4f of kb A / R^2 off its boundary (tol 10%%)",
          ratio);

    /* 3. Pure bending of a flat plate into a cylinder of radius R = 3 cm about y (an
     * isometry): the continuum energy is D/2 (1/R)^2 A = kb A / R^2 (kb = D/2, D = E h^3 /
     * (12 (1 - nu^2))). The step starts in the bent configuration (tau0 there). With each xi
     * the cylinder's normal at the edge's midpoint (the mid-edge normal of Fig. 2e), the
     * discrete shape operator of a quadratic surface is exact, so only the discretisation
     * error of the chords remains (6e-4 here): tolerance 0.5%. Relaxing the xi (the
     * equilibrium at these positions) lets the normals at the free edges turn: the total drops
     * by several percent, while triangles 1 cm inside the edges keep the continuum value
     * (tolerance 0.5%). */
    const double R = 0.03;
    for (int p = 0; p < 2; p++) {
        int o = mid_object(m, plates[p]);
        memcpy(x, m->x0, sizeof(double) * 3 * (size_t)m->n_nodes);
        for (int i = 0; i < m->n_nodes; i++)
            if (m->node_object[i] == o) {
                double X = m->x0[3 * i];
                x[3 * i] = R * sin(X / R);
                x[3 * i + 2] = R * (1 - cos(X / R));
            }
        mid_place(&mm, x);
        mid_taus(m, x, tau);
        mid_tau_state(&mm, SRD_STATE_TAU0, tau, true);
        for (int e = 0; e < m->n_edges; e++) {
            if (m->edge_object[e] != o)
                continue;
            double X = 0.5 * (m->x0[3 * m->edge_nodes[2 * e]] + m->x0[3 * m->edge_nodes[2 * e + 1]]);
            double nm[3] = { -sin(X / R), 0, cos(X / R) };
            mm.q[m->edge_xi[e]] = nm[0] * tau[3 * e] + nm[1] * tau[3 * e + 1] + nm[2] * tau[3 * e + 2];
        }
        double E_geo, A, E_min, E_in, A_in;
        mid_sum(&mm, o, false, 0, NULL, &E_geo, &A);
        double E_cont = kb * A / (R * R);
        check(&tally, fabs(E_geo / E_cont - 1) < 0.005,
              "midedge: %s bent to R = 3 cm, the cylinder's mid-edge normals: E = %.6e J = %.5f of kb A / R^2 "
              "(tol 0.5%%)",
              plates[p], E_geo, E_geo / E_cont);
        double gx = mid_relax_xi(&mm, o);
        mid_sum(&mm, o, false, 0, NULL, &E_min, &A);
        mid_sum(&mm, o, false, 0.01, boxes[p], &E_in, &A_in);
        double in = E_in / (kb * A_in / (R * R));
        check(&tally, E_min <= E_geo && E_min > 0.85 * E_cont && fabs(in - 1) < 0.005,
              "midedge: %s with relaxed xi (max |dE/dxi| %.1e): %.4f of kb A / R^2 in all, %.5f 1 cm inside "
              "the edges (%.0f%% of the area; tol 0.5%%)",
              plates[p], gx, E_min / E_cont, in, 100 * A_in / A);
    }
    free(x);
    free(tau);
    mid_free(&mm);
}

/* The on-disk kernel cache: a second compilation of the same model is served from it and
 * its kernels compute exactly what the freshly compiled ones do. */
static void compare_cache(ModelKernels *fresh, const Program *prog, const srd_model *m)
{
    char dir[512];
    if (!tap_mkdtemp(dir, sizeof dir, "srd_cache_")) {
        check(&tally, 0, "temporary directory for the cache test");
        return;
    }
    setenv("SRD_CACHE", dir, 1);
    ModelKernels a, b;
    char err[512];
    bool ok = kernels_lower(&a, prog, m, true, err, sizeof err) && kernels_jit(&a, JIT_CHUNK_OPS, err, sizeof err) &&
              kernels_lower(&b, prog, m, true, err, sizeof err) && kernels_jit(&b, JIT_CHUNK_OPS, err, sizeof err);
    check(&tally, ok && !a.cache_hit && b.cache_hit, "the kernel cache misses once, then serves the same model (%s)",
          ok ? "ok" : err);
    double worst = ok ? 0 : 1;
    for (int s = 0; ok && s < fresh->n; s++) {
        if (!fresh->sets[s].fn)
            continue;
        Harness h;
        harness_open(&h, m, &fresh->sets[s], s);
        unsigned seed = 9;
        randomize(&h, &seed, 2e-3);
        int n = h.sys.n_free;
        double *g1 = grad_alloc(&h), *g2 = grad_alloc(&h), *J1 = jac_alloc(&h), *J2 = jac_alloc(&h);
        double E1, E2;
        evaluate(&h, fresh->sets[s].fn, &E1, g1, J1);
        evaluate(&h, b.sets[s].fn, &E2, g2, J2);
        worst = fmax(worst, fabs(E1 - E2));
        for (int k = 0; k < n; k++)
            worst = fmax(worst, fabs(g1[k] - g2[k]));
        for (int k = 0; k < n * n; k++)
            worst = fmax(worst, fabs(J1[k] - J2[k]));
        free(g1);
        free(g2);
        free(J1);
        free(J2);
        harness_close(&h);
    }
    check(&tally, worst == 0, "kernels from the cache give bit-identical results (largest difference %.1e)", worst);
    kernels_free(&a);
    kernels_free(&b);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        check(&tally, 0, "cache directory removed");
    unsetenv("SRD_CACHE");
}

/* ---- The FD list against stdlib/: which kinds were checked, and which the library has ---- */

enum { MAX_KINDS = 128, KIND_NAME = 64 };

/* A set of element kind names, each with the module it comes from (stdlib kinds) or "". */
typedef struct KindList {
    int  n;
    char name[MAX_KINDS][KIND_NAME], module[MAX_KINDS][KIND_NAME];
} KindList;

static bool kinds_has(const KindList *l, const char *name)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->name[i], name))
            return true;
    return false;
}

static void kinds_add(KindList *l, const char *name, const char *module)
{
    if (kinds_has(l, name))
        return;
    if (l->n == MAX_KINDS) { /* a kind left out would escape the coverage check */
        check(&tally, 0, "room for element kind %s (raise MAX_KINDS above %d)", name, MAX_KINDS);
        return;
    }
    snprintf(l->name[l->n], KIND_NAME, "%s", name);
    snprintf(l->module[l->n], KIND_NAME, "%s", module);
    l->n++;
}

/* Kinds checked against central differences in the general model, kinds whose kernel reads an
 * edge's twist there (they have a planar variant, with the twist fixed at 0), and kinds
 * checked in the planar model. */
static KindList fd_checked, reads_twist, fd_checked_planar;

static bool lowered_reads_twist(const LoweredElement *le)
{
    for (int k = 0; k < le->nd; k++)
        if (le->dofs[k].comp == 3)
            return true;
    return false;
}

/* Every `energy` and `force` defined by the modules in `dir` (each *.srd file, loaded as
 * `use std.NAME;`), with its module. Returns false when a module does not parse. */
static bool stdlib_kinds(const char *dir, KindList *out)
{
    memset(out, 0, sizeof *out);
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool ok = true;
    struct dirent *ent;
    while ((ent = readdir(d))) {
        size_t len = strlen(ent->d_name);
        if (len <= 4 || len >= KIND_NAME || strcmp(ent->d_name + len - 4, ".srd"))
            continue;
        char module[KIND_NAME], text[KIND_NAME + 16];
        snprintf(module, sizeof module, "%.*s", (int)(len - 4), ent->d_name);
        snprintf(text, sizeof text, "use std.%s;\n", module);
        Arena arena;
        arena_init(&arena);
        Program prog = { 0 };
        if (parse_program_text(&arena, "kinds.srd", text, strlen(text), dir, &prog)) {
            for (int i = 0; i < prog.n_stmts; i++)
                if (prog.stmts[i]->kind == ST_ENERGY || prog.stmts[i]->kind == ST_FORCE || prog.stmts[i]->kind == ST_CONSTRAINT)
                    kinds_add(out, prog.stmts[i]->name, module);
        } else {
            ok = false;
        }
        arena_free(&arena);
    }
    closedir(d);
    diag_flush(stdout);
    return ok;
}

/* The stdlib kinds of `lib` that `checked` lacks, among those `among` holds (all when NULL). */
static int kinds_missing(const KindList *lib, const KindList *among, const KindList *checked, KindList *missing)
{
    memset(missing, 0, sizeof *missing);
    for (int i = 0; i < lib->n; i++)
        if ((!among || kinds_has(among, lib->name[i])) && !kinds_has(checked, lib->name[i]))
            kinds_add(missing, lib->name[i], lib->module[i]);
    return missing->n;
}

static void print_missing(const KindList *missing, const char *where)
{
    for (int i = 0; i < missing->n; i++)
        printf("# %s (std.%s) has no finite-difference check: %s\n", missing->name[i], missing->module[i], where);
}

/* The suite fails when an element kind of stdlib/ has no central-difference check, or a kind
 * with a planar variant has none in the planar model. Then the check is shown to fail: a
 * module directory holding an element that model_text does not apply must be reported. */
static void check_stdlib_coverage(void)
{
    KindList lib, missing;
    const char *dir = parse_stdlib_dir();
    bool parsed = stdlib_kinds(dir, &lib);
    check(&tally, parsed && kinds_has(&lib, "stretch") && kinds_has(&lib, "ground_contact"),
          "stdlib/ (%s) parses and lists %d element kinds, stretch and ground_contact among them", dir, lib.n);
    int n = kinds_missing(&lib, NULL, &fd_checked, &missing);
    print_missing(&missing, "apply it in model_text of tests/unit/kernel_models.h");
    check(&tally, n == 0, "every one of the %d element kinds in stdlib/ is checked against central differences "
          "(%d missing)", lib.n, n);
    int twisting = 0;
    for (int i = 0; i < lib.n; i++)
        twisting += kinds_has(&reads_twist, lib.name[i]);
    n = kinds_missing(&lib, &reads_twist, &fd_checked_planar, &missing);
    print_missing(&missing, "its planar variant needs an instance in planar_text of tests/unit/test_kernels.c");
    check(&tally, twisting > 0 && n == 0, "the %d stdlib kinds that read an edge's twist are checked in their planar "
          "variant too (%d missing)", twisting, n);

    /* The check can fail: a library with an element nobody applied. */
    char tmp[512], path[600];
    if (!tap_mkdtemp(tmp, sizeof tmp, "srd_kinds_")) {
        check(&tally, 0, "temporary directory for the coverage self-test");
        return;
    }
    snprintf(path, sizeof path, "%s/extra.srd", tmp);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("energy unchecked_spring(node a, node b; k) = 0.5 * k * norm(b.x - a.x)^2;\n", f);
        fclose(f);
    }
    KindList extra;
    parsed = f && stdlib_kinds(tmp, &extra);
    n = kinds_missing(&extra, NULL, &fd_checked, &missing);
    check(&tally, parsed && n == 1 && !strcmp(missing.name[0], "unchecked_spring"),
          "a stdlib module with an element that has no finite-difference check is reported (%d missing)", n);
    unlink(path);
    rmdir(tmp);
}

/* ---- The kernels of one model against central differences ---- */

/* A planar rod network (theta fixed at 0: edges have no twist DOF, and the kernels of kinds
 * that read one are lowered with the constant 0): a clamped rod with natural curvature, a
 * rectangular strip joined to its middle (a junction of three edges, two of them running
 * against the stencil: signs -1), and a closed ring of elliptic section. Fixed DOFs: every
 * node's y and the clamped nodes. */
static const char *planar_text =
    "material m { E = 2 MPa; rho = 1200 kg/m^3; nu = 0.4; }\n"
    "rod arm { path = polyline((0, 0, 0) m, (0.05, 0, 0.01) m, (0.1, 0, -0.02) m); nodes = 9; radius = 1 mm;\n"
    "          material = m; curvature = (20 /m, 0); }\n"
    "rod strip { path = line((0.09, 0, 0.05) m, (0.05, 0, 0.01) m); nodes = 5; section = rectangular(18 mm, 1.7 mm);\n"
    "            material = m; }\n"
    "rod ring { path = circle((0.2, 0, 0) m, 2 cm, axis = (0, 1, 0)); nodes = 10; section = elliptic(1 mm, 2 mm);\n"
    "           material = m; }\n"
    "join strip.end, arm.node(4);\n"
    "clamp arm.start;\n"
    "planar;\n";

/* Checks element set s of m: gradient and Hessian (energies) or Jacobian (forces) against
 * five-point central differences on 100 configurations, relative to the largest entry, to
 * 1e-6 (step 1e-6 m: truncation O(h^4) and rounding eps E / h are both far below it), and
 * energy Hessians for symmetry to 1e-12. With `steps`, configurations are the runtime's
 * (randomize_step). The kind is recorded in `checked`. */
static void fd_check_set(const ModelKernels *mk, const srd_model *m, int s, const char *label, bool steps,
                         KindList *checked)
{
    const KernelSet *ks = &mk->sets[s];
    Harness h;
    int built = harness_open(&h, m, ks, s);
    h.steps = steps;
    const char *kind = ks->lowered.kind;
    check(&tally, built == 0 && m->sets[s].n > 0 && h.sys.n_free > 0, "%s%s: batch of %d instances, %d free DOFs",
          label, kind, m->sets[s].n, h.sys.n_free);
    printf("# %s%s: %d stencil DOFs, ops value %d, gradient %d, %s %d, chunks %d\n", label, kind, ks->lowered.nd,
           ks->lowered.ops_value, ks->lowered.ops_grad, ks->lowered.is_force ? "Jacobian" : "Hessian",
           ks->lowered.ops_jac, ks->chunks);
    double wg, wj, ws;
    fd_check(&h, ks->fn, kind_seed(kind), 100, &wg, &wj, &ws);
    if (!ks->lowered.is_force) {
        check(&tally, wg < 1e-6, "%s%s: gradient matches central differences on 100 configurations (worst %.2e, tol 1e-6)",
              label, kind, wg);
        check(&tally, ws < 1e-12, "%s%s: Hessian is symmetric (worst %.2e, tol 1e-12)", label, kind, ws);
    }
    check(&tally, wj < 1e-6, "%s%s: %s matches central differences of the residual (worst %.2e, tol 1e-6)", label,
          kind, ks->lowered.is_force ? "Jacobian" : "Hessian", wj);
    /* a kernel that added nothing would pass the comparisons above: it must act somewhere */
    check(&tally, h.largest > 0, "%s%s: acts on the configurations checked (largest residual entry %.2e)", label, kind,
          h.largest);
    if (!strcmp(kind, "stretch") && !steps)
        compare_stretch(&h, ks->fn);
    if (built == 0 && m->sets[s].n > 0 && h.sys.n_free > 0)
        kinds_add(checked, kind, "");
    harness_close(&h);
}

/* The planar variants: planar_text's kernels against central differences on configurations
 * in the x-z plane. Its kernels must not read a twist (lowered as 0), and every kind that reads
 * one in the general model must be here. */
/* Parses, elaborates, lowers and JIT-compiles a test model's text; checks that it did. */
typedef struct TestModel {
    Arena        arena;
    srd_model   *m;
    ModelKernels mk;
    bool         ok;
} TestModel;

static void test_model_open(TestModel *t, const char *name, const char *text, const char *what)
{
    arena_init(&t->arena);
    Program prog = { 0 };
    bool parsed = parse_program_text(&t->arena, name, text, strlen(text), parse_stdlib_dir(), &prog);
    t->m = parsed ? elab_program(&prog, &t->arena, name) : NULL;
    diag_flush(stdout);
    char err[512] = "";
    t->ok = t->m && kernels_lower(&t->mk, &prog, t->m, true, err, sizeof err);
    bool lowered = t->ok;
    t->ok = t->ok && kernels_jit(&t->mk, JIT_CHUNK_OPS, err, sizeof err);
    if (lowered && !t->ok)
        kernels_free(&t->mk);
    check(&tally, t->ok, "%s elaborates and its kernels JIT-compile (%s)", what, t->ok ? "ok" : err);
}

static void test_model_close(TestModel *t)
{
    if (t->ok)
        kernels_free(&t->mk);
    if (t->m)
        srd_model_free(t->m);
    arena_free(&t->arena);
}

static void planar_checks(void)
{
    TestModel t;
    test_model_open(&t, "planar.srd", planar_text, "planar test model");
    check(&tally, t.m && t.m->planar, "the planar test model is planar");
    for (int s = 0; t.ok && s < t.mk.n; s++) {
        if (!t.mk.sets[s].fn)
            continue;
        check(&tally, !lowered_reads_twist(&t.mk.sets[s].lowered), "planar %s: the kernel reads no twist DOF",
              t.mk.sets[s].lowered.kind);
        fd_check_set(&t.mk, t.m, s, "planar ", true, &fd_checked_planar);
    }
    test_model_close(&t);
}

/* Rigid bodies turned off the world axes, and a joint of every kind with every element: their
 * constraints (multipliers near 1), springs, dampers, limits (within reach of the +-2 mm
 * perturbations) and motors; a rod node pinned to a body. */
static const char *bodies_text =
    "use std.bodies;\n"
    "use std.contact;\n"
    "let w = 2 Hz;\n"
    "material m { E = 2 MPa; rho = 1200 kg/m^3; nu = 0.4; }\n"
    "rod arm { path = line((0, 0.7, 0) m, (0, 0.8, 0) m); nodes = 7; radius = 1 mm; material = m; }\n"
    "body palm { position = (0, 0.8, 0) m; shape = box; size = (4 cm, 3 cm, 2 cm); density = 1000 kg/m^3;\n"
    "            axis = (0.2, 0.3, 0.9); x_axis = (1, 0.1, 0); }\n"
    "body link { position = (0.05, 0.82, 0.01) m; shape = capsule; radius = 5 mm; length = 3 cm; density = 900 kg/m^3;\n"
    "            axis = (1, 0, 0.2); }\n"
    "body cube { position = (0.02, 0.86, -0.01) m; shape = cylinder; radius = 1 cm; length = 2 cm; mass = 0.1 kg;\n"
    "            axis = (0, 1, 0.3); x_axis = (0.3, 0, 1); }\n"
    "joint r1 { type = revolute; a = palm; b = link; at = (0.03, 0.81, 0.005) m; axis = (0, 0.6, 0.8);\n"
    "           stiffness = 0.1 N*m; damping = 0.01 N*m*s; angle0 = 0.2; limits = (-1e-3, 1e-3);\n"
    "           limit_stiffness = 1 N*m; limit_width = 0.03; motor = angle; target = 0.3 * sin(2 * pi * w * t); }\n"
    "joint r2 { type = revolute; a = link; b = cube; axis = (1, 0, 0); motor = velocity; target = 2 /s; }\n"
    "joint r3 { type = revolute; a = cube; b = palm; axis = (0.6, 0.8, 0); motor = torque; target = 0.5 N*m; }\n"
    "joint p1 { type = prismatic; a = palm; b = cube; axis = (0.36, 0.48, 0.8); linear_stiffness = 50 N/m;\n"
    "           linear_damping = 0.2 N*s/m; offset0 = 1 mm; linear_limits = (-1 mm, 1 mm);\n"
    "           linear_limit_stiffness = 100 N/m; linear_limit_width = 2 cm; motor = position;\n"
    "           target = 1 mm * sin(2 * pi * w * t); }\n"
    "joint p2 { type = prismatic; a = link; b = palm; motor = velocity; target = 1 cm/s; }\n"
    "joint p3 { type = prismatic; a = cube; b = link; axis = (0, 0, 1); motor = force; target = 0.2 N; }\n"
    "joint f1 { type = fixed; a = palm; b = link; }\n"
    "joint s1 { type = spherical; a = cube; b = link; at = (0.04, 0.84, 0) m; }\n"
    "joint u1 { type = universal; a = palm; b = cube; axis = (1, 0, 0); axis2 = (0, 0.6, 0.8); }\n"
    "joint n1 { type = spherical; a = arm.node(6); b = palm; }\n"
    "joint c1 { type = fixed; a = arm.start; b = cube; }\n"
    /* arm.node(6) lies 1 mm beyond the z face of a 10 x 10 x 10.72 cm box about cube's centre */
    "apply node_body_box_contact(arm.node(6), cube; kc = 100 N/m, delta = 5 mm, hx = 5 cm, hy = 5 cm, hz = 53.6 mm);\n"
    "apply node_body_box_friction(arm.node(6), cube; kc = 100 N/m, delta = 5 mm, mu = 0.4, slip_velocity = 10 m/s,\n"
    "                             hx = 5 cm, hy = 5 cm, hz = 53.6 mm);\n"
    "apply body_node_box_friction(cube, arm.node(6); kc = 100 N/m, delta = 5 mm, mu = 0.4, slip_velocity = 10 m/s,\n"
    "                             hx = 5 cm, hy = 5 cm, hz = 53.6 mm);\n"
    /* obstacles within reach of the bodies' corners and spheres (their elements are checked where
     * the penalty acts: the +-2 mm perturbations sweep each corner across several mm) */
    "obstacle sphere ball { center = (0.05, 0.82, 0.03) m; radius = 1.6 cm; stiffness = 100 N/m; delta = 5 mm;\n"
    "                       friction = 0.4; slip_velocity = 10 m/s; }\n"
    "obstacle box crate { center = (0, 0.8, -0.04) m; size = (8 cm, 8 cm, 6 cm); stiffness = 100 N/m; delta = 5 mm;\n"
    "                     friction = 0.4; slip_velocity = 10 m/s; }\n"
    "obstacle cylinder post { center = (0.02, 0.86, -0.01) m; axis = (1, 0, 0); radius = 1.2 cm; length = 4 cm;\n"
    "                         stiffness = 100 N/m; delta = 5 mm; friction = 0.4; slip_velocity = 10 m/s; }\n"
    /* the same obstacles moving (body_moving_*: a ball that moves, a turned crate, a spinning post) and
     * a tilted plane 1 mm below palm's point (body_plane_*) */
    "obstacle sphere ball2 { center = (0.05, 0.82, 0.03) m + (1 mm, 2 mm, 0 mm) * sin(2 * pi * w * t); radius = 1.6 cm;\n"
    "                        stiffness = 100 N/m; delta = 5 mm; friction = 0.4; slip_velocity = 10 m/s; }\n"
    "obstacle box crate2 { center = (0, 0.8, -0.04) m; size = (8 cm, 8 cm, 6 cm); axis = (0.1, 0.2, 1); angle = 0.05;\n"
    "                      stiffness = 100 N/m; delta = 5 mm; friction = 0.4; slip_velocity = 10 m/s; }\n"
    "obstacle cylinder post2 { center = (0.02, 0.86, -0.01) m; axis = (1, 0.1 * sin(2 * pi * w * t), 0); radius = 1.2 cm;\n"
    "                          length = 4 cm; spin = 3 /s; stiffness = 100 N/m; delta = 5 mm; friction = 0.4;\n"
    "                          slip_velocity = 10 m/s; }\n"
    "obstacle plane slab { point = (0 m, 0 m, -8.447 mm); normal = (0.01, 0.02, 1); stiffness = 100 N/m; delta = 5 mm;\n"
    "                      friction = 0.4; slip_velocity = 10 m/s; }\n"
    "rfem chain { path = line((0.1, 0.9, 0) m, (0.2, 0.95, 0.01) m); elements = 2; radius = 2 mm; material = m;\n"
    "             damping = 1 ms; }\n"
    /* palm's point (1, 0.5, -0.4) cm is at z = -7.447 mm: 1 mm above the plane (radius 0) and
     * 1 mm off it as a sphere of 2 mm */
    "apply body_ground_contact(palm; rx = 1 cm, ry = 0.5 cm, rz = -0.4 cm, radius = 0 m, kc = 100 N/m, delta = 5 mm,\n"
    "                          px = 0 m, py = 0 m, pz = -8.447 mm, nx = 0, ny = 0, nz = 1);\n"
    "apply body_ground_friction(palm; rx = 1 cm, ry = 0.5 cm, rz = -0.4 cm, radius = 2 mm, kc = 100 N/m,\n"
    "                           delta = 5 mm, mu = 0.4, slip_velocity = 10 m/s, px = 0 m, py = 0 m, pz = -10.447 mm,\n"
    "                           nx = 0, ny = 0, nz = 1);\n";

/* Contact between edges in every region of their closest points, 10 cm edges placed so that the
 * +-2 mm perturbations keep each pair in its region and within the penalty's reach (h = 2 cm,
 * delta = 5 mm): crossing (interior-interior, s = t = 1/2), a's end against b's middle
 * (endpoint-interior), end against end, and nearly parallel edges overlapping along half their
 * length. edge_friction acts on each of the four nodes (p = a0, a1, b0, b1). */
#define PAIR_ROD(name, x0, y0, z0, x1, y1, z1) \
    "rod " name " { path = line((" #x0 ", " #y0 ", " #z0 ") m, (" #x1 ", " #y1 ", " #z1 ") m); nodes = 2; radius = 1 mm; " \
    "material = m; }\n"
#define EDGE_PAIR(a, b) "apply edge_contact(" a ".start, " a ".end, " b ".start, " b ".end; kc = 100 N/m, delta = 5 mm, h = 2 cm);\n"
#define EDGE_RUB(p, a, b, w) "apply edge_friction(" p ", " a ".start, " a ".end, " b ".start, " b ".end; kc = 100 N/m, " \
    "delta = 5 mm, h = 2 cm, mu = 0.4, slip_velocity = 10 m/s, which = " #w ");\n"
#define FACE_PAIR(p) "apply node_triangle_contact(" p ".start, ab.start, ab.end, cc.start; kc = 100 N/m, delta = 5 mm, " \
    "h = 2 cm);\n"
#define FACE_RUB(q, p, w) "apply node_triangle_friction(" q ", " p ".start, ab.start, ab.end, cc.start; kc = 100 N/m, " \
    "delta = 5 mm, h = 2 cm, mu = 0.4, slip_velocity = 10 m/s, which = " #w ");\n"
static const char *pairs_text =
    "use std.contact;\n"
    "material m { E = 2 MPa; rho = 1200 kg/m^3; nu = 0.4; }\n"
    PAIR_ROD("a", 0, 0, 0, 0.1, 0, 0) PAIR_ROD("cross", 0.05, -0.05, 0.021, 0.05, 0.05, 0.021)
    PAIR_ROD("side", 0.12, -0.05, 0.005, 0.12, 0.05, 0.005) PAIR_ROD("tip", 0.115, 0.01, 0.006, 0.2, 0.1, 0.006)
    PAIR_ROD("along", 0.05, 0.001, 0.0205, 0.15, -0.001, 0.0205)
    EDGE_PAIR("a", "cross") EDGE_PAIR("a", "side") EDGE_PAIR("a", "tip") EDGE_PAIR("a", "along")
    EDGE_RUB("a.start", "a", "cross", 0) EDGE_RUB("a.end", "a", "cross", 1) EDGE_RUB("cross.start", "a", "cross", 2)
    EDGE_RUB("cross.end", "a", "cross", 3) EDGE_RUB("a.end", "a", "side", 1) EDGE_RUB("side.start", "a", "side", 2)
    EDGE_RUB("a.end", "a", "tip", 1) EDGE_RUB("tip.start", "a", "tip", 2) EDGE_RUB("along.end", "a", "along", 3)
    EDGE_RUB("a.start", "a", "along", 0)
    /* A node against the triangle (0, 0, 1), (0.1, 0, 1), (0, 0.1, 1) m in each of the seven
     * regions of its closest point, 2.0-2.1 cm from it (h = 2 cm): the face, the corners, the sides. */
    PAIR_ROD("ab", 0, 0, 1, 0.1, 0, 1) PAIR_ROD("cc", 0, 0.1, 1, 0, 0.2, 1.05)
    PAIR_ROD("face", 0.03, 0.03, 1.0205, 0.03, 0.03, 1.1) PAIR_ROD("ca", -0.014, -0.014, 1.005, -0.1, -0.1, 1.1)
    PAIR_ROD("cb", 0.114, -0.014, 1.005, 0.2, -0.1, 1.1) PAIR_ROD("ccc", -0.014, 0.114, 1.005, -0.1, 0.2, 1.1)
    PAIR_ROD("sab", 0.05, -0.02, 1.005, 0.05, -0.1, 1.1) PAIR_ROD("sac", -0.02, 0.05, 1.005, -0.1, 0.05, 1.1)
    PAIR_ROD("sbc", 0.0637, 0.0637, 1.005, 0.1, 0.1, 1.1)
    FACE_PAIR("face") FACE_PAIR("ca") FACE_PAIR("cb") FACE_PAIR("ccc") FACE_PAIR("sab") FACE_PAIR("sac") FACE_PAIR("sbc")
    FACE_RUB("face.start", "face", 0) FACE_RUB("ab.start", "face", 1) FACE_RUB("ab.end", "face", 2)
    FACE_RUB("cc.start", "face", 3) FACE_RUB("ab.end", "sab", 2) FACE_RUB("cc.start", "sbc", 3)
    FACE_RUB("sac.start", "sac", 0) FACE_RUB("ab.start", "ca", 1);

/* Rods' nodes and edges against rigid bodies of every shape, each node in a region of its
 * shape's surface that the +-2 mm perturbations keep (h = 2 cm, delta = 5 mm): a box's face and
 * corner, a capsule's side and cap, a sphere, a cylinder's side, cap and rim; edges across a
 * capsule's side and a sphere. */
#define BODY_SHAPE(name, x, shape) "body " name " { position = (" #x ", 0, 0.5) m; shape = " shape "; density = 1000 kg/m^3; }\n"
#define BODY_NODE(p, b, shape, r, l, hx, hy, hz) \
    "apply node_body_contact(" p ", " b "; kc = 100 N/m, delta = 5 mm, h = 2 cm, shape = " #shape ", r = " #r " m, l = " \
    #l " m, hx = " #hx " m, hy = " #hy " m, hz = " #hz " m);\n" \
    "apply node_body_friction(" p ", " b "; kc = 100 N/m, delta = 5 mm, h = 2 cm, mu = 0.4, slip_velocity = 10 m/s, " \
    "shape = " #shape ", r = " #r " m, l = " #l " m, hx = " #hx " m, hy = " #hy " m, hz = " #hz " m);\n" \
    "apply body_node_friction(" b ", " p "; kc = 100 N/m, delta = 5 mm, h = 2 cm, mu = 0.4, slip_velocity = 10 m/s, " \
    "shape = " #shape ", r = " #r " m, l = " #l " m, hx = " #hx " m, hy = " #hy " m, hz = " #hz " m);\n"
#define BODY_EDGE(e, b, l) \
    "apply edge_body_contact(" e ".start, " e ".end, " b "; kc = 100 N/m, delta = 5 mm, h = 2 cm, r = 1 cm, l = " l ");\n" \
    "apply edge_body_friction(" e ".start, " e ".start, " e ".end, " b "; kc = 100 N/m, delta = 5 mm, h = 2 cm, mu = 0.4, " \
    "slip_velocity = 10 m/s, r = 1 cm, l = " l ", which = 0);\n" \
    "apply edge_body_friction(" e ".end, " e ".start, " e ".end, " b "; kc = 100 N/m, delta = 5 mm, h = 2 cm, mu = 0.4, " \
    "slip_velocity = 10 m/s, r = 1 cm, l = " l ", which = 1);\n" \
    "apply edge_body_friction_on_body(" b ", " e ".start, " e ".end; kc = 100 N/m, delta = 5 mm, h = 2 cm, mu = 0.4, " \
    "slip_velocity = 10 m/s, r = 1 cm, l = " l ");\n"
static const char *body_pairs_text =
    "use std.contact;\n"
    "material m { E = 2 MPa; rho = 1200 kg/m^3; nu = 0.4; }\n"
    "body crate { position = (0, 0, 0.5) m; shape = box; size = (4 cm, 3 cm, 2 cm); density = 1000 kg/m^3; }\n"
    "body pill { position = (0.3, 0, 0.5) m; shape = capsule; radius = 1 cm; length = 4 cm; density = 1000 kg/m^3; }\n"
    "body ball { position = (0.6, 0, 0.5) m; shape = sphere; radius = 1 cm; density = 1000 kg/m^3; }\n"
    "body can { position = (0.9, 0, 0.5) m; shape = cylinder; radius = 1 cm; length = 4 cm; density = 1000 kg/m^3; }\n"
    PAIR_ROD("n1", 0.005, 0.003, 0.531, 0.005, 0.003, 0.6) PAIR_ROD("n2", 0.032, 0.027, 0.522, 0.1, 0.1, 0.6)
    PAIR_ROD("n3", 0.331, 0.002, 0.5, 0.4, 0.002, 0.5) PAIR_ROD("n4", 0.302, 0.001, 0.551, 0.302, 0.001, 0.6)
    PAIR_ROD("n5", 0.6, 0.003, 0.531, 0.6, 0.003, 0.6) PAIR_ROD("n6", 0.931, 0.002, 0.5, 1.0, 0.002, 0.5)
    PAIR_ROD("n7", 0.902, 0.001, 0.541, 0.902, 0.001, 0.6) PAIR_ROD("n8", 0.924, 0.001, 0.534, 1.0, 0.001, 0.6)
    PAIR_ROD("e1", 0.331, -0.05, 0.505, 0.331, 0.05, 0.505) PAIR_ROD("e2", 0.631, -0.05, 0.503, 0.631, 0.05, 0.503)
    BODY_NODE("n1.start", "crate", 1, 0, 0, 0.02, 0.015, 0.01) BODY_NODE("n2.start", "crate", 1, 0, 0, 0.02, 0.015, 0.01)
    BODY_NODE("n3.start", "pill", 0, 0.01, 0.04, 0, 0, 0) BODY_NODE("n4.start", "pill", 0, 0.01, 0.04, 0, 0, 0)
    BODY_NODE("n5.start", "ball", 0, 0.01, 0, 0, 0, 0) BODY_NODE("n6.start", "can", 2, 0.01, 0.04, 0, 0, 0)
    BODY_NODE("n7.start", "can", 2, 0.01, 0.04, 0, 0, 0) BODY_NODE("n8.start", "can", 2, 0.01, 0.04, 0, 0, 0)
    BODY_EDGE("e1", "pill", "4 cm") BODY_EDGE("e2", "ball", "0 m");

static void body_pairs_checks(void)
{
    TestModel t;
    test_model_open(&t, "body_pairs.srd", body_pairs_text, "rods against bodies test model");
    for (int s = 0; t.ok && s < t.mk.n; s++)
        if (t.mk.sets[s].fn && !kinds_has(&fd_checked, t.mk.sets[s].lowered.kind))
            fd_check_set(&t.mk, t.m, s, "", false, &fd_checked);
    test_model_close(&t);
}

/* The edge pairs' kernels against central differences (the regions: pairs_text). */
static void pairs_checks(void)
{
    TestModel t;
    test_model_open(&t, "pairs.srd", pairs_text, "contact pairs test model");
    for (int s = 0; t.ok && s < t.mk.n; s++)
        if (t.mk.sets[s].fn && !kinds_has(&fd_checked, t.mk.sets[s].lowered.kind))
            fd_check_set(&t.mk, t.m, s, "", false, &fd_checked);
    test_model_close(&t);
}

static void bodies_checks(void)
{
    TestModel t;
    test_model_open(&t, "bodies.srd", bodies_text, "bodies test model");
    for (int s = 0; t.ok && s < t.mk.n; s++) /* the kinds model_text has not checked already */
        if (t.mk.sets[s].fn && !kinds_has(&fd_checked, t.mk.sets[s].lowered.kind))
            fd_check_set(&t.mk, t.m, s, "", false, &fd_checked);
    test_model_close(&t);
}

int main(void)
{
    Arena arena;
    arena_init(&arena);
    Program prog = { 0 };
    srd_model *m = fd_list_model(&arena, &prog);
    check(&tally, m != NULL, "test model elaborates");
    if (!m)
        return 1;
    ModelKernels mk;
    char err[512] = "";
    bool lowered = kernels_lower(&mk, &prog, m, true, err, sizeof err);
    check(&tally, lowered, "every element set lowers (%s)", lowered ? "ok" : err);
    bool jitted = lowered && kernels_jit(&mk, JIT_CHUNK_OPS, err, sizeof err);
    check(&tally, jitted, "kernels JIT-compile (%s)", jitted ? "ok" : err);
    if (!jitted)
        return 1;
    printf("# lower %.2f ms, codegen %.2f ms, jit %.2f ms\n", mk.ms_lower, mk.ms_codegen, mk.ms_jit);
    for (int s = 0; s < mk.n; s++) {
        if (!mk.sets[s].fn)
            continue;
        fd_check_set(&mk, m, s, "", false, &fd_checked);
        if (lowered_reads_twist(&mk.sets[s].lowered))
            kinds_add(&reads_twist, mk.sets[s].lowered.kind, "");
    }
    planar_checks();
    bodies_checks();
    pairs_checks();
    body_pairs_checks();
    check_stdlib_coverage();
    compare_aot(&mk, m);
    compare_interp(&mk, m);
    midedge_checks();
    compare_cache(&mk, &prog, m);
    kernels_free(&mk);
    srd_model_free(m);
    arena_free(&arena);
    diag_reset();
    printf("%d passed, %d failed\n", tally.run - tally.failed, tally.failed);
    return tally.failed != 0;
}
