/* srd.h — srd as a library (libsrd): open a model, step it, read and write its state, set its
 * inputs, read its probes and forces. The one public header of the C API.
 *
 * A model opens from a .srd file (its kernels are compiled for this machine, cached on disk) or
 * from a simulator built with `srdc build --shared` (its kernels compiled in). Everything is in
 * SI units. Every function that can fail returns an srd_status; the message of the latest
 * failure on the calling thread is srd_last_error(). Nothing here prints or exits.
 *
 * Threads: different instances may be used from different threads at once (opening models is
 * serialised inside the library); one instance must not be used from two threads at once.
 *
 * Lifetimes: the arrays srd_q, srd_v, srd_x, srd_xdot and the index tables return point into
 * the instance's memory, valid until srd_close or srd_set_param (which builds the model anew);
 * stepping, resetting and writing the state keep them valid and update them in place. */
#ifndef SRD_H
#define SRD_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct srd_instance srd_instance;

typedef enum srd_status {
    SRD_OK = 0,
    SRD_ERR_INPUT = 1,    /* the model or a value given is wrong (the message says where) */
    SRD_ERR_NUMERIC = 2,  /* a step failed to converge or became NaN: the instance is failed */
    SRD_ERR_IO = 3,       /* a file could not be read or written */
    SRD_ERR_MEMORY = 4,   /* out of memory, or a model too large for it */
    SRD_ERR_ARGUMENT = 5, /* an unknown name, an index out of range, a NULL or wrong-size array */
    SRD_ERR_STATE = 6,    /* the instance failed earlier: reset it (or it has nothing to simulate) */
} srd_status;

/* The message of the latest failure on this thread ("" when none): for bad input in a .srd
 * file, every diagnostic as `file:line:col: error: ...` with the source line, a caret and a
 * hint. Valid until the next call on this thread. */
const char *srd_last_error(void);
/* The message of the instance's latest failure ("" when none): for srd_run_many, whose
 * failures happen on other threads. */
const char *srd_error(const srd_instance *inst);
/* The library's version, "0.1.0". */
const char *srd_version(void);

/* ---- opening and closing ---- */

/* Opens the model at `path`: a .srd file, or a shared library made by `srdc build --shared`.
 * params are n_params "name=value" texts as `srdc run -p` takes them (a value may carry a
 * unit: "E=2MPa"); params may be NULL when n_params is 0. The instance starts where the model's
 * simulation starts (its reference, or the static equilibrium with `start = equilibrium`). */
srd_status srd_open(const char *path, const char *const *params, int n_params, srd_instance **out);
/* Frees the instance and everything it owns; NULL is ignored. */
void srd_close(srd_instance *inst);

/* ---- time ---- */

/* Back to the start of the simulation: state, time, inputs (to their defaults), controller,
 * contact history. A failed instance becomes usable again. */
srd_status srd_reset(srd_instance *inst);
/* n steps of the model's dt with the simulate block's method. A step that fails leaves the
 * instance failed (SRD_ERR_NUMERIC, its message says when and what to try), with the state of
 * the last step that succeeded. */
srd_status srd_run_steps(srd_instance *inst, int n);
/* Steps until the time reaches t (the last step ends at or just past t, within 1e-9 dt). */
srd_status srd_run_until(srd_instance *inst, double t);
/* Changes the time step of the following steps (> 0). */
srd_status srd_set_dt(srd_instance *inst, double dt);
double     srd_time(const srd_instance *inst);
double     srd_dt(const srd_instance *inst);
/* Steps taken since the start (or the last reset). */
long       srd_steps(const srd_instance *inst);

/* Steps n instances by `steps` steps each, on up to `threads` threads (0: one per core), each
 * instance on one thread. status[k] (n entries, may be NULL) gets instance k's result; returns
 * SRD_OK when all succeeded, else the first failure's status. */
srd_status srd_run_many(srd_instance *const *insts, int n, int steps, int threads, srd_status *status);

/* ---- params and inputs ---- */

/* Params (build-time values) and inputs (signals set while running), in declaration order. */
int         srd_param_count(const srd_instance *inst);
const char *srd_param_name(const srd_instance *inst, int k);   /* NULL when out of range */
/* Its SI unit ("Pa", "1" when dimensionless). */
const char *srd_param_unit(const srd_instance *inst, int k);
/* 1 for an input, 0 for a param. */
int         srd_param_is_input(const srd_instance *inst, int k);
/* Index of the param or input called name, or -1. */
int         srd_param_index(const srd_instance *inst, const char *name);
srd_status  srd_get_param(const srd_instance *inst, const char *name, double *value);
/* Sets a param (not an input): the model is elaborated anew with the value (SI), exactly as
 * `srdc run -p` would, and the instance is reset. Refused when the value would change the
 * discretisation or, for a built simulator, a value compiled in as a constant. */
