/* grad.c — `srdc grad` (see grad.h). The equilibrium's derivative is exact given how a param
 * moves the model's data as the runtime sees it (element columns after the schedules, external
 * forces): dR/dp = sum over sets of the tangent kernels along d(columns)/dp, minus d(fext)/dp,
 * and dq/dp = -K^-1 dR/dp. How a param moves the data comes from one elaboration with the param
 * seeded (elab_tangent.h: dual numbers through every formula, so exact). Where that cannot give
 * it (schedules and prescribed motion, whose run-time part is evaluated by the runtime, or a
 * param reaching a value elaboration carries no derivative of) it comes from elaborating the
 * model at four nearby values (a fourth-order central difference, about 1e-11 relative). A
 * param that moves the reference geometry moves the reference configuration (the kernels' step
 * start), the elements' reference state, the held DOFs and the sliding clamps' lines as well:
 * their tangents come from the samples' sims at their start. */
#include "sens/grad.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "clock.h"
#include "diag.h"
#include "elab.h"
#include "elab_tangent.h"
#include "jit.h"
#include "kernels.h"
#include "parse.h"
#include "probe.h"
#include "vec3.h"
#include "sens/modal.h"
#include "sens/objective_grad.h"
#include "sens/schedule_tangent.h"
#include "sens/static.h"
#include "kernel/backend.h"

/* The data the runtime reads at another param value: each set's columns, the external forces
 * and the elements' reference state. */
typedef struct Sample {
    double **columns; /* per set: n * n_data */
    double  *fext;
    double **state;   /* per set: n * n_state */
    double  *mass;    /* per DOF: what the modal analysis reads (modal_dof_mass) */
    double  *q;       /* the start's configuration: held DOFs where prescribed motion puts them */
    double  *q0;      /* the step start's (the reference, but a driven DOF's motion) */
    double  *x0;      /* the nodes' reference positions */
    double  *axis;    /* the sliding clamps' lines' directions (3 per slide) */
    double   contact[5]; /* the contact block's values (ElabTangent.pairs's order) */
    bool     parts_moved; /* the pairs' data beyond the block's differ from the base's */
    bool     ok;
} Sample;

static void contact_values(const srd_model *m, double v[5]);
static bool part_pair_data_differ(const srd_model *a, const srd_model *b);

/* Where messages go: the options' stream (the C API's, to return them), else stderr. */
static FILE *messages(const GradOptions *o) { return o->errors ? o->errors : stderr; }

static int fail(const GradOptions *o, const char *fmt, const char *what)
{
    fprintf(messages(o), fmt, what);
    return SRD_EXIT_BAD_INPUT;
}

/* The model's file with `optimize { minimize = EXPR; }` after it (--objective): its lines are
 * the file's, so messages about EXPR point past its end. */
