/* modal.c — modal sensitivities for `srdc grad` (see modal.h): the modal kernels of element
 * kinds, built from the Hessian's DAG and run on the interpreter tier, and the derivative of
 * each natural frequency of the `modes` block with respect to each param. */
#include "sens/modal.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "diff.h"
#include "driver.h"
#include "watch.h"
#include "vec3.h"
#include "sens/static.h"

#define TWO_PI (2 * 3.14159265358979323846)
/* Frequencies closer than this (relative) are one repeated frequency. */
#define REPEATED_GAP 1e-6

/* The DAG slots of le's inputs a modal kernel differentiates; returns their count. */
static int modal_slots(const LoweredElement *le, int *slots)
{
    int n = 0;
    for (int i = 0; i < le->n_inputs; i++)
        if (le->inputs[i].cls != KIN_EXPR && (MODAL_INPUTS >> le->inputs[i].cls & 1))
            slots[n++] = i;
    return n;
}

/* phi^T H phi over the stencil, phi_k the DAG's input n_inputs + k (a symmetric Hessian's upper
 * triangle counted twice off the diagonal). */
static ExprId curvature(LoweredElement *le)
{
    ExprDag *d = le->dag;
    int nd = le->nd;
    ExprId sum = dag_const(d, 0);
    for (int k = 0; k < nd; k++)
        for (int l = le->symmetric ? k : 0; l < nd; l++) {
            ExprId h = le->jac[(size_t)k * nd + l];
            if (h < 0)
                continue;
            ExprId term = dag_mul(d, h, dag_mul(d, dag_input(d, le->n_inputs + k), dag_input(d, le->n_inputs + l)));
            sum = dag_add(d, sum, le->symmetric && k != l ? dag_mul(d, dag_const(d, 2), term) : term);
        }
    return sum;
}

/* The program's inputs: the kernel's, then nd + n extra data columns after the set's. */
static KernelInput *modal_inputs(const LoweredElement *le, int n_data, int extra)
{
    KernelInput *inputs = srd_xcalloc((size_t)le->n_inputs + (size_t)extra + 1, sizeof *inputs);
    memcpy(inputs, le->inputs, sizeof *inputs * (size_t)le->n_inputs);
    for (int j = 0; j < extra; j++)
        inputs[le->n_inputs + j] = (KernelInput){ KIN_DATA, n_data + j };
    return inputs;
}

/* The value sum_j d(phi^T H phi)/d(slot j) w_j, w_j the DAG's input n_inputs + nd + j. */
static ExprId directional(LoweredElement *le, const int *slots, int n)
{
    ExprDag *d = le->dag;
    ExprId s = curvature(le), sum = dag_const(d, 0);
    ExprId *total = srd_xcalloc((size_t)n + 1, sizeof(ExprId));
    kernel_total_jacobian(le, &s, 1, slots, n, total);
    for (int j = 0; j < n; j++)
        sum = dag_add(d, sum, dag_mul(d, total[j], dag_input(d, le->n_inputs + le->nd + j)));
    free(total);
    return sum;
}

static InterpProgram *modal_program(LoweredElement *le, int n_data, ExprId value, int extra)
{
    char kind[256];
    snprintf(kind, sizeof kind, "modal_%s", le->kind);
    ExprId *rows = srd_xcalloc((size_t)le->nd + 1, sizeof(ExprId));
    for (int k = 0; k < le->nd; k++)
        rows[k] = -1;
    KernelInput *inputs = modal_inputs(le, n_data, extra);
    KernelSpec spec = { .kind = kind, .dag = le->dag, .n_inputs = le->n_inputs + extra, .inputs = inputs,
                        .nd = le->nd, .value = value, .res = rows, .jac = NULL, .gradient_only = true };
    InterpProgram *p = interp_build(&spec);
    free(inputs);
    free(rows);
    return p;
}

