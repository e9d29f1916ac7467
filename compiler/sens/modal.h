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
enum { MODAL_INPUTS = TANGENT_DATA | 1 << KIN_DOF };

/* The kernel of one element kind: per instance the value
 *     sum_j d(phi^T H phi)/d(input_j) w_j,
 * phi (the mode at the stencil's DOFs) and then the tangents w_j read as extra data columns. */
typedef struct ModalKernel {
    int            n_slots; /* the inputs differentiated */
    KernelInput   *slots;
    int            nd, n_data;
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

/* Prints d(frequency)/d(param) in Hz per unit for every mode of the model's `modes` block and
 * every param; at `at = equilibrium` the point's sim must hold the solved static equilibrium.
 * Returns an exit status. */
int modal_grad(StaticPoint *b, const GradOptions *o);

#endif
