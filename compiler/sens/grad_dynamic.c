/* grad_dynamic.c — `srdc grad` of a simulation: the derivative of each of the simulate block's
 * probes at the end of the run with respect to every param, by forward sensitivities (one pass
 * for all params) or, with --adjoint, by one adjoint pass per probe value (dynamic.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "diag.h"
#include "probe.h"
#include "sens/dynamic.h"
#include "sens/grad.h"

static FILE *messages(const GradOptions *o) { return o->errors ? o->errors : stderr; }

/* The DOFs probe pr reads (one, or a node's three); returns their count, 0 for force probes. */
static int probe_dofs(const srd_model *m, const srd_probe *pr, int *dofs)
{
    if (pr->kind != SRD_PROBE_STATE)
        return 0;
    if (pr->dof >= 0) {
        dofs[0] = pr->dof;
        return 1;
    }
    for (int c = 0; c < 3; c++)
        dofs[c] = m->node_dof[pr->node] + c;
    return 3;
}

/* dq[k][dof] for every DOF a probe reads, by one adjoint pass per DOF. */
static int adjoint_rows(DynamicRun *r, const srd_model *m, double **dq, int *status, char *why, size_t why_n)
{
    double *w = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double)), *grad = srd_xcalloc((size_t)m->n_params + 1, sizeof(double));
    int code = 0;
    for (int i = 0; i < m->simulate.n_probes && code == 0; i++) {
        int dofs[3], n = probe_dofs(m, &m->simulate.probes[i], dofs);
        for (int j = 0; j < n && code == 0; j++) {
            w[dofs[j]] = 1;
            code = dynamic_adjoint(r, w, NULL, NULL, NULL, grad, status, why, why_n);
            w[dofs[j]] = 0;
            for (int k = 0; k < m->n_params; k++)
                dq[k][dofs[j]] = grad[k];
        }
    }
    free(w), free(grad);
    return code;
}

/* The force probes' derivatives at the end along every derived param (after the forward pass),
 * GRAD_FORCE_WIDTH values a probe; NaN where there is none. */
static void forward_forces(DynamicRun *r, const srd_model *m, double **dforce, const int *status)
{
    for (int k = 0; dforce && k < m->n_params; k++)
        for (int i = 0; i < m->simulate.n_probes; i++) {
            double *out = &dforce[k][GRAD_FORCE_WIDTH * i];
            const srd_probe *pr = &m->simulate.probes[i];
            if (grad_end_probe(pr) && !(status[k] == STATIC_DERIVED && dynamic_force_probe(r, k, pr, out)))
                for (int c = 0; c < GRAD_FORCE_WIDTH; c++)
                    out[c] = NAN;
        }
}

/* Force probe i's values along every param, NaN until derived. */
static void forces_unknown(const srd_model *m, double **dforce, int i)
{
    for (int k = 0; k < m->n_params; k++)
        for (int c = 0; c < GRAD_FORCE_WIDTH; c++)
            dforce[k][GRAD_FORCE_WIDTH * i + c] = NAN;
}

/* The force probes' derivatives at the end by one adjoint pass per value (GRAD_FORCE_WIDTH a
 * probe; NaN where there is none); 0, or -1 when a pass failed. */
static int adjoint_forces(DynamicRun *r, const srd_model *m, double **dforce, int *status, char *why, size_t why_n)
{
    double *grad = srd_xcalloc((size_t)m->n_params + 1, sizeof(double));
    int code = 0;
    for (int i = 0; dforce && i < m->simulate.n_probes && code >= 0; i++) {
        const srd_probe *pr = &m->simulate.probes[i];
        int n = grad_end_probe(pr) ? srd_probe_width(pr) : 0;
        if (n)
            forces_unknown(m, dforce, i);
        code = 0;
        for (int c = 0; c < n && code == 0; c++) {
            double w[6] = { 0 };
            w[c] = 1;
            code = dynamic_force_adjoint(r, pr, w, grad, status, why, why_n);
            for (int k = 0; k < m->n_params && code == 0; k++)
                if (status[k] == STATIC_DERIVED)
                    dforce[k][GRAD_FORCE_WIDTH * i + c] = grad[k];
        }
    }
    free(grad);
    return code < 0 ? -1 : 0;
}

static void print_params(const StaticPoint *b, double **dq, double **dforce, const int *status)
{
    const srd_model *m = b->m;
    for (int k = 0; k < m->n_params; k++) {
        const srd_param *p = &m->params[k];
        if (status[k] != STATIC_DERIVED) {
            printf("%s: %s\n", p->name, p->shapes ? "sets the discretisation, no derivative"
                                                  : grad_simulation_why(b, k, status[k]));
            continue;
        }
        grad_print_param_head(p);
        for (int i = 0; i < m->simulate.n_probes; i++) {
            const srd_probe *pr = &m->simulate.probes[i];
            if (grad_end_probe(pr))
                grad_print_force(m, pr, p, &dforce[k][GRAD_FORCE_WIDTH * i]);
            else
                grad_print_probe(m, pr, p, dq[k]);
        }
    }
}