bool modal_kernel_build(LoweredElement *le, const srd_elemset *set, ModalKernel *out, char *err, size_t err_n)
{
    memset(out, 0, sizeof *out);
    out->nd = le->nd;
    out->n_data = set->n_data;
    out->n_state = le->n_state;
    int *slots = srd_xcalloc((size_t)le->n_inputs + 1, sizeof(int));
    out->n_slots = modal_slots(le, slots);
    out->slots = srd_xcalloc((size_t)out->n_slots + 1, sizeof(KernelInput));
    for (int j = 0; j < out->n_slots; j++)
        out->slots[j] = le->inputs[slots[j]];
    if (out->n_slots > 0)
        out->program = modal_program(le, out->n_data, directional(le, slots, out->n_slots), le->nd + out->n_slots);
    free(slots);
    if (out->n_slots > 0 && !out->program) {
        snprintf(err, err_n, "the modal kernel of `%s` could not be built", le->kind);
        return false;
    }
    return true;
}

static double at(const double *v, long long i) { return v ? v[i] : 0; }

/* w_j of instance i: the tangent of slot j's source. */
static double slot_tangent(const ModalKernel *k, const srd_elem_batch *b, const InputTangents *w, int i, int j)
{
    const KernelInput *in = &k->slots[j];
    switch (in->cls) {
    case KIN_DOF: return at(w->dq, b->dofs[(size_t)i * k->nd + in->index]);
    case KIN_DOF0: return at(w->dq0, b->dofs[(size_t)i * k->nd + in->index]);
    case KIN_STATE: return at(w->dstate, (long long)i * k->n_state + in->index);
    case KIN_DATA: return at(w->ddata, (long long)i * k->n_data + in->index);
    case KIN_PARAM: return at(w->dparams, in->index);
    default: return 0;
    }
}

/* The batch's data with, per instance, phi at its stencil DOFs and the slots' tangents after it. */
static double *modal_data(const ModalKernel *k, const srd_elem_batch *b, const double *phi, const InputTangents *w)
{
    int nd = b->n_data, width = nd + k->nd + k->n_slots;
    double *ext = srd_xcalloc((size_t)b->n * (size_t)width + 1, sizeof(double));
    for (int i = 0; i < b->n; i++) {
        double *row = &ext[(size_t)i * width];
        memcpy(row, &b->data[(size_t)i * nd], sizeof(double) * (size_t)nd);
        for (int j = 0; j < k->nd; j++)
            row[nd + j] = phi[b->dofs[(size_t)i * k->nd + j]];
        for (int j = 0; j < k->n_slots; j++)
            row[nd + k->nd + j] = slot_tangent(k, b, w, i, j);
    }
    return ext;
}

double modal_kernel_run(const ModalKernel *k, const srd_eval_ctx *ctx, const srd_elem_batch *batch,
                        const double *phi, const InputTangents *w)
{
    if (!k->program || batch->n == 0)
        return 0;
    double value = 0;
    srd_elem_batch b = *batch;
    double *ext = modal_data(k, batch, phi, w);
    b.n_data += k->nd + k->n_slots;
    b.data = ext;
    srd_eval_ctx c = *ctx;
    c.energy = &value, c.grad = NULL, c.jac = NULL;
    interp_run(k->program, &c, &b);
    free(ext);
    return value;
}

void modal_kernel_free(ModalKernel *k)
{
    if (k->program)
        interp_free(k->program);
    free(k->slots);
    memset(k, 0, sizeof *k);
}

double modal_dof_mass(const srd_model *m, int d)
{
    if (m->dof_kind[d] != SRD_DOF_ROT)
        return m->dof_mass[d];
    const srd_body *body = &m->bodies[m->dof_owner[d]];
    return body->inertia[d - m->node_dof[body->node] - 3];
}

/* ---- The frequencies' derivatives ---- */

/* A set whose Jacobian enters the modes' stiffness unsymmetric (a follower force), or -1: the
 * modal analysis reads K's upper triangle, the modal kernel the element's whole Jacobian. */
static int unsymmetric_set(const ModalPoint *md, const StaticPoint *b)
{
    for (int k = 0; k < b->m->n_sets; k++)
        if (b->mk.sets[k].lowered.kind && !b->mk.sets[k].lowered.symmetric && b->m->sets[k].n > 0 &&
            !md->s->kernels[k].info.needs_time_step)
            return k;
    return -1;
}

/* Why the model's modes are not derived, or NULL: the cases whose eigenproblem is not plain
 * K phi = w^2 M phi over the free DOFs with K symmetric (a clamp's sliding node is: its line
 * stays put). */
