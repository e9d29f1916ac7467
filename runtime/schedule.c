/* schedule.c — runs the generated schedule kernels of actuations and time-dependent loads and
 * puts their values where the element kernels and the external forces read them. */
#include "schedule.h"
#include "control.h"
#include "alloc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Data columns per actuation target, in the order of the value's components. */
static const char *const target_names[][6] = {
    { "curvature", "kappa1_bar", "kappa2_bar", NULL },
    { "twist", "tau_bar", NULL },
    { "rest_length", "rest_length", NULL },
    { "angle", "phi_bar", NULL },
    { "pressure", "p", NULL },
    { "springs", "rest_factor", NULL },
    { "motor", "target", NULL },
    { "E", "ks", "EI1", "EI2", "GJ", "kb" },
    /* a moving obstacle's pose (std.contact's moving_ and plane_ kinds), each with its
     * step-start copy in the column of the same name with a trailing 0 */
    { "obstacle_center", "cx", "cy", "cz", NULL },
    { "obstacle_axis", "ux", "uy", "uz", NULL },
    { "obstacle_angle", "angle", NULL },
    { "obstacle_spin", "spin", NULL },
    { "obstacle_point", "px", "py", "pz", NULL },
    { "obstacle_normal", "nx", "ny", "nz", NULL },
};

static const char *const *target_row(const char *target)
{
    for (size_t k = 0; k < sizeof target_names / sizeof target_names[0]; k++)
        if (!strcmp(target_names[k][0], target))
            return &target_names[k][1];
    return NULL;
}

/* Column `name` followed by a 0: where a pose column's step-start copy is kept. */
static int prev_column(const srd_elemset *set, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "%s0", name);
    return srd_elemset_column(set, key);
}

static int is_obstacle_target(const char *target) { return !strncmp(target, "obstacle_", 9); }

int srd_actuation_components(const char *target)
{
    int n = 0;
    const char *const *row = target_row(target);
    if (!strcmp(target, "curvature") || is_obstacle_target(target))
        while (row && n < 5 && row[n])
            n++;
    return n > 0 ? n : 1;
}

int srd_actuation_drives(const char *target, const char *column)
{
    const char *const *row = target_row(target);
    for (int k = 0; row && k < 5 && row[k]; k++) {
        size_t len = strlen(row[k]);
        if (!strcmp(row[k], column) ||
            (is_obstacle_target(target) && !strncmp(row[k], column, len) && !strcmp(column + len, "0")))
            return 1;
    }
    return 0;
}

int srd_column_ramped(const char *kind, const char *column)
{
    size_t len = strlen(column);
    if (len >= 4 && !strcmp(column + len - 4, "_bar"))
        return 1;
    return !strncmp(kind, "pressure_", 9) && !strcmp(column, "p");
}

/* The data columns an actuation target drives in its element set. */
static void target_columns(srd_schedule *sc, const srd_elemset *set, const char *target)
{
    const char *const *row = target_row(target);
    sc->n_columns = 0;
    sc->flag_column = strcmp(target, "E") ? srd_elemset_column(set, "natural_from_reference") : -1;
    sc->has_prev = 0;
    for (int k = 0; row && k < 5 && row[k]; k++)
        if (srd_elemset_column(set, row[k]) >= 0 || strcmp(target, "E")) {
            sc->prev_columns[sc->n_columns] = is_obstacle_target(target) ? prev_column(set, row[k]) : -1;
            sc->has_prev |= sc->prev_columns[sc->n_columns] >= 0;
            sc->columns[sc->n_columns++] = srd_elemset_column(set, row[k]);
        }
}

/* Where an instance is, for values that depend on x, y, z: a bend-twist element at its
 * middle node, a hinge at the middle of its shared edge, others at their nodes' centroid. */
static void instance_position(const srd_model *m, const srd_elemset *set, int i, double *x)
{
    const int *nodes = &set->nodes[i * set->n_node];
    int first = 0, count = set->n_node;
    if (!strcmp(set->kind, "bend_twist")) {
        first = 1;
        count = 1;
    } else if (!strcmp(set->kind, "hinge")) {
        count = 2;
    }
    for (int c = 0; c < 3; c++) {
        x[c] = 0;
        for (int k = first; k < first + count; k++)
            x[c] += m->x0[3 * nodes[k] + c] / count;
    }
}