srd_status  srd_set_param(srd_instance *inst, const char *name, double value);
/* Sets an input (SI); it holds until set again (or until the model's controller sets it). */
srd_status  srd_set_input(srd_instance *inst, const char *name, double value);
srd_status  srd_set_input_at(srd_instance *inst, int k, double value);
srd_status  srd_get_input(const srd_instance *inst, const char *name, double *value);

/* ---- state ----
 * The state vector q has one entry per DOF (srd_dof_count): node coordinates, rod twist
 * angles, mid-edge shell DOFs, rigid bodies' centres and rotation parameters, joint
 * multipliers; srd_dof_kind tells which. srd_v is its velocity. srd_x and srd_xdot are the
 * node positions and velocities as an n_nodes x 3 row-major array (node i at 3 i): the library
 * copies them from q and v after every step and reset, and a value written into them goes into
 * q (v) before the next step, as does a value written into q or v directly. */
int     srd_dof_count(const srd_instance *inst);
int     srd_node_count(const srd_instance *inst);
double *srd_q(srd_instance *inst);
double *srd_v(srd_instance *inst);
double *srd_x(srd_instance *inst);
double *srd_xdot(srd_instance *inst);

/* DOF kinds (srd_dof_kind). */
enum { SRD_KIND_X, SRD_KIND_Y, SRD_KIND_Z, SRD_KIND_TWIST, SRD_KIND_XI, SRD_KIND_ROTATION, SRD_KIND_MULTIPLIER };
/* Per DOF: its kind, its owner (node, or edge for a twist or xi; not defined for multipliers) and
 * whether it is held (1: clamped, fixed or moved by prescribed motion). n_dofs entries. */
const int           *srd_dof_kind(const srd_instance *inst);
const int           *srd_dof_owner(const srd_instance *inst);
const unsigned char *srd_dof_fixed(const srd_instance *inst);
/* Per node: its first DOF (x; y and z follow). n_nodes entries. */
const int *srd_node_dof(const srd_instance *inst);
/* Edges (2 nodes each) and triangles (3 nodes each), with their counts. */
const int *srd_edges(const srd_instance *inst, int *n_edges);
const int *srd_triangles(const srd_instance *inst, int *n_triangles);
/* Per edge: its twist DOF, or -1. */
const int *srd_edge_twist(const srd_instance *inst);

/* Objects (rods, shells, bodies, lattices, solids) by name and their nodes. */
int         srd_object_count(const srd_instance *inst);
const char *srd_object_name(const srd_instance *inst, int k);
/* "rod", "shell", "body", "lattice" or "solid". */
const char *srd_object_kind(const srd_instance *inst, int k);
int         srd_object_index(const srd_instance *inst, const char *name);
const int  *srd_object_nodes(const srd_instance *inst, int k, int *n_nodes);

/* Element sets: kind ("stretch", "bend_twist", ...), instances and nodes per instance; the
 * stencil nodes of instance i are nodes[i * n_node ...]. */
int         srd_element_set_count(const srd_instance *inst);
const char *srd_element_set_kind(const srd_instance *inst, int k, int *n, int *n_node);
const int  *srd_element_set_nodes(const srd_instance *inst, int k);

/* Rigid bodies: centre of mass, orientation (row-major 3x3 rotation from the body's reference
 * axes: R x_ref = x now), velocity and angular velocity (world). */
int        srd_body_count(const srd_instance *inst);
const char *srd_body_name(const srd_instance *inst, int k);
srd_status srd_get_body(const srd_instance *inst, int k, double position[3], double rotation[9], double velocity[3],
                        double omega[3]);
/* Any of the four may be NULL (left as it is). The rotation must be orthonormal (1e-9). */
srd_status srd_set_body(srd_instance *inst, int k, const double position[3], const double rotation[9],
                        const double velocity[3], const double omega[3]);

/* A snapshot of the complete state (time, q, v, the elements' step-start frames, rigid bodies'
 * turns, the controller and the inputs): bytes in memory the caller frees with srd_free. Loaded
 * into an instance of the same model with the same params (and dt) it continues exactly as the
 * instance saved would have, bit for bit. */
srd_status srd_save_state(srd_instance *inst, void **data, size_t *size);
srd_status srd_load_state(srd_instance *inst, const void *data, size_t size);
void       srd_free(void *data);

/* ---- what the model measures ---- */

/* The simulate block's probes, by name; their values now (the count given by srd_probe_size:
 * 1 for a component, 3 for a position or force, 6 for a reaction's force and moment). */
