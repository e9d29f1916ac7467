/* test_elab_tangent.c — elaboration's derivatives along a seeded param (compiler/elab_tangent.c,
 * dual numbers through every formula) against fourth-order central differences of whole
 * elaborations at nearby values: element data, masses, bodies' moments, loads, gravity, damping
 * and the medium, for every param of the catalog models (elab_tangent/: each route a param
 * takes, rigid bodies and joints, a ground by its normal) and of the sensitivity tests' models. Also: a switch (max) within the param's reach is named, a
 * param that moves the geometry is reported as not carried, and the columns elaboration marks
 * as depending on a param include every column a second elaboration with moved params changes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "arena.h"
#include "diag.h"
#include "elab.h"
#include "elab_tangent.h"
#include "kernels.h"
#include "parse.h"

#include "tap.h"

static Tally tally;

static srd_model *elaborate_at(const char *path, Arena *arena, const srd_param *p, double value, const ElabSeed *seed,
                               ElabTangent *t)
{
    Program prog;
    memset(&prog, 0, sizeof prog);
    char spec[256];
    const char *specs[1] = { spec };
    int n = 0;
    if (p) {
        elab_format_override(spec, sizeof spec, p, value);
        n = 1;
    }
    srd_model *m = NULL;
    if (parse_program(arena, path, parse_stdlib_dir(), &prog))
        m = seed ? elab_program_seeded(&prog, arena, path, specs, n, seed, t) : elab_program_with(&prog, arena, path, specs, n);
    diag_flush(stderr);
    return m;
}

/* The numbers a param moves, flattened: every set's data, the DOFs' masses, the loads, gravity,
 * the medium's density and the damping. */
static double *flatten(const srd_model *m, size_t *n)
{
    size_t len = (size_t)m->n_dofs + 3 * (size_t)m->n_loads + 3 * (size_t)m->n_bodies + 6;
    for (int s = 0; s < m->n_sets; s++)
        len += (size_t)m->sets[s].n * (size_t)m->sets[s].n_data;
    double *v = calloc(len + 1, sizeof(double));
    size_t k = 0;
    for (int s = 0; s < m->n_sets; s++)
        for (int i = 0; i < m->sets[s].n * m->sets[s].n_data; i++)
            v[k++] = m->sets[s].data[i];
    for (int d = 0; d < m->n_dofs; d++)
        v[k++] = m->dof_mass[d];
    for (int b = 0; b < m->n_bodies; b++)
        for (int c = 0; c < 3; c++)
            v[k++] = m->bodies[b].inertia[c];
    for (int l = 0; l < m->n_loads; l++)
        for (int c = 0; c < 3; c++)
            v[k++] = m->loads[l].f[c];
    for (int c = 0; c < 3; c++)
        v[k++] = m->gravity[c];
    v[k++] = m->medium_density, v[k++] = m->damping_alpha, v[k++] = m->damping_beta;
    *n = k;
    return v;
}

static double *flatten_tangent(const srd_model *m, const ElabTangent *t, size_t n)
{
    double *v = calloc(n + 1, sizeof(double));
    size_t k = 0;
    for (int s = 0; s < m->n_sets; s++)
        for (int i = 0; i < m->sets[s].n * m->sets[s].n_data; i++)
            v[k++] = t->data[s][i];
    for (int d = 0; d < m->n_dofs; d++)
        v[k++] = t->dof_mass[d];
    for (int b = 0; b < 3 * m->n_bodies; b++)
        v[k++] = t->body_inertia[b];
    for (int l = 0; l < 3 * m->n_loads; l++)
        v[k++] = t->loads[l];
    for (int c = 0; c < 3; c++)
        v[k++] = t->gravity[c];
    v[k++] = t->medium_density, v[k++] = t->damping_alpha, v[k++] = t->damping_beta;
    return v;
}

/* Central fourth-order difference of the flattened numbers along param k (step h), differences
 * first so that numbers the param leaves alone give exactly zero. */
static double *difference_of(const char *path, const srd_param *p, double h, size_t n)
{
    static const double at[4] = { -2, -1, 1, 2 };
    double *f[4];
    for (int i = 0; i < 4; i++) {
        Arena arena;
        arena_init(&arena);
        srd_model *m = elaborate_at(path, &arena, p, p->value + at[i] * h, NULL, NULL);
        size_t len = 0;
        f[i] = m ? flatten(m, &len) : NULL;
        if (f[i] && len != n)
            free(f[i]), f[i] = NULL;
        srd_model_free(m);
        arena_free(&arena);
    }
    double *d = calloc(n + 1, sizeof(double));
    for (size_t j = 0; j < n; j++)
        d[j] = f[0] && f[1] && f[2] && f[3] ? ((f[0][j] - f[3][j]) + 8 * (f[2][j] - f[1][j])) / (12 * h) : NAN;
    for (int i = 0; i < 4; i++)
        free(f[i]);
    return d;
}

