/* control_tangent.h — the exact derivative of one sample of the `control` block (runtime/control.c):
 * the probes it reads, then its steps in order, each writing a var, a let or an input. Every
 * step's value is differentiated symbolically with respect to everything it reads (the
 * controller's period, vars, lets and probe values, the params and inputs), on the interpreter
 * tier; an input's saturation at its declared range is differentiated as the clamp it is. A
 * position probe's tangent is the configuration's; a force probe's (a reaction, the ground's or
 * an obstacle's force) value, tangent and adjoint are the caller's, who evaluates the forces of
 * the step before the sample. Forward along one direction and transposed for the adjoint. */
#ifndef SRD_SENS_CONTROL_TANGENT_H
#define SRD_SENS_CONTROL_TANGENT_H
#include <stdbool.h>
#include <stddef.h>
#include "kernels.h"

typedef struct ControlTangents ControlTangents;

/* Why the control block's samples have no derivative here ("" when they have): a probe it reads
 * that is neither a position nor a force derived (a body's, a joint's, the parts' on each other). */
const char *control_tangents_unsupported(const srd_model *m);

/* Whether the control block reads a force probe (its values come from the caller). */
bool control_reads_forces(const srd_model *m);

/* Whether probe pr is a force a sample's derivative reads: a reaction, the ground's or an
 * obstacle's force. */
bool control_force_probe(const srd_probe *pr);

/* Whether slot j of the control block holds a force probe's values. */
bool control_force_slot(const srd_model *m, int j);

/* Whether the control block sets param k (an input it assigns): its value changes over the run. */
bool control_sets(const srd_model *m, int k);

/* The tangent programs of the control block's steps (mk's kernels of them; adds nodes to their
 * DAGs). NULL, with a message in err, when one could not be built. */
ControlTangents *control_tangents_build(ModelKernels *mk, const srd_model *m, char *err, size_t err_n);
void             control_tangents_free(ControlTangents *C);

/* One sample as the controller ran it: at time t (dt: the simulate block's step, `dt` in its
 * expressions), reading configuration q and, in the force probes' slots of forces (n_data values
 * indexed as data; NULL without force probes), their values; data (the controller's n_data
 * values) and params (n_params) hold the values before the sample and are overwritten with those
 * after it. */
typedef struct ControlSample {
    double        t, dt;
    const double *q, *forces;
    double       *data, *params;
} ControlSample;

/* The sample's tangents along one direction: ddata and dparams hold those before the sample and
 * get those after it; dq is the configuration's, dforces the force probes' (as x->forces). True
 * when a switch of a step (min, max, a
 * comparison, ...) or an input's saturation lies within 2 hk of the direction's change (hk: the
 * param's difference step): the sample is not smooth along it. */
bool control_tangents_forward(const ControlTangents *C, const srd_model *m, ControlSample *x, const double *dq,
                              const double *dforces, double *ddata, double *dparams, double hk);

/* The transpose: ldata and lparams hold the adjoints of the data and params after the sample and
 * get those before it; the position probes' share is added into lq (n_dofs), the force probes'
 * into lforces (as x->forces; may be NULL without force probes). A switch within 2 hk[k] of
 * param k's direct reach (the steps that read it, and every input's saturation within 2 hk of
 * the input's own step, for all params) sets near[k]. */
void control_tangents_adjoint(const ControlTangents *C, const srd_model *m, ControlSample *x, double *ldata,
                              double *lparams, double *lq, double *lforces, const double *hk, bool *near);

#endif