static const char *refusal(ModalPoint *md, const StaticPoint *b)
{
    const srd_model *m = b->m;
    int set = unsymmetric_set(md, b);
    if (set >= 0) {
        snprintf(md->why, sizeof md->why, "its stiffness has a force whose Jacobian is not symmetric (`%s`): not "
                 "derived yet", m->sets[set].kind);
        return md->why;
    }
    for (int d = 0; d < m->n_dofs; d++)
        if (m->dof_kind[d] == SRD_DOF_LAMBDA)
            return "the model has joints or constraints (a constrained eigenproblem): not derived yet";
    if (md->at_equilibrium && m->n_bodies > 0)
        return "the equilibrium turns rigid bodies' frames: not derived yet";
    return NULL;
}

/* The sim the modes are taken in: the point's at its equilibrium, else one at the reference
 * configuration, set up as `srdc run` sets up the modes block. */
static bool modal_sim(ModalPoint *md, StaticPoint *b, char *err, size_t err_n)
{
    const srd_model *m = b->m;
    md->at_equilibrium = m->modes.method && !strcmp(m->modes.method, "equilibrium");
    if (md->at_equilibrium) {
        md->s = &b->s;
        return true;
    }
    double dt = m->simulate.present ? m->simulate.dt : 0;
    if (srd_sim_for_analysis(&md->own, m, &b->kt.table, &m->modes, NULL, dt, err, err_n) != 0)
        return false;
    md->s = &md->own;
    return true;
}

/* The block's modes and one more when the model has it; 0, or -1 with err. */
static int modal_solve(ModalPoint *md, char *err, size_t err_n)
{
    const srd_model *m = md->s->m;
    int n_free = md->s->solver.sys.n_free;
    md->count = m->modes.mode_count < n_free ? m->modes.mode_count : n_free;
    md->n = md->count < n_free ? md->count + 1 : md->count;
    md->freq = srd_xcalloc((size_t)md->n + 1, sizeof(double));
    md->shapes = srd_xcalloc((size_t)md->n * (size_t)m->n_dofs + 1, sizeof(double));
    if (srd_modes(md->s, md->n, md->freq, md->shapes, err, err_n) != 0)
        return -1;
    md->f_rigid = 1e-5 * srd_max_frequency_bound(md->s) / TWO_PI;
    return 0;
}

static bool modal_kernels(ModalPoint *md, StaticPoint *b, char *err, size_t err_n)
{
    md->kernels = srd_xcalloc((size_t)b->m->n_sets + 1, sizeof *md->kernels);
    for (int k = 0; k < b->m->n_sets; k++)
        if (b->mk.sets[k].lowered.kind &&
            !modal_kernel_build(&b->mk.sets[k].lowered, &b->m->sets[k], &md->kernels[k], err, err_n))
            return false;
    return true;
}

int modal_point_open(ModalPoint *md, StaticPoint *b, const GradOptions *o)
{
    memset(md, 0, sizeof *md);
    char err[512];
    bool ok = modal_sim(md, b, err, sizeof err);
    if (ok && !(md->refused = refusal(md, b)))
        ok = modal_solve(md, err, sizeof err) == 0 && modal_kernels(md, b, err, sizeof err) &&
             (!b->m->n_slides || static_point_tangents(b, err, sizeof err)); /* a turning line's share */
    if (ok)
        return SRD_EXIT_OK;
    fprintf(o->errors ? o->errors : stderr, "%s: %s\n", o->errors ? o->file : "srdc: error", err);
    return SRD_EXIT_NUMERIC;
}

void modal_point_close(ModalPoint *md, int n_sets)
{
    for (int k = 0; md->kernels && k < n_sets; k++)
        modal_kernel_free(&md->kernels[k]);
    free(md->kernels);
    free(md->freq);
    free(md->shapes);
    if (md->own.m)
        srd_sim_free(&md->own);
}

/* phi^T (dK/dp) phi of mode j: the elements' stiffness along the data's, the params' and (at
 * an equilibrium) the configuration's tangents. */