int         srd_probe_count(const srd_instance *inst);
const char *srd_probe_name(const srd_instance *inst, int k);
int         srd_probe_index(const srd_instance *inst, const char *name);
int         srd_probe_size(const srd_instance *inst, int k);
srd_status  srd_read_probe(srd_instance *inst, const char *name, double *values, int n);
srd_status  srd_read_probe_at(srd_instance *inst, int k, double *values, int n);

/* Kinetic energy and potential energy (elastic, gravity and loads) now. */
srd_status srd_energy(srd_instance *inst, double *kinetic, double *potential);
/* Per DOF (n_dofs entries): the force the supports exert on held DOFs (0 on free ones); the
 * force the ground (target -1), obstacle k (target k) or all of them (-2) exert, or that the
 * model's parts in contact exert on each other (-3, `contact self`: it sums to zero). */
srd_status srd_reaction_forces(srd_instance *inst, double *force, int n);
srd_status srd_contact_forces(srd_instance *inst, int target, double *force, int n);

/* ---- sensitivities ---- */

/* The derivatives of the static equilibrium's probes with respect to every param of the model at
 * path (params as srd_open takes them), as `srdc grad` prints them: one solve with the
 * equilibrium's stiffness per param (docs/optimization.md). A model without a `static` block is
 * refused. Free the result with srd_gradient_free. */
typedef struct srd_gradient srd_gradient;
srd_status srd_static_gradient(const char *path, const char *const *params, int n_params, srd_gradient **out);
/* The derivatives of the simulate block's probes at the end of the run, by forward
 * sensitivities (adjoint 0: one pass for every param) or by the adjoint (1: one backward pass per
 * probe value), as `srdc grad --simulate [--adjoint]` prints them. A model without a `simulate`
 * block, or whose simulation has no derivative here (explicit methods, rigid bodies, ...), is
 * refused with the reason; a param whose effect switches near its value gets a why. */
srd_status srd_simulation_gradient(const char *path, const char *const *params, int n_params, int adjoint,
                                   srd_gradient **out);
/* An objective (`objective`, as `minimize = ...;` holds it, or NULL for the model's `optimize`
 * block's) at the model's point: its value in *value and its derivative with respect to every
 * param as the result's one probe, "objective" (`srdc grad --objective`): through the static
 * equilibrium's sensitivities, or one adjoint pass of the simulation. */
srd_status srd_objective_gradient(const char *path, const char *const *params, int n_params, const char *objective,
                                  double *value, srd_gradient **out);
int           srd_gradient_param_count(const srd_gradient *g);
const char   *srd_gradient_param(const srd_gradient *g, int k);
int           srd_gradient_probe_count(const srd_gradient *g);
/* The block's probe i, its component count in *size (1; 3 for a node or a contact force; 6 for a
 * reaction: its force, then its moment). */
const char   *srd_gradient_probe(const srd_gradient *g, int i, int *size);
/* d(probe i)/d(param k): *size values in SI (NaN where not derived: a simulation's force probes,
 * the parts' contact forces on each other). */
const double *srd_gradient_values(const srd_gradient *g, int i, int k);
/* Why param k has no derivative, or NULL when it has one. */
const char   *srd_gradient_why(const srd_gradient *g, int k);
void          srd_gradient_free(srd_gradient *g);

/* The derivatives of the natural frequencies of the `modes` block of the model at path with
 * respect to every param (params as srd_open takes them), as `srdc grad` prints them: at the
 * block's configuration, the static block solved first for `at = equilibrium`
 * (docs/optimization.md, "Modal sensitivities"). A model without a `modes` block, or whose
 * modes are not derived (joints, contact pairs), is refused with the reason. Free the result
 * with srd_frequency_gradient_free. */
typedef struct srd_frequency_gradient srd_frequency_gradient;
srd_status srd_modal_gradient(const char *path, const char *const *params, int n_params,
                              srd_frequency_gradient **out);
int         srd_frequency_gradient_mode_count(const srd_frequency_gradient *g);
int         srd_frequency_gradient_param_count(const srd_frequency_gradient *g);
/* Mode j's frequency (Hz, j from 0) and the name of param k. */
double      srd_frequency_gradient_frequency(const srd_frequency_gradient *g, int j);
const char *srd_frequency_gradient_param(const srd_frequency_gradient *g, int k);
/* d(f_j)/d(param k) in Hz per SI unit of the param; NaN where there is none. */
double      srd_frequency_gradient_value(const srd_frequency_gradient *g, int j, int k);
/* Why param k has no derivative (it sets the discretisation...), or NULL when it has one; why
 * mode j has none (a rigid mode, a repeated frequency), or NULL. */
const char *srd_frequency_gradient_param_why(const srd_frequency_gradient *g, int k);
const char *srd_frequency_gradient_mode_why(const srd_frequency_gradient *g, int j);
void        srd_frequency_gradient_free(srd_frequency_gradient *g);

#ifdef __cplusplus
}
#endif
#endif
