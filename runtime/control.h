/* control.h — the sampled-data controller of a model's `control` block: at t = 0 and every
 * multiple of its period, before the step that starts then, it reads the state (probes, t,
 * params, inputs, its vars) and runs its steps in order, writing its vars and inputs; the
 * inputs then hold until the next sample. srd_step runs it, so `srdc run`, built simulators
 * and library users all sample alike. */
#ifndef SRD_CONTROL_H
#define SRD_CONTROL_H
#include <stdbool.h>
#include <stdint.h>
#include "srd_kernel.h"
#include "srd_model.h"

struct srd_sim;

typedef struct srd_controller {
    const srd_control *c;
    srd_kernel_fn     *fns;   /* per step of c */
    double            *data;  /* c->n_data: vars, lets and probe values */
    double            *out;   /* one step's value */
    int32_t           *rows;  /* 0, 1, 2, ...: where a step's kernel adds its components */
    int64_t            next;  /* the sample due next, at next * period */
} srd_controller;

/* The controller of model m from the compiled schedules (fns, with their actuation and expr as
 * srd_sim_set_schedules takes them): the control steps are those of the steps' expressions.
 * NULL when the model has no control block. */
srd_controller *srd_controller_new(const srd_model *m, int n, const srd_kernel_fn *fns, const int *actuation,
                                   const int *expr);
void srd_controller_free(srd_controller *k);

/* Runs the sample due at the sim's time, if one is: s->t at or past next * period (relative
 * tolerance 1e-6 of the step). Several samples inside one step run once, at its start. */
void srd_controller_sample(struct srd_sim *s);
/* Whether a sample is due at the sim's time (srd_controller_sample would run it); false without a
 * controller. */
bool srd_controller_due(const struct srd_sim *s);

/* The index of the control step whose expression is `expr`, or -1 (a schedule of loads). */
int srd_control_step_of_expr(const srd_model *m, int expr);

#endif