static double stiffness_term(const ModalPoint *md, int k, int j, const DataDerivative *dd, const double *dq)
{
    srd_sim *s = md->s;
    const double *phi = &md->shapes[(size_t)j * s->m->n_dofs];
    double *dparams = srd_xcalloc((size_t)s->m->n_params + 1, sizeof(double)), sum = 0;
    dparams[k] = 1;
    srd_eval_ctx ctx = { s->q, s->q0, s->v0, s->params, s->t, s->dt, NULL, NULL, NULL };
    for (int set = 0; set < s->m->n_sets; set++) {
        if (s->kernels[set].info.needs_time_step) /* not part of the stiffness of the modes */
            continue;
        InputTangents w = { .dq = dq, .dq0 = dd->q0, .dstate = dd->state ? dd->state[set] : NULL,
                            .ddata = dd->columns[set], .dparams = dparams };
        sum += modal_kernel_run(&md->kernels[set], &ctx, &s->kernels[set].batch.b, phi, &w);
    }
    free(dparams);
    return sum;
}

/* (K - w^2 M) phi, every DOF's row: the elements' Hessian along phi (the tangent kernels with the
 * configuration moved along phi alone) less the masses'. */
static double *unbalanced(const ModalPoint *md, const StaticPoint *b, const double *phi, double w2)
{
    srd_sim *s = md->s;
    const srd_model *m = s->m;
    double *g = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    srd_eval_ctx ctx = { s->q, s->q0, s->v0, s->params, s->t, s->dt, NULL, g, NULL };
    for (int set = 0; set < m->n_sets; set++) {
        if (s->kernels[set].info.needs_time_step)
            continue;
        srd_elem_batch every = srd_batch_every_dof(&s->kernels[set].batch.b, 0, s->kernels[set].batch.b.n);
        InputTangents w = { .dq = phi };
        kernel_tangent_forward(&b->tangents[set], &ctx, &every, &w);
    }
    for (int d = 0; d < m->n_dofs; d++)
        g[d] -= w2 * modal_dof_mass(m, d) * phi[d];
    return g;
}

/* The share of d(w^2)/dp that a sliding clamp's turning line gives: the modes live in a basis T
 * that takes a sliding node's coordinate s along its line to s a, so dK_r = T^T dK T + dT^T K T +
 * T^T K dT (the masses' likewise) adds 2 (dT phi_r)^T (K - w^2 M) phi, dT phi_r = s da at the node. */
static double turning_term(const ModalPoint *md, const StaticPoint *b, int j, const double *daxis)
{
    const srd_sim *s = md->s;
    const srd_model *m = s->m;
    if (!daxis || !m->n_slides)
        return 0;
    const double *phi = &md->shapes[(size_t)j * m->n_dofs];
    double w = TWO_PI * md->freq[j], sum = 0, *g = unbalanced(md, b, phi, w * w);
    for (int k = 0; k < m->n_slides; k++) {
        int node = m->node_dof[m->slide_node[k]];
        if (!sens_anchor_held(s, k))
            continue; /* a line whose anchor moves freely constrains nothing */
        double along = srd_dot3(&s->slide_axis[3 * k], &phi[node]);
        sum += 2 * along * srd_dot3(&daxis[3 * k], &g[node]);
    }
    free(g);
    return sum;
}

/* d(f_j)/dp from d(w^2)/dp = phi^T dK phi - w^2 phi^T dM phi (and a turning line's share). */
static double frequency_derivative(const ModalPoint *md, const StaticPoint *b, int k, int j, const DataDerivative *dd,
                                   const double *dq)
{
    const double *phi = &md->shapes[(size_t)j * md->s->m->n_dofs];
    double dm = 0, w = TWO_PI * md->freq[j];
    for (int d = 0; d < md->s->m->n_dofs; d++)
        dm += phi[d] * phi[d] * dd->mass[d];
    double dw2 = stiffness_term(md, k, j, dd, dq) - w * w * dm + turning_term(md, b, j, dd->axis);
    return dw2 / (2 * w) / TWO_PI;
}

/* The mode whose frequency mode j's repeats (within REPEATED_GAP), or -1. */
static int repeated_with(const ModalPoint *md, int j)
{
    for (int i = j - 1; i <= j + 1; i += 2)
        if (i >= 0 && i < md->n && fabs(md->freq[i] - md->freq[j]) <= REPEATED_GAP * md->freq[j])
            return i;
    return -1;
}

int modal_point_kind(const ModalPoint *md, int j, int *twin)
{
    *twin = repeated_with(md, j);
    return md->freq[j] <= md->f_rigid ? MODAL_RIGID : *twin >= 0 ? MODAL_REPEATED : MODAL_DERIVED;
}

