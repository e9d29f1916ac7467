/* lower.h — turns an `energy` or `force` definition (stdlib or user) into a scalar expression
 * DAG over the inputs of one element instance, then derives its residual and Jacobian. */
#ifndef SRD_LOWER_H
#define SRD_LOWER_H
#include <stdbool.h>
#include "ast.h"
#include "elab.h"
#include "codegen.h"
#include "expr.h"
#include "srd_model.h"

/* One DOF of the stencil: node parameter p's x/y/z (comp 0..2), or edge parameter p's twist
 * (comp 3) or mid-edge xi (comp 4), a body parameter's rotation (comp 5..7), or a
 * constraint's multiplier k (param -1, comp 8 + k). Node DOFs come first, in parameter order. */
typedef struct StencilDof {
    int param;
    int comp;
} StencilDof;

/* Per-instance values the runtime provides in the batch's state array. */
typedef enum {
    STATE_X0,      /* reference position of a node (comp 0..2) */
    STATE_MASS,    /* lumped mass of a node */
    STATE_REST,    /* rest length of an edge */
    STATE_D1,      /* reference director d1 of an edge at the step start (comp 0..2) */
    STATE_D2,      /* reference director d2 */
    STATE_TANGENT, /* unit tangent at the step start */
    STATE_SIGN,    /* +1 when the edge runs along the stencil, -1 against it */
    STATE_REF_TWIST, /* reference twist between the previous stencil edge and this one, at the step start */
    STATE_TAU0,    /* mid-edge tau^{k,0} = n_avg x e^ of an edge at the step start (comp 0..2) */
    STATE_TAU_REF, /* the same at the reference configuration */
    STATE_FRAME,   /* a body's axes at the step start (comp 3 k + i: component i of axis k) */
} StateKind;

typedef struct StateEntry {
    StateKind kind;
    int       param; /* stencil parameter */
    int       comp;
} StateEntry;

typedef struct LoweredElement {
    char        *kind;
    bool         is_force;
    ExprDag     *dag;
    int          n_inputs;
    KernelInput *inputs;   /* slot -> source */
    int          nd;
    StencilDof  *dofs;     /* nd */
    int          n_state;
    StateEntry  *state;
    ExprId       value;    /* energy, or -1 */
    ExprId      *res;      /* nd */
    ExprId      *jac;      /* nd * nd (upper triangle used when symmetric) */
    bool         symmetric;
    int          ops_value, ops_grad, ops_jac; /* operations after sharing */
} LoweredElement;

/* Lowers `def` (from `prog`, the model's file or a standard module) for the instances of
 * `set` (uniform per-instance data is folded into constants; params of the model become
 * run-time inputs). Expressions of the model itself (the ground's height) are lowered in
 * `model_prog`. On failure returns false with a
 * message in err. */
bool lower_element(const Program *prog, const Program *model_prog, const srd_model *model, const Stmt *def,
                   const srd_elemset *set, LoweredElement *out, char *err, size_t err_n);
void lowered_free(LoweredElement *le);

/* The definition an element set uses: a user energy/force of that name, or the standard
 * element (stretch, hinge, ...) from the loaded modules. NULL when none is loaded. */
const Stmt *lower_find_definition(const Program *prog, const char *kind);

/* Per-instance data of a schedule: arc-length fraction s and reference position x, y, z. */
enum { SCHEDULE_N_DATA = 4 };

/* Lowers a run-time expression (with the values it captured) of t, the params and the instance's s, x, y, z (an actuation
 * value or a time-dependent load) as a kernel whose n_out "residual" rows are the value's
 * components: the gradient-only kernel of kind `kind` adds them at the batch's res indices. With
 * `rates` (prescribed motion) the value's first and second time derivatives follow it, so the
 * kernel has 3 n_out rows. */
bool lower_schedule(const Program *prog, const srd_model *model, const char *kind, const RunExpr *value, int n_out, bool rates,
                    LoweredElement *out, char *err, size_t err_n);

/* Lowers step `step` of the model's control block: its value, of t, the params and inputs (run-time
 * inputs) and the block's slots (vars, lets, probe values: data columns of the one instance). */
bool lower_control_step(const Program *prog, const srd_model *model, const char *kind, int step, LoweredElement *out,
                        char *err, size_t err_n);

/* Lowers the model's `optimize` objective: a scalar (res[0]) of the probes of
 * srd_objective_analysis, their values in data slots 0, 1, ... (in probe order, as many as
 * elab_objective_probe_width gives each), of the values of its terms (optimize.terms[k] in the data slot after the probes' + k)
 * and of the params (KIN_PARAM inputs). */
bool lower_objective(const Program *prog, const srd_model *model, LoweredElement *out, char *err, size_t err_n);
/* Lowers the expression of term k of the objective (an integrand, or a tracked value): a scalar
 * of the probes at one step (the same data slots), t (KIN_TIME) and the params. */
bool lower_objective_term(const Program *prog, const srd_model *model, int k, LoweredElement *out, char *err,
                          size_t err_n);

#endif