static void print_header(const StaticPoint *b, const GradOptions *o, const DynamicStats *st)
{
    printf("simulation of %s: %ld steps of %s to t = %.6g s", o->file, st->steps, b->m->simulate.method,
           b->m->simulate.duration);
    if (st->subdivided)
        printf(" (%ld steps subdivided: the derivatives are those of the substeps taken)", st->subdivided);
    printf("; derivatives of its probes at the end (%s):\n", o->adjoint ? "adjoint" : "forward sensitivities");
}

static void print_cost(const DynamicStats *st, const GradOptions *o)
{
    printf("cost: the run %.3g s, the %s %.3g s (%.2g times the run); records and checkpoints %.3g MB at most, "
           "in %d segment%s\n", st->run_seconds, o->adjoint ? "adjoint passes" : "forward pass", st->pass_seconds,
           st->pass_seconds / fmax(st->run_seconds, 1e-9), st->peak_bytes / 1e6, st->segments,
           st->segments == 1 ? "" : "s");
}

int grad_simulation_derive(StaticPoint *b, const GradOptions *o, double **dq, double **dforce, int *status,
                           DynamicStats *stats, char *why, size_t why_n)
{
    const srd_model *m = b->m;
    if (!m->simulate.n_probes) {
        snprintf(why, why_n, "the simulate block of %s has no probe to differentiate\n"
                             "hint: add one, for example `probe tip = arm.end;`", o->file);
        return SRD_EXIT_BAD_INPUT;
    }
    DynamicRun *r = dynamic_run(b, o, NULL, why, why_n);
    if (!r)
        return strstr(why, "failed") || strstr(why, "not found") ? SRD_EXIT_NUMERIC : SRD_EXIT_BAD_INPUT;
    double **dv = srd_xcalloc((size_t)m->n_params + 1, sizeof *dv);
    for (int k = 0; k < m->n_params; k++)
        dv[k] = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    int code = o->adjoint ? adjoint_rows(r, m, dq, status, why, why_n) : dynamic_forward(r, dq, dv, status, why, why_n);
    if (code == 0 && !o->adjoint)
        forward_forces(r, m, dforce, status);
    else if (code == 0)
        code = adjoint_forces(r, m, dforce, status, why, why_n);
    for (int k = 0; k < m->n_params; k++)
        free(dv[k]);
    free(dv);
    if (stats)
        *stats = dynamic_stats(r);
    for (int k = 0; k < m->n_params; k++)
        if (status[k] == DYNAMIC_NOT_SMOOTH)
            snprintf(b->why_switch[k], sizeof b->why_switch[k], "%s (first at t = %.6g s)", dynamic_why(status[k]),
                     dynamic_switch_time(r, k));
    dynamic_run_free(r);
    return code == 0 ? SRD_EXIT_OK : SRD_EXIT_NUMERIC;
}

bool grad_end_probe(const srd_probe *pr) { return pr->kind != SRD_PROBE_STATE; }

const char *grad_simulation_why(const StaticPoint *b, int k, int status)
{
    if (b->m->params[k].shapes)
        return "it sets the discretisation";
    return status == DYNAMIC_NOT_SMOOTH ? b->why_switch[k] : dynamic_why(status);
}

int grad_simulation(StaticPoint *b, const GradOptions *o)
{
    const srd_model *m = b->m;
    char why[512] = "";
    double **dq = srd_xcalloc((size_t)m->n_params + 1, sizeof *dq), **dforce = srd_xcalloc((size_t)m->n_params + 1, sizeof *dforce);
    for (int k = 0; k < m->n_params; k++) {
        dq[k] = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
        dforce[k] = srd_xcalloc(GRAD_FORCE_WIDTH * (size_t)m->simulate.n_probes + 1, sizeof(double));
    }
    int *status = srd_xcalloc((size_t)m->n_params + 1, sizeof(int));
    DynamicStats st;
    int code = grad_simulation_derive(b, o, dq, dforce, status, &st, why, sizeof why);
    if (code == SRD_EXIT_OK) {
        if (!o->quiet)
            print_header(b, o, &st);
        print_params(b, dq, dforce, status);
        if (!o->quiet)
            print_cost(&st, o);
    } else
        fprintf(messages(o), "srdc: error: %s\n", why);
    for (int k = 0; k < m->n_params; k++)
        free(dq[k]), free(dforce[k]);
    free(dq), free(dforce), free(status);
    return code;
}