static void build_batch(srd_schedule *sc)
{
    sc->res = srd_xcalloc((size_t)sc->n * (size_t)sc->n_out + 1, sizeof(int32_t));
    sc->out = srd_xcalloc((size_t)sc->n * (size_t)sc->n_out + 1, sizeof(double));
    for (int k = 0; k < sc->n * sc->n_out; k++)
        sc->res[k] = k;
    sc->b.n = sc->n;
    sc->b.n_dofs = sc->n_out;
    sc->b.n_data = SRD_SCHEDULE_N_DATA;
    sc->b.n_state = 0;
    sc->b.dofs = sc->res; /* never read: schedules have no DOF inputs */
    sc->b.res = sc->res;
    sc->b.jac_pos = NULL;
    sc->b.data = sc->data;
    sc->b.state = NULL;
}

static void build_actuation(srd_schedule *sc, const srd_model *m, const srd_actuation *a, double *const *set_data)
{
    const srd_elemset *set = &m->sets[a->set];
    sc->n = a->n;
    sc->n_out = srd_actuation_components(a->target);
    sc->targets = srd_xcalloc((size_t)a->n + 1, sizeof(int));
    sc->data = srd_xcalloc((size_t)a->n * SRD_SCHEDULE_N_DATA + 1, sizeof(double));
    memcpy(sc->targets, a->instances, sizeof(int) * (size_t)a->n);
    for (int i = 0; i < a->n; i++) {
        double *d = &sc->data[i * SRD_SCHEDULE_N_DATA];
        d[SRD_SCHEDULE_S] = a->s ? a->s[i] : 0;
        instance_position(m, set, a->instances[i], &d[SRD_SCHEDULE_X]);
    }
    target_columns(sc, set, a->target);
    if (!strcmp(a->target, "E")) {
        sc->base = srd_xcalloc((size_t)a->n * (size_t)sc->n_columns + 1, sizeof(double));
        sc->e0 = srd_xcalloc((size_t)a->n + 1, sizeof(double));
        for (int i = 0; i < a->n; i++) {
            int inst = a->instances[i];
            sc->e0[i] = set->object[inst] >= 0 ? m->objects[set->object[inst]].E : 0;
            for (int c = 0; c < sc->n_columns; c++)
                sc->base[i * sc->n_columns + c] = set_data[a->set][inst * set->n_data + sc->columns[c]];
        }
    }
    build_batch(sc);
}

static void build_loads(srd_schedule *sc, const srd_model *m, int expr)
{
    sc->n_out = 3;
    sc->targets = srd_xcalloc((size_t)m->n_loads + 1, sizeof(int));
    sc->data = srd_xcalloc((size_t)m->n_loads * SRD_SCHEDULE_N_DATA + 1, sizeof(double));
    for (int k = 0; k < m->n_loads; k++) {
        if (m->loads[k].expr != expr)
            continue;
        int node = m->loads[k].node;
        double *d = &sc->data[sc->n * SRD_SCHEDULE_N_DATA];
        for (int c = 0; c < 3; c++)
            d[SRD_SCHEDULE_X + c] = m->x0[3 * node + c];
        sc->targets[sc->n++] = node;
    }
    build_batch(sc);
}

/* A move is evaluated at each node it drives (its value may depend on x, y, z); a rotation once,
 * at its centre. Each gives the value and its two time derivatives. */
static void build_motion(srd_schedule *sc, const srd_model *m, int k)
{
    const srd_motion *mo = &m->motions[k];
    sc->motion = k;
    sc->n = mo->kind == SRD_MOTION_MOVE ? mo->n_nodes : 1;
    sc->n_out = mo->kind == SRD_MOTION_MOVE ? 9 : 3;
    sc->data = srd_xcalloc((size_t)sc->n * SRD_SCHEDULE_N_DATA + 1, sizeof(double));
    for (int i = 0; i < sc->n; i++)
        for (int c = 0; c < 3; c++)
            sc->data[i * SRD_SCHEDULE_N_DATA + SRD_SCHEDULE_X + c] =
                mo->kind == SRD_MOTION_MOVE ? m->x0[3 * mo->nodes[i] + c] : mo->center[c];
    build_batch(sc);
}

static int motion_of_expr(const srd_model *m, int expr)
{
    for (int k = 0; k < m->n_motions; k++)
        if (m->motions[k].expr == expr)
            return k;
    return -1;
}

