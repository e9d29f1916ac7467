/* control.c — runs the `control` block's compiled steps at its samples (see control.h). */
#include "control.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "probe.h"
#include "sim.h"

int srd_control_step_of_expr(const srd_model *m, int expr)
{
    for (int k = 0; k < m->control.n_steps; k++)
        if (m->control.steps[k].expr == expr)
            return k;
    return -1;
}

srd_controller *srd_controller_new(const srd_model *m, int n, const srd_kernel_fn *fns, const int *actuation,
                                   const int *expr)
{
    const srd_control *c = &m->control;
    if (!c->present)
        return NULL;
    srd_controller *k = srd_xcalloc(1, sizeof *k);
    k->c = c;
    k->fns = srd_xcalloc((size_t)c->n_steps + 1, sizeof *k->fns);
    for (int j = 0; j < n; j++) {
        int step = actuation[j] < 0 ? srd_control_step_of_expr(m, expr[j]) : -1;
        if (step >= 0)
            k->fns[step] = fns[j];
    }
    k->data = srd_xcalloc((size_t)c->n_data + 1, sizeof(double));
    memcpy(k->data, c->init, sizeof(double) * (size_t)c->n_data);
    k->out = srd_xcalloc(9 + 1, sizeof(double));
    k->rows = srd_xcalloc(9 + 1, sizeof(int32_t));
    for (int j = 0; j < 9; j++)
        k->rows[j] = j;
    return k;
}

void srd_controller_free(srd_controller *k)
{
    if (!k)
        return;
    free(k->fns);
    free(k->data);
    free(k->out);
    free(k->rows);
    free(k);
}

/* The probe values the block reads, at the sim's state, into their slots. */
static void read_probes(srd_controller *k, struct srd_sim *s)
{
    for (int j = 0; j < k->c->n_slots; j++) {
        const srd_control_slot *sl = &k->c->slots[j];
        if (sl->kind != SRD_CONTROL_PROBE)
            continue;
        double v[6];
        srd_probe_value(s, &s->m->simulate.probes[sl->probe], v);
        memcpy(&k->data[sl->first], v, sizeof(double) * (size_t)sl->n);
    }
}

/* Step j: its kernel evaluates the value (one instance whose data are the slots) and the
 * value goes to its slot or its input. */
static void run_step(srd_controller *k, struct srd_sim *s, int j)
{
    const srd_control_step *st = &k->c->steps[j];
    srd_elem_batch b = { 1, st->n, k->c->n_data, 0, k->rows, k->rows, NULL, k->data, NULL };
    srd_eval_ctx ctx = { NULL, NULL, NULL, s->params, s->t, s->step_dt, NULL, k->out, NULL };
    memset(k->out, 0, sizeof(double) * (size_t)st->n);
    k->fns[j](&ctx, &b);
    if (st->slot >= 0)
        memcpy(&k->data[k->c->slots[st->slot].first], k->out, sizeof(double) * (size_t)st->n);
    else /* an actuator saturates: the input's declared range holds */
        s->params[st->param] = fmin(fmax(k->out[0], s->m->params[st->param].lo), s->m->params[st->param].hi);
}

/* The tolerance on the sample times: 1e-6 of the step (of the period when that is shorter). */
static double sample_tolerance(const srd_controller *k, const struct srd_sim *s)
{
    double period = k->c->period;
    return 1e-6 * (s->dt > 0 ? fmin(s->dt, period) : period);
}

bool srd_controller_due(const struct srd_sim *s)
{
    const srd_controller *k = s->controller;
    return k && s->t >= (double)k->next * k->c->period - sample_tolerance(k, s);
}

void srd_controller_sample(struct srd_sim *s)
{
    srd_controller *k = s->controller;
    if (!srd_controller_due(s))
        return;
    double period = k->c->period, tol = sample_tolerance(k, s);
    read_probes(k, s);
    for (int j = 0; j < k->c->n_steps; j++)
        run_step(k, s, j);
    k->next = (int64_t)floor((s->t + tol) / period) + 1;
}
