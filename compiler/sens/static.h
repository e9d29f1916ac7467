/* static.h — the derivative of a static equilibrium with respect to a param, by the implicit
 * function theorem: at an equilibrium R(q, p) = 0, so dq/dp = -K^-1 dR/dp, one solve with the
 * stiffness K. dR/dp comes from the elements' tangent kernels (tangent.h), given how the param
 * moves each set's data columns. */
#ifndef SRD_SENS_STATIC_H
#define SRD_SENS_STATIC_H
#include "sens/tangent.h"
#include "sim.h"

/* The derivative of the residual (free rows, srd_system_grad_len values) along column tangents:
 * column_tangents[k] holds set k's n x n_data tangents (NULL: the param does not move set k);
 * dparams the params' own (n_params values, NULL: none), for kernels that read a param; dq_held
 * how prescribed motion moves the held DOFs (n_dofs values, zero on free ones; NULL: not). */
void sens_residual_tangent(srd_sim *s, const KernelTangent *tangents, double *const *column_tangents,
                           const double *dparams, const double *dq_held, double *g);
/* The same with the reference geometry moving too: dq0 the step start's configuration's
 * tangent (n_dofs; the reference's, in a static state) and dstate[k] set k's state's
 * (n * n_state: frames, rest lengths, reference positions). */
void sens_residual_tangent_moved(srd_sim *s, const KernelTangent *tangents, double *const *column_tangents,
                                 const double *dparams, const double *dq_held, const double *dq0,
                                 double *const *dstate, double *g);

/* Where a sliding clamp's line takes its node as the reference geometry moves: the node stays on
 * anchor + s axis, so it moves by d(anchor) + s d(axis), s its distance along the line at q
 * (danchor: n_dofs, read at the anchors; daxis: 3 per slide, NULL when no line turns). Into w (n_dofs, zero elsewhere
 * and on held rows); along the line a solve adds the free part. */
void sens_slide_motion(const srd_sim *s, const double *q, const double *danchor, const double *daxis, double *w);

/* Whether sliding clamp k's anchor is held (srd_slides_across_part and the modes constrain its
 * node only then). */
bool sens_anchor_held(const srd_sim *s, int k);
/* Whether a `rotate` drives the anchor of sliding clamp k (its line turns with it). */
bool sens_anchor_rotated(const srd_model *m, int k);
/* How a tangent of the held DOFs (dheld: n_dofs, read at the anchors) moves the sliding clamps'
 * anchors: not at all; some anchor moves (its line, and its node across it, move with it); an
 * anchor a `rotate` drives moves (its line would turn). */
enum { SENS_ANCHORS_STILL, SENS_ANCHORS_MOVED, SENS_ANCHORS_TURNED };
int sens_anchors_moved(const srd_model *m, const double *dheld);

/* The reactions' tangent as srd_sim_reactions takes them (dr: every DOF's residual's tangent, in
 * place): a sliding node keeps its part across its line, r - (a . r) a, which as the line turns
 * (daxis: 3 per slide, NULL when none does) moves by -(da . r) a - (a . r) da more (res: the
 * residual there, or the reactions). */
void sens_reactions_across(const srd_sim *s, const double *res, const double *daxis, double *dr);
/* A turning line's share of the equation a . R = 0 that holds a sliding node along its line: as a
 * turns by da, (da . R) joins the node's row along the line. Adds (da . R) a into the node's free
 * rows of g (before the solve's reduction takes a . g there); res: n_dofs, R at the node (its
 * residual, or the reactions, which keep it across the line). */
void sens_slides_turn_rows(const srd_sim *s, const double *res, const double *daxis, double *g);

/* The contact pairs' data tangents for the pairs s's batches hold now: every instance of each
 * pair set (m->self_contact.set) takes its `kc`, `delta`, `mu` and `slip_velocity` from the
 * `contact` block, so they move as its values do (dpairs: ElabTangent.pairs), and its `h`, two
 * contact radii, moves by twice the radius the block gives or, when it gives none, by the two
 * parts' objects' own radii's (dradius: ElabTangent.object_contact_radius; NULL: none moves).
 * columns[set] is made the batch's size (n * n_data); other sets are left alone. */
void sens_pair_columns(const srd_sim *s, const double dpairs[5], const double *dradius, double **columns);

/* dq/dp at the sim's configuration, an equilibrium (n_dofs values, 0 on held DOFs). Returns 0,
 * or 1 when the stiffness is singular. */
int sens_static(srd_sim *s, const KernelTangent *tangents, double *const *column_tangents, const double *dparams,
                double *dq);

#endif