void srd_schedules_build(srd_schedules *S, const srd_model *m, int n, const srd_kernel_fn *fns,
                         const int *actuation, const int *expr, double *const *set_data, const double *fext)
{
    memset(S, 0, sizeof *S);
    S->a = srd_xcalloc((size_t)n + 1, sizeof *S->a);
    S->fext_const = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    memcpy(S->fext_const, fext, sizeof(double) * (size_t)m->n_dofs);
    for (int k = 0; k < n; k++) {
        if (actuation[k] < 0 && srd_control_step_of_expr(m, expr[k]) >= 0)
            continue; /* a step of the control block: the controller runs it (control.c) */
        srd_schedule *sc = &S->a[S->n++];
        sc->fn = fns[k];
        sc->actuation = actuation[k];
        sc->expr = expr[k];
        sc->motion = -1;
        if (sc->actuation >= 0) {
            build_actuation(sc, m, &m->actuations[sc->actuation], set_data);
        } else if (motion_of_expr(m, sc->expr) >= 0) {
            build_motion(sc, m, motion_of_expr(m, sc->expr));
        } else {
            build_loads(sc, m, sc->expr);
            S->has_loads = 1;
        }
    }
}

/* A moving obstacle's step-start pose: the schedule at the step's start time, into the columns
 * that keep it (friction reads the obstacle's surface velocity from the two poses). */
static void write_step_start(srd_schedule *sc, const srd_model *m, const double *params, double t0, double dt,
                             double *data)
{
    memset(sc->out, 0, sizeof(double) * (size_t)sc->n * (size_t)sc->n_out);
    srd_eval_ctx ctx = { NULL, NULL, NULL, params, t0, dt, NULL, sc->out, NULL };
    sc->fn(&ctx, &sc->b);
    int stride = m->sets[m->actuations[sc->actuation].set].n_data;
    for (int i = 0; i < sc->n; i++)
        for (int c = 0; c < sc->n_columns; c++)
            if (sc->prev_columns[c] >= 0)
                data[sc->targets[i] * stride + sc->prev_columns[c]] = sc->out[i * sc->n_out + c];
}

static void write_actuation(const srd_schedule *sc, const srd_model *m, double *data)
{
    const srd_actuation *a = &m->actuations[sc->actuation];
    int stride = m->sets[a->set].n_data;
    for (int i = 0; i < sc->n; i++) {
        double *row = &data[sc->targets[i] * stride];
        if (sc->base) {
            /* Stiffness scales with E: every stiffness column by E(t) / E_material. */
            double factor = sc->e0[i] > 0 ? sc->out[i] / sc->e0[i] : 0;
            for (int c = 0; c < sc->n_columns; c++)
                row[sc->columns[c]] = factor * sc->base[i * sc->n_columns + c];
            continue;
        }
        for (int c = 0; c < sc->n_columns; c++)
            if (sc->columns[c] >= 0)
                row[sc->columns[c]] = sc->out[i * sc->n_out + c];
        if (sc->flag_column >= 0)
            row[sc->flag_column] = 0;
    }
}

void srd_schedules_apply(srd_schedules *S, const srd_model *m, const double *params, double t, double dt, double h,
                         double *const *set_data, double *fext)
{
    if (S->has_loads)
        memcpy(fext, S->fext_const, sizeof(double) * (size_t)m->n_dofs);
    for (int k = 0; k < S->n; k++) {
        srd_schedule *sc = &S->a[k];
        if (sc->motion >= 0)
            continue; /* positions, not forces: srd_schedules_motion */
        if (sc->has_prev)
            write_step_start(sc, m, params, t - h, dt, set_data[m->actuations[sc->actuation].set]);
        memset(sc->out, 0, sizeof(double) * (size_t)sc->n * (size_t)sc->n_out);
        srd_eval_ctx ctx = { NULL, NULL, NULL, params, t, dt, NULL, sc->out, NULL };
        sc->fn(&ctx, &sc->b);
        if (sc->actuation >= 0) {
            write_actuation(sc, m, set_data[m->actuations[sc->actuation].set]);
            continue;
        }
        for (int i = 0; i < sc->n; i++)
            for (int c = 0; c < 3; c++)
                fext[m->node_dof[sc->targets[i]] + c] += sc->out[3 * i + c];
    }
}

const double *srd_schedules_motion(srd_schedules *S, int k, const double *params, double t, double dt)
{
    for (int j = 0; j < S->n; j++) {
        srd_schedule *sc = &S->a[j];
        if (sc->motion != k)
            continue;
        memset(sc->out, 0, sizeof(double) * (size_t)sc->n * (size_t)sc->n_out);
        srd_eval_ctx ctx = { NULL, NULL, NULL, params, t, dt, NULL, sc->out, NULL };
        sc->fn(&ctx, &sc->b);
        return sc->out;
    }
    return NULL;
}

void srd_schedules_free(srd_schedules *S)
{
    for (int k = 0; k < S->n; k++) {
        srd_schedule *sc = &S->a[k];
        free(sc->targets);
        free(sc->base);
        free(sc->e0);
        free(sc->res);
        free(sc->data);
        free(sc->out);
    }
    free(S->a);
    free(S->fext_const);
    memset(S, 0, sizeof *S);
}