/* Worst difference over the largest derivative (or 1e-300). */
static double relative_error(const double *a, const double *b, size_t n)
{
    double worst = 0, scale = 1e-300;
    for (size_t j = 0; j < n; j++)
        scale = fmax(scale, fabs(b[j]));
    for (size_t j = 0; j < n; j++)
        worst = fmax(worst, isnan(b[j]) ? INFINITY : fabs(a[j] - b[j]));
    return worst / scale;
}

static void check_param(const char *path, const srd_model *base, int k)
{
    const srd_param *p = &base->params[k];
    double h = 1e-3 * (p->value != 0 ? fabs(p->value) : p->hi - p->lo);
    ElabSeed seed = { p->name, 2 * h };
    ElabTangent t;
    Arena arena;
    arena_init(&arena);
    srd_model *m = elaborate_at(path, &arena, NULL, 0, &seed, &t);
    size_t n = 0;
    double *v = flatten(m, &n), *exact = flatten_tangent(m, &t, n), *fd = difference_of(path, p, h, n);
    double err = relative_error(exact, fd, n);
    check(&tally, !t.lost && !t.switched && err < 1e-8, "%s: d/d(%s) exact against differences: %.2e (tolerance 1e-8)%s",
          path, p->name, err, t.lost ? ", but the param went where no derivative is carried" : "");
    free(v), free(exact), free(fd);
    srd_model_free(m);
    arena_free(&arena);
}

/* Every column a second elaboration with moved params changes is one elaboration marked. */
static void check_marks(const char *path, srd_model *m)
{
    unsigned char **marked = calloc((size_t)m->n_sets + 1, sizeof *marked);
    bool had = true;
    for (int s = 0; s < m->n_sets; s++) {
        had &= m->sets[s].param_column != NULL;
        marked[s] = m->sets[s].param_column;
        m->sets[s].param_column = NULL;
    }
    char err[512] = "";
    bool ok = kernels_mark_param_columns(path, m, err, sizeof err), covers = had;
    for (int s = 0; s < m->n_sets && covers; s++)
        for (int c = 0; c < m->sets[s].n_data; c++)
            covers &= !m->sets[s].param_column[c] || marked[s][c];
    check(&tally, ok && covers, "%s: the columns elaboration marks include those moving the params changes", path);
    for (int s = 0; s < m->n_sets; s++)
        free(marked[s]);
    free(marked);
}

static void check_model(const char *path)
{
    Arena arena;
    arena_init(&arena);
    srd_model *m = elaborate_at(path, &arena, NULL, 0, NULL, NULL);
    check(&tally, m != NULL, "%s elaborates", path);
    for (int k = 0; m && k < m->n_params; k++)
        if (!m->params[k].shapes && !m->params[k].input)
            check_param(path, m, k);
    if (m)
        check_marks(path, m);
    srd_model_free(m);
    arena_free(&arena);
}

/* Seeded elaboration of `path` along `param`: its tangent's flags. */
static void flags_of(const char *path, const char *param, double reach, bool *lost, bool *switched)
{
    ElabSeed seed = { param, reach };
    ElabTangent t;
    Arena arena;
    arena_init(&arena);
    srd_model *m = elaborate_at(path, &arena, NULL, 0, &seed, &t);
    *lost = !m || t.lost, *switched = m && t.switched;
    srd_model_free(m);
    arena_free(&arena);
}

static void check_flags(void)
{
    bool lost, switched;
    flags_of("elab_tangent/kink.srd", "F", 8e-6, &lost, &switched);
    check(&tally, !lost && switched, "max(F, 4 mN) at F = 4 mN is named a switch");
    flags_of("elab_tangent/kink.srd", "E", 6e-3, &lost, &switched);
    check(&tally, !lost && !switched, "E, far from any switch, is not");
    flags_of("elab_tangent/kink.srd", "L", 2e-4, &lost, &switched);
    check(&tally, lost, "a param in the rod's path (its nodes move) is reported as carried no derivative");
}

int main(void)
{
    static const char *models[] = { "elab_tangent/catalog.srd", "elab_tangent/bodies.srd", "elab_tangent/ground.srd", "elab_tangent/body_contact.srd", "elab_tangent/rfem.srd", "../physics/grad/arm.srd", "../physics/grad/swing.srd",
                                    "../physics/grad_modal/plate.srd", "../physics/grad_modal/lattice.srd",
                                    "../physics/grad_modal/solid.srd", "../../examples/rod_fit.srd" };
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        check_model(models[i]);
    check_flags();
    printf("1..%d\n", tally.run);
    return tally.failed ? 1 : 0;
}
