/* grad.h — `srdc grad`: the derivative of every probe of a model's static equilibrium with
 * respect to every param, by one linear solve per param with the equilibrium's stiffness. */
#ifndef SRD_SENS_GRAD_H
#define SRD_SENS_GRAD_H
#include <stdbool.h>
#include <stdio.h>
#include "arena.h"
#include "ast.h"
#include "kernels.h"
#include "sens/tangent.h"
#include "sim.h"

typedef struct GradOptions {
    const char  *file;
    const char **overrides;  /* "name=value" */
    int          n_overrides;
    bool         quiet;
    FILE        *errors;     /* where messages go; NULL: stderr */
} GradOptions;

/* Prints d(probe)/d(param) with units for the static block's probes; returns an exit status. */
int grad_model(const GradOptions *o);

/* A model elaborated with o's params, its kernels (and their tangent kernels) and a sim for its
 * static block: what derivatives are taken at once srd_static has solved it. */
typedef struct StaticPoint {
    Arena        arena;
    Program      prog;
    srd_model   *m;
    ModelKernels mk;
    bool         have_kernels;
    KernelTable  kt;
    srd_sim      s;
    KernelTangent *tangents;
} StaticPoint;

/* Returns an exit status (messages on stderr); close the point whatever it returns. */
int  static_point_open(StaticPoint *b, const GradOptions *o);
void static_point_close(StaticPoint *b);
/* dq/dp of param k at the solved equilibrium (n_dofs values); STATIC_DERIVED, or why not. */
enum { STATIC_DERIVED, STATIC_SINGULAR, STATIC_MOVES_GEOMETRY, STATIC_OUTSIDE_RANGE, STATIC_NOT_SAMPLED };
int  static_point_derivative(StaticPoint *b, const GradOptions *o, int k, double *dq);
/* Why static_point_derivative gave no derivative, in words ("" for STATIC_DERIVED). */
const char *static_point_why(int status);
/* How param k moves the runtime's data (for modal sensitivities): d(columns)/dp per set (n *
 * n_data each) and d(mass)/dp per DOF (modal_dof_mass). STATIC_DERIVED, or why not; free it
 * with data_derivative_free whatever it returns. */
typedef struct DataDerivative {
    double **columns;
    double  *mass;
} DataDerivative;
int  static_point_data_derivative(StaticPoint *b, const GradOptions *o, int k, DataDerivative *d);
void data_derivative_free(DataDerivative *d, int n_sets);
/* Runs the point's simulate block to its end (from the static equilibrium with `start =
 * equilibrium`); 0, or the failing step's code. The point must have no static-only sim: open it
 * for a model whose objective reads the simulation. */
int  point_simulate(StaticPoint *b);

#endif