/* How param k moves the data and, at an equilibrium, the configuration (dq, or NULL). */
static int param_tangents(const ModalPoint *md, StaticPoint *b, const GradOptions *o, int k, DataDerivative *dd,
                          double *dq)
{
    int status = static_point_data_derivative(b, o, k, dd);
    if (status == STATIC_DERIVED)
        sens_pair_columns(md->s, dd->pairs, dd->radius, dd->columns); /* the pairs at the modes' configuration */
    if (status == STATIC_DERIVED && md->at_equilibrium)
        status = static_point_derivative(b, o, k, dq);
    return status;
}

int modal_point_derivative(ModalPoint *md, StaticPoint *b, const GradOptions *o, int k, double *df)
{
    for (int j = 0; j < md->count; j++)
        df[j] = NAN;
    if (b->m->params[k].shapes)
        return -1;
    DataDerivative dd;
    double *dq = md->at_equilibrium ? srd_xcalloc((size_t)b->m->n_dofs + 1, sizeof(double)) : NULL;
    int status = param_tangents(md, b, o, k, &dd, dq), twin;
    const double *at = md->at_equilibrium ? dq : dd.q0; /* at the reference, the configuration moves with it */
    for (int j = 0; j < md->count && status == STATIC_DERIVED; j++)
        if (modal_point_kind(md, j, &twin) == MODAL_DERIVED)
            df[j] = frequency_derivative(md, b, k, j, &dd, at);
    data_derivative_free(&dd, b->m->n_sets);
    free(dq);
    return status;
}

const char *modal_point_why(const ModalPoint *md, int j, char *buf, size_t n)
{
    int twin, kind = modal_point_kind(md, j, &twin);
    if (kind == MODAL_RIGID)
        snprintf(buf, n, "mode %d is a rigid mode (%.3g Hz)", j + 1, md->freq[j]);
    else if (kind == MODAL_REPEATED)
        snprintf(buf, n, "f%d = f%d = %.9g Hz, a repeated frequency (neither mode alone has one)",
                 (j < twin ? j : twin) + 1, (j < twin ? twin : j) + 1, md->freq[j]);
    return kind == MODAL_DERIVED ? NULL : buf;
}

/* "Hz/Pa": hertz over the param's unit. */
static void modal_unit(const srd_param *p, char *buf, size_t n)
{
    bool compound = strchr(p->unit, '*') || strchr(p->unit, '/');
    if (!strcmp(p->unit, "1"))
        snprintf(buf, n, "Hz");
    else
        snprintf(buf, n, "Hz/%s%s%s", compound ? "(" : "", p->unit, compound ? ")" : "");
}

static void print_mode(const ModalPoint *md, const srd_param *p, int j, double df)
{
    char unit[128], why[256];
    if (modal_point_why(md, j, why, sizeof why))
        printf("  d(f%d)/d(%s): no derivative: %s\n", j + 1, p->name, why);
    else {
        modal_unit(p, unit, sizeof unit);
        printf("  d(f%d)/d(%s) = %.9e %s  (f%d = %.9g Hz)\n", j + 1, p->name, df, unit, j + 1, md->freq[j]);
    }
}

/* The derivatives of every mode's frequency with respect to param k. */
static void print_param(ModalPoint *md, StaticPoint *b, const GradOptions *o, int k)
{
    const srd_param *p = &b->m->params[k];
    double *df = srd_xcalloc((size_t)md->count + 1, sizeof(double));
    int status = modal_point_derivative(md, b, o, k, df);
    if (grad_print_param_head_or_why(p, status))
        for (int j = 0; j < md->count; j++)
            print_mode(md, p, j, df[j]);
    free(df);
}

int modal_grad(StaticPoint *b, const GradOptions *o)
{
    ModalPoint md;
    int status = modal_point_open(&md, b, o);
    const char *where = md.at_equilibrium ? "the static equilibrium" : "the reference configuration";
    if (status == SRD_EXIT_OK && md.refused)
        printf("natural frequencies of %s at %s: no derivatives: %s\n", o->file, where, md.refused);
    else if (status == SRD_EXIT_OK) {
        if (!o->quiet)
            printf("natural frequencies of %s at %s; their derivatives:\n", o->file, where);
        for (int k = 0; k < b->m->n_params; k++)
            print_param(&md, b, o, k);
    }
    modal_point_close(&md, b->m->n_sets);
    return status;
}
