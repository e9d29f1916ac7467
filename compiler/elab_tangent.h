/* elab_tangent.h — what elaboration gives besides the model: the derivative of everything a
 * param moves (element data, masses, loads, gravity, damping) along one seeded param, and which
 * element data columns depend on a param at all. Element rows are recorded as they are added
 * (elab_add_row), so their derivatives follow the same formulas as their values (dual.h). */
#ifndef SRD_ELAB_TANGENT_H
#define SRD_ELAB_TANGENT_H
#include <stdbool.h>
#include "elab.h"

/* d(.)/d(param) of the model's numbers, for a model elaborated with the param seeded
 * (elab_file_seeded). Arrays live in the elaboration's arena. */
typedef struct ElabTangent {
    int      n_sets;
    double **data;           /* per element set: n * n_data */
    double  *dof_mass;       /* n_dofs (srd_model.dof_mass) */
    double  *body_inertia;   /* 3 per rigid body: its principal moments */
    double  *loads;          /* 3 per constant load */
    double   gravity[3];
    double   medium_density;
    double   damping_alpha, damping_beta;
    double  *object_rho;     /* per object */
    double  *object_E;       /* per object: its Young's modulus */
    bool     switched;       /* a switch (min, max, abs, a comparison) lies within the param's reach */
    bool     lost;           /* the param moves a value elaboration carries no derivative of */
    double   pairs[5];       /* contact between parts: delta, stiffness, friction, slip velocity and the
                              * contact radius given (the pairs' data, made at run time) */
    double  *object_contact_radius; /* per object: its own contact radius' (a rod's radius, half a
                              * shell's thickness), which contact pairs take when `contact` gives none */
    bool     moves_release;  /* it moves the time of a `release` */
    double  *control_init;   /* the control block's data's initial values (its vars') */
} ElabTangent;

/* The param to derive along, and how far its value may move (the reach within which a switch
 * such as max(a, b) at a = b makes the derivative meaningless). */
typedef struct ElabSeed {
    const char *param;
    double      reach;
} ElabSeed;

/* elab_program_with with the derivative along seed->param (of what it would give at values
 * near the param's, exactly); *tan's arrays live in the arena. NULL after errors. */
srd_model *elab_program_seeded(Program *prog, Arena *arena, const char *source, const char *const *overrides,
                               int n_overrides, const ElabSeed *seed, ElabTangent *tan);

/* Adds an element row of Duals to set `set` of m: the values to the set, their derivatives
 * and dependences to the elaboration's record. Returns the instance's index. */
int  elab_add_row(Elab *e, srd_model *m, int set, const int *nodes, const int *edges, const signed char *signs,
                  const Dual *row, int object);
/* Records a row added another way (its values already in the set). */
void elab_record_row(Elab *e, const srd_model *m, int set, int inst, const Dual *row);
/* Once the model is complete: the derivative along the seed (when out is not NULL) and, when
 * every param-dependent value went through Duals, each set's param_column. */
void elab_tangent_finish(Elab *e, srd_model *m, ElabTangent *out);
void elab_tangent_free(Elab *e);

#endif
