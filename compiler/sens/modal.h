/* modal.h — modal sensitivities: the derivative of the natural frequencies of a model's `modes`
 * block with respect to its params. For a simple eigenpair of K phi = w^2 M phi, phi
 * M-normalised,
 *     d(w^2)/dp = phi^T (dK/dp) phi - w^2 phi^T (dM/dp) phi,   df/dp = d(w^2)/dp / (8 pi^2 f),
 * dK/dp the stiffness's change through the elements' data and params at a fixed configuration
 * and, at `at = equilibrium`, through the equilibrium's own change dq/dp (the static
 * sensitivity). The stiffness part is exact: a per-element "modal kernel" evaluates the
 * directional derivative of phi_e^T H_e phi_e, derived symbolically from the Hessian's DAG (a
 * third derivative of the energy). Repeated and zero frequencies have no derivative. */
#ifndef SRD_SENS_MODAL_H
#define SRD_SENS_MODAL_H
#include <stdbool.h>
#include <stddef.h>
#include "sens/grad.h"
#include "sens/tangent.h"

/* Input classes a modal kernel differentiates with respect to: data, params, configuration. */
enum { MODAL_INPUTS = TANGENT_DATA | 1 << KIN_DOF | 1 << KIN_DOF0 | 1 << KIN_STATE };

/* The kernel of one element kind: per instance the value
 *     sum_j d(phi^T H phi)/d(input_j) w_j,
 * phi (the mode at the stencil's DOFs) and then the tangents w_j read as extra data columns. */
typedef struct ModalKernel {
    int            n_slots; /* the inputs differentiated */
    KernelInput   *slots;
    int            nd, n_data, n_state;
    InterpProgram *program; /* NULL: the kind reads none of them */
} ModalKernel;

/* Builds the modal kernel of element le, lowered for `set` (adds nodes to le's DAG). */
bool modal_kernel_build(LoweredElement *le, const srd_elemset *set, ModalKernel *out, char *err, size_t err_n);
/* phi^T (dK_e along w) phi summed over the batch's instances; phi by model DOF. */
double modal_kernel_run(const ModalKernel *k, const srd_eval_ctx *ctx, const srd_elem_batch *batch,
                        const double *phi, const InputTangents *w);
void modal_kernel_free(ModalKernel *k);

/* The mass the modal analysis gives DOF d: a node's mass, or a body's moment of inertia about
 * one of its axes for a rotation DOF. */
double modal_dof_mass(const srd_model *m, int d);

/* The modes of a point's model (its `modes` block) and what their derivatives need. */
typedef struct ModalPoint {
    srd_sim     *s;        /* the point's sim (at equilibrium), or `own` (at the reference) */
    srd_sim      own;
    bool         at_equilibrium;
    int          count, n; /* modes of the block; modes computed (one more, to see repeats) */
    double      *freq, *shapes;
    double       f_rigid;  /* frequencies up to this are rigid modes' */
    ModalKernel *kernels;  /* per set */
    const char  *refused;  /* why no frequency is derived (joints, contact...), or NULL */
    char         why[256]; /* room for a refusal naming an element kind */
} ModalPoint;

/* Solves the point's modes block at its configuration (at `at = equilibrium` the point's sim
 * must hold the solved static equilibrium). Returns an exit status (the message on o->errors,
 * else stderr); close it whatever it returns. */
int  modal_point_open(ModalPoint *md, StaticPoint *b, const GradOptions *o);
void modal_point_close(ModalPoint *md, int n_sets);

/* What mode j's derivative is: a value, or none (a rigid mode; a frequency repeated by mode
 * *twin, within 1e-6 relative). */
enum { MODAL_DERIVED, MODAL_RIGID, MODAL_REPEATED };
int modal_point_kind(const ModalPoint *md, int j, int *twin);
/* Why mode j has no derivative, in words written into buf, or NULL when it has one. */
const char *modal_point_why(const ModalPoint *md, int j, char *buf, size_t n);
/* d(f_j)/d(param k) in Hz per unit of the param into df (count values; NaN for a mode without
 * one). Returns STATIC_DERIVED, or why the param has none: a STATIC_* status
 * (static_point_why), or -1 when it sets the discretisation. */
int modal_point_derivative(ModalPoint *md, StaticPoint *b, const GradOptions *o, int k, double *df);

/* Prints d(frequency)/d(param) in Hz per unit for every mode of the model's `modes` block and
 * every param; at `at = equilibrium` the point's sim must hold the solved static equilibrium.
 * Returns an exit status. */
int modal_grad(StaticPoint *b, const GradOptions *o);

#endif