static bool parse_with_objective(const GradOptions *o, Arena *arena, Program *prog)
{
    FILE *f = fopen(o->file, "rb");
    if (!f) {
        fprintf(messages(o), "srdc: error: cannot read %s\n", o->file);
        return false;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    int c;
    while ((c = fgetc(f)) != EOF)
        fputc(c, out);
    fprintf(out, "\noptimize { minimize = %s; }\n", o->objective);
    fclose(out);
    fclose(f);
    bool ok = parse_program_text(arena, o->file, text, len, parse_stdlib_dir(), prog);
    free(text);
    return ok;
}

static srd_model *elaborate(const GradOptions *o, Arena *arena, Program *prog, const char *extra)
{
    const char **specs = srd_xcalloc((size_t)o->n_overrides + 2, sizeof *specs);
    int n = 0;
    for (int k = 0; k < o->n_overrides; k++)
        if (!extra || srd_override_find(&extra, 1, o->overrides[k]) < 0)
            specs[n++] = o->overrides[k];
    if (extra)
        specs[n++] = extra;
    srd_model *m = NULL;
    if (o->objective ? parse_with_objective(o, arena, prog) : parse_program(arena, o->file, parse_stdlib_dir(), prog)) {
        elab_objective_only(o->objective != NULL);
        m = elab_program_with(prog, arena, o->file, specs, n);
        elab_objective_only(false);
    }
    diag_flush(messages(o));
    free(specs);
    return m;
}

/* The model elaborated once more with a param seeded, for its exact derivative. */
static srd_model *elaborate_seeded(const GradOptions *o, Arena *arena, Program *prog, const ElabSeed *seed,
                                   ElabTangent *t)
{
    memset(t, 0, sizeof *t);
    srd_model *m = NULL;
    if (o->objective ? parse_with_objective(o, arena, prog) : parse_program(arena, o->file, parse_stdlib_dir(), prog)) {
        elab_objective_only(o->objective != NULL);
        m = elab_program_seeded(prog, arena, o->file, (const char *const *)o->overrides, o->n_overrides, seed, t);
        elab_objective_only(false);
    }
    diag_discard();
    return m;
}

/* A sim of model m with the base's kernels, its schedules applied at t = 0. */
static bool sim_of(const StaticPoint *b, const srd_model *m, srd_sim *s, char *err, size_t err_n)
{
    memset(s, 0, sizeof *s);
    const srd_analysis *a = m->statics.present ? &m->statics : &m->simulate;
    if (srd_sim_for_analysis(s, m, &b->kt.table, a, NULL, 0, err, err_n) != 0)
        return false;
    s->tolerance = a->tolerance;
    s->max_iterations = a->max_iterations;
    s->line_search = a->line_search;
    return true;
}

/* Every set's tangent kernels for the input classes of mask (tangent.h) into *out. */
static bool tangents_build(StaticPoint *b, int mask, KernelTangent **out, char *err, size_t err_n)
{
    KernelTangent *t = srd_xcalloc((size_t)b->m->n_sets + 1, sizeof *t);
    bool ok = true;
    for (int k = 0; k < b->m->n_sets && ok; k++)
        ok = !b->mk.sets[k].lowered.kind ||
             kernel_tangent_build(&b->mk.sets[k].lowered, &b->m->sets[k], b->m->n_params, mask, &t[k], err, err_n);
    if (!ok) {
        for (int k = 0; k < b->m->n_sets; k++)
            kernel_tangent_free(&t[k]);
        free(t);
        return false;
    }
    *out = t;
    return true;
}

int static_point_open(StaticPoint *b, const GradOptions *o)
{
    memset(b, 0, sizeof *b);
    arena_init(&b->arena);
    b->m = elaborate(o, &b->arena, &b->prog, NULL);
    if (!b->m)
        return SRD_EXIT_BAD_INPUT;
    char err[1024];
    if (!kernels_mark_param_columns(o->file, b->m, err, sizeof err))
        return fail(o, "srdc: error: %s\n", err);
    b->have_kernels = true;
    if (!kernels_lower(&b->mk, &b->prog, b->m, false, err, sizeof err) || !kernels_jit(&b->mk, JIT_CHUNK_OPS, err, sizeof err))
        return fail(o, "srdc: error: %s\n", err);
    kernels_table_fill(&b->kt, &b->mk);
    b->why_switch = srd_xcalloc((size_t)b->m->n_params + 1, sizeof *b->why_switch);
    if (!tangents_build(b, TANGENT_DATA, &b->data_tangents, err, sizeof err))
        return fail(o, "srdc: error: %s\n", err);
    return sim_of(b, b->m, &b->s, err, sizeof err) ? SRD_EXIT_OK : fail(o, "srdc: error: %s\n", err);
}

bool static_point_tangents(StaticPoint *b, char *err, size_t err_n)
{
    return b->tangents || tangents_build(b, TANGENT_ALL, &b->tangents, err, err_n);
}

bool static_point_compile_tangents(StaticPoint *b, char *err, size_t err_n)
{
    return static_point_tangents(b, err, err_n) &&
           (b->tangent_jit || kernel_tangents_compile(b->tangents, b->m->n_sets, &b->tangent_jit, err, err_n));
}

bool static_point_hessian_tangents(StaticPoint *b, char *err, size_t err_n)
{
    if (b->hessian_tangents)
        return true;
    KernelTangent *t = srd_xcalloc((size_t)b->m->n_sets + 1, sizeof *t);
    bool ok = true;
    for (int k = 0; k < b->m->n_sets && ok; k++)
        ok = !b->mk.sets[k].lowered.kind || kernel_hessian_tangent_build(&b->mk.sets[k].lowered, &b->m->sets[k],
                                                                        b->m->n_params, TANGENT_ALL, &t[k], err, err_n);
    ok = ok && kernel_tangents_compile(t, b->m->n_sets, &b->hessian_jit, err, err_n);
    if (!ok) {
        for (int k = 0; k < b->m->n_sets; k++)
            kernel_tangent_free(&t[k]);
        free(t);
        return false;
    }
    b->hessian_tangents = t;
    return true;
}

void static_point_close(StaticPoint *b)
{
    if (b->tangent_jit)
        srd_backend(NULL, 0)->jit_free(b->tangent_jit);
    if (b->hessian_jit)
        srd_backend(NULL, 0)->jit_free(b->hessian_jit);
    for (int k = 0; b->hessian_tangents && k < b->m->n_sets; k++)
        kernel_tangent_free(&b->hessian_tangents[k]);
    free(b->hessian_tangents);
    if (!b->m) {
        arena_free(&b->arena);
        return;
    }
    schedule_tangents_free(b->schedules);
    for (int k = 0; b->tangents && k < b->m->n_sets; k++)
        kernel_tangent_free(&b->tangents[k]);
    for (int k = 0; b->data_tangents && k < b->m->n_sets; k++)
        kernel_tangent_free(&b->data_tangents[k]);
    free(b->tangents), free(b->data_tangents);
    free(b->why_switch);
    if (b->s.m)
        srd_sim_free(&b->s);
    if (b->have_kernels) {
        kernels_table_free(&b->kt);
        kernels_free(&b->mk);
    }
    srd_model_free(b->m);
    arena_free(&b->arena);
}

static void sample_free(Sample *x, int n_sets)
{
    for (int k = 0; x->columns && k < n_sets; k++) {
        free(x->columns[k]);
        free(x->state[k]);
    }
    free(x->columns);
    free(x->state);
    free(x->fext);
    free(x->q), free(x->q0), free(x->x0), free(x->axis);
    free(x->mass);
    memset(x, 0, sizeof *x);
}

static double *copy_of(const double *a, size_t n)
{
    double *c = srd_xcalloc(n + 1, sizeof(double));
    memcpy(c, a, n * sizeof(double));
    return c;
}

/* Whether two sets' instances join the same nodes and edges: a param that reshapes a generated
 * mesh may keep its counts but not its connections. */
static bool same_stencils(const srd_elemset *a, const srd_elemset *b)
{
    if (a->n_node != b->n_node || a->n_edge != b->n_edge)
        return false;
    size_t nodes = (size_t)a->n * (size_t)a->n_node, edges = (size_t)a->n * (size_t)a->n_edge;
    return (!nodes || !memcmp(a->nodes, b->nodes, nodes * sizeof *a->nodes)) &&
           (!edges || !memcmp(a->edges, b->edges, edges * sizeof *a->edges));
}

/* Whether m has the base model's structure: the same DOFs and element instances. */
static bool same_structure(const srd_model *a, const srd_model *b)
{
    if (a->n_dofs != b->n_dofs || a->n_sets != b->n_sets)
        return false;
    for (int k = 0; k < a->n_sets; k++)
        if (a->sets[k].n != b->sets[k].n || a->sets[k].n_data != b->sets[k].n_data || !same_stencils(&a->sets[k], &b->sets[k]))
            return false;
    return true;
}

bool point_sample_open(const StaticPoint *b, const GradOptions *o, int k, double value, PointSample *x)
{
    memset(x, 0, sizeof *x);
    char spec[512], err[512];
    elab_format_override(spec, sizeof spec, &b->m->params[k], value);
    arena_init(&x->arena);
    x->m = elaborate(o, &x->arena, &x->prog, spec);
    x->ok = x->m && same_structure(b->m, x->m) && sim_of(b, x->m, &x->s, err, sizeof err);
    return x->ok;
}

void point_sample_close(PointSample *x)
{
    if (x->s.m)
        srd_sim_free(&x->s);
    srd_model_free(x->m);
    arena_free(&x->arena);
    memset(x, 0, sizeof *x);
}

/* The runtime's data with param k at `value` (and every other param as given). */
static Sample sample_at(const StaticPoint *b, const GradOptions *o, int k, double value)
{
    Sample x = { 0 };
    PointSample ps;
    if (point_sample_open(b, o, k, value, &ps)) {
        const srd_sim *s = &ps.s;
        int n_sets = ps.m->n_sets;
        x.columns = srd_xcalloc((size_t)n_sets + 1, sizeof *x.columns);
        x.state = srd_xcalloc((size_t)n_sets + 1, sizeof *x.state);
        for (int j = 0; j < n_sets; j++) {
            const srd_elem_batch *bt = &s->kernels[j].batch.b;
            x.columns[j] = copy_of(bt->data, (size_t)bt->n * (size_t)bt->n_data);
            x.state[j] = copy_of(bt->state, (size_t)bt->n * (size_t)bt->n_state);
        }
        x.fext = copy_of(s->fext, (size_t)ps.m->n_dofs);
        x.q = copy_of(s->q, (size_t)ps.m->n_dofs);
        x.q0 = copy_of(s->q0, (size_t)ps.m->n_dofs);
        x.x0 = copy_of(ps.m->x0, 3 * (size_t)ps.m->n_nodes);
        x.axis = copy_of(s->slide_axis, 3 * (size_t)ps.m->n_slides);
        contact_values(ps.m, x.contact);
        x.parts_moved = part_pair_data_differ(b->m, ps.m);
        x.mass = srd_xcalloc((size_t)ps.m->n_dofs + 1, sizeof(double));
        for (int d = 0; d < ps.m->n_dofs; d++)
            x.mass[d] = modal_dof_mass(ps.m, d);
        x.ok = true;
    }
    point_sample_close(&ps);
    return x;
}

bool point_stencil(const srd_param *p, Stencil *st)
{
    double v = p->value, h = schedule_switch_step(p); /* the one step every derivative test shares */
    static const double central[4] = { 1, -8, 8, -1 }, one_sided[4] = { -11, 18, -9, 2 };
    if (v - 2 * h >= p->lo && v + 2 * h <= p->hi) {
        for (int i = 0; i < 4; i++) {
            st->at[i] = v + h * (i < 2 ? i - 2 : i - 1);
            st->w[i] = central[i] / (12 * h);
        }
        return true;
    }
    double dir = v + 3 * h <= p->hi ? 1 : v - 3 * h >= p->lo ? -1 : 0;
    for (int i = 0; i < 4; i++) {
        st->at[i] = v + dir * i * h;
        st->w[i] = dir * one_sided[i] / (6 * h);
    }
    return dir != 0;
}

bool point_switches(const Stencil *st, const double *const *f, const double *base, const double *d, size_t n,
                    size_t width)
{
    if (!(st->at[2] - st->at[1] > 1.5 * (st->at[1] - st->at[0]) && st->at[1] > st->at[0]))
        return false; /* a one-sided stencil (equal steps) has no value in its middle to test against */
    double h = (st->at[2] - st->at[1]) / 2;
    for (size_t c = 0; c < width; c++) {
        double slope = 0, size = 0;
        for (size_t i = c; i < n; i += width)
            slope = fmax(slope, fabs(d[i])), size = fmax(size, fabs(base[i]));
        for (size_t i = c; i < n; i += width) {
            double fourth = f[0][i] - 4 * f[1][i] + 6 * base[i] - 4 * f[2][i] + f[3][i];
            if (fabs(fourth) > 1e-3 * h * slope + 1e-12 * size)
                return true;
        }
    }
    return false;
}

/* The contact block's values in ElabTangent.pairs's order. */
static void contact_values(const srd_model *m, double v[5])
{
    const srd_self_contact *c = &m->self_contact;
    v[0] = c->delta, v[1] = c->stiffness, v[2] = c->friction, v[3] = c->slip_velocity, v[4] = c->radius;
}

/* Whether the pairs' data of a and b differ beyond the contact block's: a part's own contact
 * radius (none given in `contact`), a rigid body's shape. */
static bool part_pair_data_differ(const srd_model *a, const srd_model *b)
{
    for (int o = 0; a->self_contact.radius <= 0 && o < a->n_objects; o++)
        if (srd_contact_radius(a, o) != srd_contact_radius(b, o))
            return true;
    for (int k = 0; k < a->n_bodies; k++)
        if (memcmp(a->bodies[k].size, b->bodies[k].size, sizeof a->bodies[k].size) || a->bodies[k].shape != b->bodies[k].shape)
            return true;
    return false;
}

bool point_pairs_of_samples(const srd_model *base, const srd_model *const models[4], const Stencil *st,
                            double dpairs[5])
{
    memset(dpairs, 0, 5 * sizeof(double));
    bool same = true;
    for (int i = 0; i < 4; i++) {
        double v[5];
        contact_values(models[i], v);
        for (int c = 0; c < 5; c++)
            dpairs[c] += st->w[i] * v[c];
        same &= !part_pair_data_differ(base, models[i]);
    }
    return same;
}

/* sum_i w_i f_i, entry by entry. */
static double *difference(double *const *f, size_t n, const Stencil *st)
{
    double *d = srd_xcalloc(n + 1, sizeof(double));
    for (size_t i = 0; i < n; i++)
        d[i] = st->w[0] * f[0][i] + st->w[1] * f[1][i] + st->w[2] * f[2][i] + st->w[3] * f[3][i];
    return d;
}

/* Whether the reference geometry moves with the param: the nodes' reference positions or the
 * elements' reference state (frames, rest lengths, reference positions, masses). */
static bool geometry_moves(const StaticPoint *b, const Sample *x)
{
    for (int p = 1; p < 4; p++) {
        if (memcmp(x[0].x0, x[p].x0, 3 * (size_t)b->m->n_nodes * sizeof(double)))
            return true;
        for (int j = 0; j < b->m->n_sets; j++) {
            const srd_elem_batch *bt = &b->s.kernels[j].batch.b;
            if (memcmp(x[0].state[j], x[p].state[j], (size_t)bt->n * (size_t)bt->n_state * sizeof(double)))
                return true;
        }
    }
    return false;
}

/* Where a moving reference geometry is not derived: rigid bodies (their axes and inertia are the
 * reference's). */
static bool geometry_derivable(const StaticPoint *b)
{
    return !b->m->n_bodies;
}


/* How a param moves the runtime's data: each set's columns (after the schedules at t = 0), the
 * external forces, the masses and the held DOFs (prescribed motion). */
typedef struct Deriv {
    double **columns;
    double  *fext, *mass, *held;
    double  *q0;     /* the reference configuration's (the step start's), when the geometry moves */
    double **state;  /* per set: the elements' reference state's, then too */
    double  *axis;   /* the sliding clamps' lines' directions', then too (3 per slide) */
    double  *slide;  /* where the lines take their sliding nodes across them (n_dofs), then too */
    double   pairs[5]; /* the `contact` block's values' (ElabTangent.pairs) */
    double  *radius;   /* per object: its own contact radius' (NULL: none moves) */
    bool     turns_clamps; /* it moves a rotation that turns rod frames or a sliding line */
} Deriv;

static void deriv_free(Deriv *d, int n_sets)
{
    for (int j = 0; d->columns && j < n_sets; j++)
        free(d->columns[j]);
    for (int j = 0; d->state && j < n_sets; j++)
        free(d->state[j]);
    free(d->columns), free(d->fext), free(d->mass), free(d->held), free(d->q0), free(d->state);
    free(d->axis), free(d->slide), free(d->radius);
    memset(d, 0, sizeof *d);
}

/* ---- by differences of four samples ---- */

/* How prescribed motion moves the held DOFs (zero on free ones). */
static double *held_derivative(const StaticPoint *b, const Sample *x, const Stencil *st)
{
    double *f[4] = { x[0].q, x[1].q, x[2].q, x[3].q };
    double *dq = difference(f, (size_t)b->m->n_dofs, st);
    for (int d = 0; d < b->m->n_dofs; d++)
        if (b->s.solver.sys.free_index[d] >= 0)
            dq[d] = 0;
    return dq;
}

/* Whether prescribed motion moves where the param puts the driven DOFs. */
static bool motion_moves(const StaticPoint *b, const Sample *x)
{
    for (int d = 0; d < b->m->n_dofs; d++)
        if (b->s.solver.sys.free_index[d] < 0)
            for (int i = 1; i < 4; i++)
                if (x[i].q[d] != x[0].q[d])
                    return true;
    return false;
}

/* The natural shapes the runtime measures from the reference (natural.h) hold, in sample f, the
 * base's values (base: the base sim's columns of set): they are smooth functions of the
 * reference positions, whose rounding (a straight rod's curvature, 1e-14 /m) no switch test can
 * tell from a kink. */
static void hold_measured_natural(const srd_elemset *set, const double *base, double *f)
{
    static const char *const names[] = { "kappa1_bar", "kappa2_bar", "tau_bar", "phi_bar" };
    int flag = srd_elemset_column(set, "natural_from_reference"), cols[4];
    for (int k = 0; k < 4; k++)
        cols[k] = srd_elemset_column(set, names[k]);
    for (int i = 0; flag >= 0 && i < set->n; i++) {
        const double *row = &base[(size_t)i * set->n_data];
        for (int k = 0; row[flag] != 0 && k < 4; k++)
            if (cols[k] >= 0)
                f[(size_t)i * set->n_data + cols[k]] = row[cols[k]];
    }
}

/* Whether the samples straddle a switch of the data or the loads (point_switches); the natural
 * shapes measured from the reference are left out. */
static bool samples_switch(const StaticPoint *b, const Sample *x, const Stencil *st)
{
    bool kink = false;
    for (int j = 0; j < b->m->n_sets && !kink; j++) {
        const srd_elem_batch *bt = &b->s.kernels[j].batch.b;
        size_t n = (size_t)b->m->sets[j].n * (size_t)bt->n_data; /* a pairs' set: none in the samples */
        double *f[4];
        for (int i = 0; i < 4; i++) {
            f[i] = copy_of(x[i].columns[j], n);
            hold_measured_natural(&b->m->sets[j], bt->data, f[i]);
        }
        double *d = difference(f, n, st);
        kink = point_switches(st, (const double *const *)f, bt->data, d, n, (size_t)bt->n_data);
        free(d);
        for (int i = 0; i < 4; i++)
            free(f[i]);
    }
    const double *f[4] = { x[0].fext, x[1].fext, x[2].fext, x[3].fext };
    double *d = difference((double *const *)f, (size_t)b->m->n_dofs, st);
    kink |= point_switches(st, f, b->s.fext, d, (size_t)b->m->n_dofs, 1);
    free(d);
    return kink;
}

static void samples_free(Sample *x, int n_sets)
{
    for (int i = 0; i < 4; i++)
        sample_free(&x[i], n_sets);
}

static void deriv_of_samples(const StaticPoint *b, const Sample *x, const Stencil *st, Deriv *d)
{
    const srd_model *m = b->m;
    d->columns = srd_xcalloc((size_t)m->n_sets + 1, sizeof *d->columns);
    for (int j = 0; j < m->n_sets; j++) {
        double *f[4] = { x[0].columns[j], x[1].columns[j], x[2].columns[j], x[3].columns[j] };
        d->columns[j] = difference(f, (size_t)m->sets[j].n * (size_t)m->sets[j].n_data, st);
    }
    double *f[4] = { x[0].fext, x[1].fext, x[2].fext, x[3].fext };
    d->fext = difference(f, (size_t)m->n_dofs, st);
    double *g[4] = { x[0].mass, x[1].mass, x[2].mass, x[3].mass };
    d->mass = difference(g, (size_t)m->n_dofs, st);
    d->held = held_derivative(b, x, st);
    for (int i = 0; i < 4; i++)
        for (int c = 0; c < 5; c++)
            d->pairs[c] += st->w[i] * x[i].contact[c];
    sens_pair_columns(&b->s, d->pairs, NULL, d->columns); /* the pairs the equilibrium holds */
}

/* The reference geometry's tangents: the step start's configuration and the elements' state. */
static void geometry_of_samples(const StaticPoint *b, const Sample *x, const Stencil *st, Deriv *d)
{
    const srd_model *m = b->m;
    double *f[4] = { x[0].q0, x[1].q0, x[2].q0, x[3].q0 };
    d->q0 = difference(f, (size_t)m->n_dofs, st);
    d->state = srd_xcalloc((size_t)m->n_sets + 1, sizeof *d->state);
    for (int j = 0; j < m->n_sets; j++) {
        const srd_elem_batch *bt = &b->s.kernels[j].batch.b;
        double *g[4] = { x[0].state[j], x[1].state[j], x[2].state[j], x[3].state[j] };
        d->state[j] = difference(g, (size_t)bt->n * (size_t)bt->n_state, st);
    }
    double *a[4] = { x[0].axis, x[1].axis, x[2].axis, x[3].axis };
    d->axis = difference(a, 3 * (size_t)m->n_slides, st);
    d->slide = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    sens_slide_motion(&b->s, b->s.q, d->held, d->axis, d->slide); /* the anchors are held */
}

/* The derivative from elaborations at four nearby values: STATIC_DERIVED (or MOVES_MOTION,
 * which a static derivative carries), or why not. */
static int sampled_derivative(StaticPoint *b, const GradOptions *o, int k, Deriv *d)
{
    Stencil st;
    Sample x[4];
    memset(x, 0, sizeof x);
    if (!point_stencil(&b->m->params[k], &st))
        return STATIC_OUTSIDE_RANGE;
    bool ok = true;
    for (int i = 0; i < 4; i++) {
        x[i] = sample_at(b, o, k, st.at[i]);
        ok &= x[i].ok;
    }
    bool moved = ok && geometry_moves(b, x), parts = false;
    for (int i = 0; i < 4 && ok && b->s.pairs; i++)
        parts |= x[i].parts_moved;
    int status = !ok ? STATIC_NOT_SAMPLED : parts ? STATIC_MOVES_PAIRS : moved && !geometry_derivable(b) ? STATIC_MOVES_GEOMETRY
               : samples_switch(b, x, &st) ? STATIC_NOT_SMOOTH : motion_moves(b, x) ? STATIC_MOVES_MOTION : STATIC_DERIVED;
    if (status == STATIC_DERIVED || status == STATIC_MOVES_MOTION)
        deriv_of_samples(b, x, &st, d);
    if ((status == STATIC_DERIVED || status == STATIC_MOVES_MOTION) && moved)
        geometry_of_samples(b, x, &st, d);
    for (int i = 1; i < 4 && ok && !moved; i++) /* lines that turn without the geometry: a rotation's */
        d->turns_clamps |= memcmp(x[0].axis, x[i].axis, 3 * sizeof(double) * (size_t)b->m->n_slides) != 0;
    samples_free(x, b->m->n_sets);
    return status;
}

/* SRD_GRAD_BY_DIFFERENCES=1 takes every derivative from the samples (tests compare the two). */
static bool by_differences(void)
{
    const char *v = getenv("SRD_GRAD_BY_DIFFERENCES");
    return v && *v && strcmp(v, "0");
}

/* ---- exactly, from elaboration (elab_tangent.h) and the schedules' tangents ---- */

/* d(constant external forces)/dp as the runtime builds them (external_forces in sim.c):
 * gravity on the masses, in a medium reduced by buoyancy, and the constant loads. */
static double *fext_derivative(const srd_model *m, const ElabTangent *t)
{
    double *df = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    for (int i = 0; m->has_gravity && i < m->n_nodes; i++) {
        int dof = m->node_dof[i], obj = m->node_object[i];
        double g = 1, dg = 0, rho = m->objects[obj].rho;
        if (m->medium_density > 0 && rho > 0) {
            g = 1 - m->medium_density / rho;
            dg = -t->medium_density / rho + m->medium_density * t->object_rho[obj] / (rho * rho);
        }
        for (int c = 0; c < 3; c++)
            df[dof + c] += t->dof_mass[dof + c] * m->gravity[c] * g + m->node_mass[i] * (t->gravity[c] * g + m->gravity[c] * dg);
    }
    for (int l = 0; l < m->n_loads; l++)
        for (int c = 0; c < 3; c++)
            df[m->node_dof[m->loads[l].node] + c] += t->loads[3 * l + c];
    return df;
}

static void static_tangent_fill(const srd_model *m, const ElabTangent *e, StaticTangent *t)
{
    t->data = srd_xcalloc((size_t)m->n_sets + 1, sizeof *t->data);
    for (int j = 0; j < m->n_sets; j++)
        t->data[j] = copy_of(e->data[j], (size_t)m->sets[j].n * (size_t)m->sets[j].n_data);
    t->fext = fext_derivative(m, e);
    t->mass = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    for (int k = 0; k < m->n_dofs; k++) /* what modal_dof_mass reads: a rotation's is a principal moment */
        t->mass[k] = m->dof_kind[k] == SRD_DOF_ROT ? e->body_inertia[3 * m->dof_owner[k] + k - m->node_dof[m->bodies[m->dof_owner[k]].node] - 3]
                                                   : e->dof_mass[k];
    t->E = copy_of(e->object_E, (size_t)m->n_objects);
    t->alpha = e->damping_alpha;
    t->beta = e->damping_beta;
    t->switched = e->switched;
    t->radius = copy_of(e->object_contact_radius, (size_t)m->n_objects);
    t->moves_release = e->moves_release;
    memcpy(t->pairs, e->pairs, sizeof t->pairs);
    t->dinit = copy_of(e->control_init, (size_t)m->control.n_data);
}

bool static_point_tangent(StaticPoint *b, const GradOptions *o, int k, StaticTangent *t)
{
    memset(t, 0, sizeof *t);
    const srd_param *p = &b->m->params[k];
    ElabSeed seed = { p->name, 2 * schedule_switch_step(p) }; /* the reach of point_stencil's samples */
    ElabTangent e;
    Arena arena;
    Program prog;
    arena_init(&arena);
    memset(&prog, 0, sizeof prog);
    srd_model *m = p->shapes || by_differences() ? NULL : elaborate_seeded(o, &arena, &prog, &seed, &e);
    bool ok = m && same_structure(b->m, m) && !e.lost;
    if (ok)
        static_tangent_fill(b->m, &e, t);
    srd_model_free(m);
    arena_free(&arena);
    return ok;
}

void static_tangent_free(StaticTangent *t, int n_sets)
{
    for (int j = 0; t->data && j < n_sets; j++)
        free(t->data[j]);
    free(t->data), free(t->fext), free(t->mass), free(t->E), free(t->dinit), free(t->radius);
    memset(t, 0, sizeof *t);
}

ScheduleTangents *static_point_schedules(StaticPoint *b)
{
    if (!b->schedules_tried) {
        char err[256];
        b->schedules_tried = true;
        b->schedules = schedule_tangents_build(&b->mk, b->m, err, sizeof err);
    }
    return b->schedules;
}

/* What the schedules and prescribed motion make of the static tangent where the static analysis
 * starts (its sim's time): the columns and loads they write, and the held DOFs. True when one of
 * their switches lies within the param's reach. */
static bool schedules_at_start(StaticPoint *b, int k, const StaticTangent *st, Deriv *d)
{
    const srd_sim *s = &b->s;
    const ScheduleTangents *T = static_point_schedules(b);
    double hk = schedule_switch_step(&b->m->params[k]);
    double *dp = srd_xcalloc((size_t)b->m->n_params + 1, sizeof(double));
    dp[k] = 1;
    bool kink = schedule_tangents_apply(T, &s->schedules, b->m, s->params, dp, hk, s->t, s->step_dt, s->dt, st->E,
                                        d->columns, d->fext);
    if (!b->m->n_motions) {
        free(dp);
        return kink;
    }
    size_t n = (size_t)b->m->n_dofs + 1;
    double *dv = srd_xcalloc(n, sizeof(double)), *da = srd_xcalloc(n, sizeof(double));
    kink |= schedule_tangents_motion(T, &s->schedules, b->m, s->params, dp, hk, s->t, s->step_dt, s->fixed, d->held,
                                     dv, da);
    d->turns_clamps = schedule_tangents_turn_clamps(T, &s->schedules, b->m, s->params, dp, s->t, s->step_dt);
    for (int i = 0; i < b->m->n_dofs; i++)
        if (s->solver.sys.free_index[i] >= 0)
            d->held[i] = 0;
    free(dv), free(da), free(dp);
    return kink;
}

static bool holds_motion(const StaticPoint *b, const Deriv *d)
{
    for (int i = 0; i < b->m->n_dofs; i++)
        if (d->held[i] != 0)
            return true;
    return false;
}

/* The derivative from one seeded elaboration and the schedules' tangents: STATIC_DERIVED (or
 * MOVES_MOTION), STATIC_NOT_SMOOTH, or -1 when elaboration cannot give it (then the samples do). */
static int exact_derivative(StaticPoint *b, const GradOptions *o, int k, Deriv *d)
{
    bool scheduled = b->s.schedules.n > 0 || b->m->n_motions > 0;
    StaticTangent st;
    if ((scheduled && !static_point_schedules(b)) || !static_point_tangent(b, o, k, &st))
        return -1;
    d->columns = st.data, d->fext = st.fext, d->mass = st.mass;
    st.data = NULL, st.fext = NULL, st.mass = NULL;
    memcpy(d->pairs, st.pairs, sizeof d->pairs);
    d->radius = st.radius, st.radius = NULL;
    sens_pair_columns(&b->s, d->pairs, d->radius, d->columns); /* the pairs the equilibrium holds */
    d->held = srd_xcalloc((size_t)b->m->n_dofs + 1, sizeof(double));
    bool kink = st.switched || (scheduled && schedules_at_start(b, k, &st, d));
    static_tangent_free(&st, b->m->n_sets);
    return kink ? STATIC_NOT_SMOOTH : holds_motion(b, d) ? STATIC_MOVES_MOTION : STATIC_DERIVED;
}

/* Prescribed motion that moves a sliding clamp's anchor moves its line, and the sliding node
 * across it with the anchor (d->slide, unless a moving geometry gave it already); a rotation
 * would turn the line: STATIC_TURNS_CLAMP. */
static int slides_follow_anchors(const StaticPoint *b, Deriv *d, int status)
{
    const srd_model *m = b->m;
    int how = d->held ? sens_anchors_moved(m, d->held) : SENS_ANCHORS_STILL;
    if (d->turns_clamps || how == SENS_ANCHORS_TURNED)
        return STATIC_TURNS_CLAMP;
    if (how == SENS_ANCHORS_STILL || d->slide)
        return status;
    d->slide = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    sens_slide_motion(&b->s, b->s.q, d->held, NULL, d->slide);
    return status;
}

static int param_derivative(StaticPoint *b, const GradOptions *o, int k, Deriv *d)
{
    memset(d, 0, sizeof *d);
    int status = exact_derivative(b, o, k, d);
    status = status >= 0 ? status : sampled_derivative(b, o, k, d);
    return status == STATIC_DERIVED || status == STATIC_MOVES_MOTION ? slides_follow_anchors(b, d, status) : status;
}

static bool all_zero(const double *x, int n)
{
    for (int i = 0; i < n; i++)
        if (x[i] != 0)
            return false;
    return true;
}

/* d(residual)/d(param) (free rows). */
static void residual_derivative(StaticPoint *b, int k, const Deriv *dd, double *g)
{
    const srd_model *m = b->m;
    double *dparams = srd_xcalloc((size_t)m->n_params + 1, sizeof(double));
    dparams[k] = 1; /* kernels that read the param itself */
    /* Without held DOFs moving, the data and params' tangent kernels serve, in a fraction of the
     * time of the whole ones (static_point_tangents has built those). */
    bool still = all_zero(dd->held, m->n_dofs) && !dd->q0;
    double *moved = copy_of(dd->held, (size_t)m->n_dofs); /* the held DOFs and the slides' lines */
    for (int d = 0; dd->slide && d < m->n_dofs; d++)
        moved[d] += dd->slide[d];
    sens_residual_tangent_moved(&b->s, still ? b->data_tangents : b->tangents, dd->columns, dparams,
                                still ? NULL : moved, dd->q0, dd->state, g);
    free(dparams), free(moved);
    for (int d = 0; d < m->n_dofs; d++) {
        int r = b->s.solver.sys.free_index[d];
        if (r >= 0)
            g[r] -= dd->fext[d];
    }
    if (dd->axis && m->n_slides) { /* a turning line: the sliding node's row along it turns too */
        double *res = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
        srd_sim_reactions(&b->s, res);
        sens_slides_turn_rows(&b->s, res, dd->axis, g);
        free(res);
    }
}

/* Adds into g (n_dofs, a row for every DOF, held ones included) the residual's change along
 * param k of instances [lo, hi) of set j: moved along dq (all DOFs, held ones by their motion),
 * the data and the param itself. A set whose kernel needs a time step has none in a static
 * state (as srd_sim_instance_gradient). */
static void every_dof_tangent(StaticPoint *b, int k, const Deriv *dd, const double *dq, int j, int lo, int hi,
                              double *g)
{
    srd_sim *s = &b->s;
    if (s->kernels[j].info.needs_time_step || hi <= lo)
        return;
    double *dparams = srd_xcalloc((size_t)b->m->n_params + 1, sizeof(double)), energy = 0;
    dparams[k] = 1;
    srd_eval_ctx ctx = { s->q, s->q0, s->v0, s->params, s->t, s->dt, &energy, g, NULL };
    srd_elem_batch part = srd_batch_every_dof(&s->kernels[j].batch.b, lo, hi);
    InputTangents w = { .dq = dq, .dq0 = dd->q0, .dstate = dd->state ? dd->state[j] + (size_t)lo * part.n_state : NULL,
                        .ddata = dd->columns[j] + (size_t)lo * part.n_data, .dparams = dparams };
    kernel_tangent_forward(&b->tangents[j], &ctx, &part, &w);
    free(dparams);
}

/* d(reactions)/dp (srd_sim_reactions along param k): every DOF's residual moved along the
 * param, minus the forces' change; a sliding node keeps its part across its line, which does
 * not move. */
static void reaction_derivative(StaticPoint *b, int k, const Deriv *dd, const double *dq, double *dr)
{
    srd_sim *s = &b->s;
    const srd_model *m = b->m;
    memset(dr, 0, sizeof(double) * (size_t)m->n_dofs);
    for (int j = 0; j < m->n_sets; j++)
        every_dof_tangent(b, k, dd, dq, j, 0, s->kernels[j].batch.b.n, dr);
    for (int d = 0; d < m->n_dofs; d++)
        dr[d] -= s->load_factor * dd->fext[d];
    double *r = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    srd_sim_reactions(s, r); /* across the lines: a . r vanishes there */
    sens_reactions_across(s, r, dd->axis, dr);
    free(r);
}

/* d(the force the ground or an obstacle exerts, summed over the nodes)/dp for contact probe pr:
 * minus its contact elements' residual moved along the param (friction, which acts in
 * simulations only, has none in a static state). Parts on each other are not derived. */
static void contact_derivative(StaticPoint *b, int k, const srd_probe *pr, const Deriv *dd, const double *dq, double *out)
{
    const srd_model *m = b->m;
    bool parts = pr->target == SRD_CONTACT_PARTS;
    double *g = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    for (int j = 0, lo, hi; j < m->n_sets && !parts; j++)
        if (srd_sim_contact_instances(m, j, pr->target, &lo, &hi))
            every_dof_tangent(b, k, dd, dq, j, lo, hi, g);
    for (int c = 0; c < 3; c++)
        out[c] = parts ? NAN : 0;
    for (int i = 0; i < m->n_nodes && !parts; i++)
        for (int c = 0; c < 3; c++)
            out[c] -= g[m->node_dof[i] + c];
    free(g);
}

/* The static block's contact probes' derivatives, 3 values per probe (others left alone). */
static void contact_derivatives(StaticPoint *b, int k, const Deriv *dd, const double *dq, double *dcontact)
{
    const srd_analysis *a = &b->m->statics;
    for (int i = 0; i < a->n_probes; i++)
        if (a->probes[i].kind == SRD_PROBE_CONTACT)
            contact_derivative(b, k, &a->probes[i], dd, dq, &dcontact[3 * i]);
}

int static_point_derivative_all(StaticPoint *b, const GradOptions *o, int k, double *dq, double *dreaction,
                                double *dcontact)
{
    Deriv dd;
    char err[256];
    int status = param_derivative(b, o, k, &dd);
    bool whole = dreaction || dcontact || dd.q0 || (dd.held && !all_zero(dd.held, b->m->n_dofs)); /* every input's tangents */
    if ((status == STATIC_DERIVED || status == STATIC_MOVES_MOTION) && whole && !static_point_tangents(b, err, sizeof err)) {
        fprintf(messages(o), "srdc: error: %s\n", err);
        status = STATIC_NO_KERNELS;
    }
    if (status == STATIC_DERIVED || status == STATIC_MOVES_MOTION) { /* the held DOFs' motion as a tangent */
        double *g = srd_xcalloc(srd_system_grad_len(&b->s.solver.sys), sizeof(double));
        residual_derivative(b, k, &dd, g);
        status = srd_sim_static_sensitivity(&b->s, g, dq) ? STATIC_SINGULAR : STATIC_DERIVED;
        for (int d = 0; d < b->m->n_dofs && status == STATIC_DERIVED; d++)
            if (b->s.solver.sys.free_index[d] < 0)
                dq[d] = dd.held[d];
            else if (dd.slide)
                dq[d] += dd.slide[d];
        if (status == STATIC_DERIVED && dreaction)
            reaction_derivative(b, k, &dd, dq, dreaction);
        if (status == STATIC_DERIVED && dcontact)
            contact_derivatives(b, k, &dd, dq, dcontact);
        free(g);
    }
    deriv_free(&dd, b->m->n_sets);
    return status;
}

int static_point_derivative(StaticPoint *b, const GradOptions *o, int k, double *dq)
{
    return static_point_derivative_all(b, o, k, dq, NULL, NULL);
}

/* ---- How a param moves the data, for modal sensitivities (modal.c) ---- */

int static_point_data_derivative(StaticPoint *b, const GradOptions *o, int k, DataDerivative *d)
{
    memset(d, 0, sizeof *d);
    Deriv dd;
    int status = param_derivative(b, o, k, &dd);
    if (status == STATIC_MOVES_MOTION && dd.q0 && !b->m->n_motions)
        status = STATIC_DERIVED; /* the held DOFs move with the reference alone */
    else if (status == STATIC_MOVES_MOTION && dd.q0)
        status = STATIC_MOVES_GEOMETRY;
    if (status == STATIC_DERIVED) {
        d->columns = dd.columns, d->mass = dd.mass, d->q0 = dd.q0, d->state = dd.state, d->axis = dd.axis;
        dd.columns = NULL, dd.mass = NULL, dd.q0 = NULL, dd.state = NULL, dd.axis = NULL;
        memcpy(d->pairs, dd.pairs, sizeof d->pairs);
        d->radius = dd.radius, dd.radius = NULL;
    }
    deriv_free(&dd, b->m->n_sets);
    return status;
}

void data_derivative_free(DataDerivative *d, int n_sets)
{
    for (int j = 0; d->columns && j < n_sets; j++)
        free(d->columns[j]);
    for (int j = 0; d->state && j < n_sets; j++)
        free(d->state[j]);
    free(d->columns), free(d->state);
    free(d->mass), free(d->q0), free(d->axis), free(d->radius);
    memset(d, 0, sizeof *d);
}

/* "m/Pa": the probe's unit over the param's ("1": the probe's alone). */
/* "/Pa", "/(kg/m^3)": per the param's unit ("" for a pure number). */
static void per_unit(const srd_param *p, char *buf, size_t n)
{
    bool compound = strchr(p->unit, '*') || strchr(p->unit, '/');
    if (!strcmp(p->unit, "1"))
        snprintf(buf, n, "%s", "");
    else
        snprintf(buf, n, compound ? "/(%s)" : "/%s", p->unit);
}

/* "m/Pa": the probe's unit over the param's ("rad" for a twist). */
static void unit_of(const srd_model *m, const srd_probe *pr, const srd_param *p, char *buf, size_t n)
{
    bool angle = pr->dof >= 0 && m->dof_kind[pr->dof] == SRD_DOF_TWIST;
    char per[96];
    per_unit(p, per, sizeof per);
    snprintf(buf, n, "%s%s", angle ? "rad" : "m", per);
}

void grad_print_param_head(const srd_param *p)
{
    printf("%s = %.9g %s:\n", p->name, p->value, strcmp(p->unit, "1") ? p->unit : "");
}

bool grad_print_param_head_or_why(const srd_param *p, int status)
{
    if (status == -1)
        printf("%s: sets the discretisation, no derivative\n", p->name);
    else if (status != STATIC_DERIVED)
        printf("%s: %s\n", p->name, static_point_why(status));
    else
        grad_print_param_head(p);
    return status == STATIC_DERIVED;
}

/* A reaction probe's derivative: its force (N per the param's unit) and moment (N*m per). */
static void print_reaction(const StaticPoint *b, const srd_probe *pr, const srd_param *p, const double *dq,
                           const double *r, const double *dr)
{
    double dfm[6];
    srd_probe_reaction_tangent(b->m, pr, b->s.q, r, dq, dr, dfm);
    grad_print_force(b->m, pr, p, dfm);
}

void grad_print_probe(const srd_model *m, const srd_probe *pr, const srd_param *p, const double *dq)
{
    char unit[128];
    unit_of(m, pr, p, unit, sizeof unit);
    if (pr->kind == SRD_PROBE_BODY || pr->kind == SRD_PROBE_JOINT)
        printf("  d(%s)/d(%s): not derived (a body's or a joint's probe)\n", pr->name, p->name);
    else if (pr->kind != SRD_PROBE_STATE)
        printf("  d(%s)/d(%s): not derived (a force probe)\n", pr->name, p->name);
    else if (pr->dof >= 0)
        printf("  d(%s)/d(%s) = %.12e %s\n", pr->name, p->name, dq[pr->dof], unit);
    else {
        const double *d = &dq[m->node_dof[pr->node]];
        printf("  d(%s)/d(%s) = (%.12e, %.12e, %.12e) %s\n", pr->name, p->name, d[0], d[1], d[2], unit);
    }
}

const char *static_point_why(int status)
{
    static const char *const why[] = {
        "",
        "the stiffness is singular",
        ("it moves the reference geometry: derived, but not yet with rigid bodies, in a simulation with a `rotate`, "
         "a `move` that reads the nodes' coordinates or an actuation or load that reads coordinates it moves, or for "
         "natural frequencies under prescribed motion"),
        "its range is too narrow to sample around its value",
        "the model could not be built at nearby values",
    };
    if (status == STATIC_MOVES_MOTION)
        return "it moves a prescribed motion: not derived yet";
    if (status == STATIC_NO_KERNELS)
        return "the elements' tangent kernels could not be built (the message above says why)";
    if (status == STATIC_TURNS_CLAMP)
        return "it turns a clamped rod end by prescribed motion (`rotate`): its sliding line turns with it, not "
               "derived yet";
    if (status == STATIC_MOVES_PAIRS)
        return "with contact between parts, it moves the parts' own contact radii (a rod's radius or a shell's "
               "thickness, which the pairs take when `contact` gives no `radius`) and the reference geometry, "
               "which elaboration carries no derivative of: not derived yet";
    if (status == STATIC_NOT_SMOOTH)
        return "the model's values are not smooth in it near this value (a switch: min, max, abs, a step or a "
               "periodic wrap of an expression): no derivative";
    return status > 0 && status <= STATIC_NOT_SAMPLED ? why[status] : "";
}

bool grad_has_probe(const srd_analysis *a, int kind)
{
    for (int i = 0; i < a->n_probes; i++)
        if (a->probes[i].kind == kind)
            return true;
    return false;
}
/* A body's probe's derivative (3 values) or a motor's effort's (1), in its unit per the param's. */
static void print_body_probe(const srd_model *m, const srd_probe *pr, const srd_param *p, const double *v,
                             const char *per)
{
    if (pr->kind == SRD_PROBE_JOINT && pr->component == SRD_JOINT_MOTOR) {
        printf("  d(%s)/d(%s) = %.12e %s%s\n", pr->name, p->name, v[0],
               m->joints[pr->target].type == SRD_JOINT_REVOLUTE ? "N*m" : "N", per);
        return;
    }
    const char *unit = pr->kind == SRD_PROBE_JOINT ? (pr->component == SRD_JOINT_FORCE ? "N" : "N*m")
                     : pr->component == SRD_BODY_MOMENTUM ? "kg*m^2/s" : pr->component == SRD_BODY_OMEGA ? "1/s" : "1";
    printf("  d(%s)/d(%s) = (%.12e, %.12e, %.12e) %s%s\n", pr->name, p->name, v[0], v[1], v[2], unit, per);
}

void grad_print_force(const srd_model *m, const srd_probe *pr, const srd_param *p, const double *v)
{
    char per[96];
    per_unit(p, per, sizeof per);
    if (isnan(v[0]))
        printf("  d(%s)/d(%s): not derived (%s)\n", pr->name, p->name,
               pr->kind == SRD_PROBE_CONTACT ? "the parts' forces on each other" : "a force probe");
    else if (pr->kind == SRD_PROBE_BODY || pr->kind == SRD_PROBE_JOINT)
        print_body_probe(m, pr, p, v, per);
    else if (pr->kind == SRD_PROBE_REACTION)
        printf("  d(%s)/d(%s) = (%.12e, %.12e, %.12e) N%s, moment (%.12e, %.12e, %.12e) N*m%s\n", pr->name, p->name,
               v[0], v[1], v[2], per, v[3], v[4], v[5], per);
    else
        printf("  d(%s)/d(%s) = (%.12e, %.12e, %.12e) N%s\n", pr->name, p->name, v[0], v[1], v[2], per);
}

static void print_param(StaticPoint *b, const GradOptions *o, int k, double *dq, const double *r)
{
    const srd_param *p = &b->m->params[k];
    const srd_analysis *a = &b->m->statics;
    /* reactions and contact forces only when asked: they need every input's tangent kernels */
    double *dr = r ? srd_xcalloc((size_t)b->m->n_dofs + 1, sizeof(double)) : NULL;
    double *dc = grad_has_probe(a, SRD_PROBE_CONTACT) ? srd_xcalloc(3 * (size_t)a->n_probes + 1, sizeof(double)) : NULL;
    int status = p->shapes ? -1 : static_point_derivative_all(b, o, k, dq, dr, dc);
    bool derived = grad_print_param_head_or_why(p, status);
    for (int i = 0; derived && i < a->n_probes; i++) {
        const srd_probe *pr = &a->probes[i];
        if (pr->kind == SRD_PROBE_REACTION)
            print_reaction(b, pr, p, dq, r, dr);
        else if (pr->kind == SRD_PROBE_CONTACT)
            grad_print_force(b->m, pr, p, &dc[3 * i]);
        else
            grad_print_probe(b->m, pr, p, dq);
    }
    free(dr), free(dc);
}

/* Every param's derivatives of the static block's probes at the equilibrium just found, and
 * what they cost beside the solve (the stiffness is factorised once for all of them). */
static void print_static_derivatives(StaticPoint *b, const GradOptions *o, double solve_seconds)
{
    if (!o->quiet)
        printf("static equilibrium of %s: residual %.3e N; derivatives of its probes:\n", o->file, b->s.last.residual);
    double t0 = srd_seconds();
    double *dq = srd_xcalloc((size_t)b->m->n_dofs + 1, sizeof(double)), *r = NULL;
    if (grad_has_probe(&b->m->statics, SRD_PROBE_REACTION)) {
        r = srd_xcalloc((size_t)b->m->n_dofs + 1, sizeof(double));
        srd_sim_reactions(&b->s, r);
    }
    for (int k = 0; k < b->m->n_params; k++)
        print_param(b, o, k, dq, r);
    free(dq), free(r);
    double seconds = srd_seconds() - t0;
    if (!o->quiet && b->m->n_params)
        printf("cost: the static solve %.4f s, the derivatives %.4f s (%.2f ms per param, %.2f times the solve)\n",
               solve_seconds, seconds, 1e3 * seconds / b->m->n_params, seconds / fmax(solve_seconds, 1e-9));
}

void point_simulation_settings(StaticPoint *b)
{
    srd_sim *s = &b->s;
    const srd_analysis *a = &b->m->simulate;
    s->dt = s->step_dt = a->dt;
    s->tolerance = a->tolerance;
    s->max_iterations = a->max_iterations;
    s->line_search = a->line_search;
}

int point_start_simulation(StaticPoint *b)
{
    srd_sim *s = &b->s;
    int code = b->m->simulate.start && b->m->statics.present ? srd_static(s, b->m->statics.load_steps) : 0;
    if (code)
        return code;
    if (b->m->simulate.start && b->m->statics.present)
        srd_sim_start_here(s);
    point_simulation_settings(b);
    return 0;
}

int point_simulate(StaticPoint *b)
{
    srd_sim *s = &b->s;
    const srd_analysis *a = &b->m->simulate;
    int code = point_start_simulation(b);
    srd_method method = (srd_method)srd_method_from_name(a->method);
    long steps = (long)ceil(a->duration / a->dt - 1e-9);
    for (long k = 0; k < steps && code == 0; k++)
        code = srd_step(s, method, 6);
    return code;
}

/* Whether grad derives the simulation: asked for, or the analysis an objective would read. */
static bool derives_simulation(const StaticPoint *b, const GradOptions *o)
{
    if (o->analysis != GRAD_AUTO)
        return o->analysis == GRAD_SIMULATE;
    return srd_objective_analysis(b->m) == &b->m->simulate && b->m->simulate.n_probes > 0;
}

int grad_model(const GradOptions *o)
{
    StaticPoint b;
    int status = static_point_open(&b, o);
    if (status == SRD_EXIT_OK && (o->objective || (b.m->optimize.present && o->analysis == GRAD_AUTO))) {
        status = grad_objective(&b, o);
        static_point_close(&b);
        diag_reset();
        return status;
    }
    if (status == SRD_EXIT_OK && derives_simulation(&b, o)) {
        status = grad_simulation(&b, o);
        static_point_close(&b);
        diag_reset();
        return status;
    }
    bool modes = status == SRD_EXIT_OK && b.m->modes.present; /* natural frequencies too (modal.c) */
    if (status == SRD_EXIT_OK && !b.m->statics.present && !modes)
        status = fail(o, "srdc: error: %s has no `static` block: `srdc grad` derives a static equilibrium\n"
                      "hint: add `static { load_steps = 10; probe tip = ...; }` (or a `modes` block)\n", o->file);
    if (status == SRD_EXIT_OK && !b.m->statics.n_probes && !modes)
        status = fail(o, "srdc: error: the static block of %s has no probe to differentiate\n"
                      "hint: add one, for example `probe tip = arm.end;`\n", o->file);
    double t0 = srd_seconds();
    if (status == SRD_EXIT_OK && b.m->statics.present && srd_static(&b.s, b.m->statics.load_steps) != 0) {
        fprintf(messages(o), "srdc: error: the static equilibrium of %s was not found\n", o->file);
        status = SRD_EXIT_NUMERIC;
    }
    if (status == SRD_EXIT_OK && b.m->statics.n_probes)
        print_static_derivatives(&b, o, srd_seconds() - t0);
    if (status == SRD_EXIT_OK && modes)
        status = modal_grad(&b, o);
    static_point_close(&b);
    diag_reset();
    return status;
}
