/* srd_built.h — what `srdc build` links into a simulator next to the runtime: the model's
 * kernels with the tables that describe them, its params, and copies of the files the model
 * was built from (so that new param values can re-derive masses, stiffnesses and loads exactly
 * as `srdc run` does). The simulator's generated table defines `srd_built`. */
#ifndef SRD_BUILT_H
#define SRD_BUILT_H
#include <stdbool.h>
#include <stdio.h>
#include "driver.h"

typedef struct srd_built_file {
    const char    *path;        /* as the front end named it when building */
    const char    *text;
    unsigned long  len;
} srd_built_file;

typedef struct srd_built_param {
    const char *name;
    double      value;          /* default, SI */
    const char *unit;           /* SI unit, "1" when dimensionless */
    const char *dimension;      /* "a pressure", "a length", ... */
    double      lo, hi;         /* declared range, or -inf/inf */
    int         input;          /* 1: an `input` (srd_param.input): -p sets its default */
} srd_built_param;

/* What the simulator checks of an element set (its kernels are in srd_built.kernels). */
typedef struct srd_built_set {
    int             n;           /* instances when built with the defaults */
    int             n_data;
    /* Data columns compiled into the kernel as constants: every instance must still hold
     * this value after new params are applied. */
    int             n_folded;
    const int      *folded_column;
    const double   *folded_value;
} srd_built_set;

typedef struct srd_built_model {
    const char               *name;        /* the simulator's name */
    const char               *model_path;  /* the .srd file, as named when building */
    const char               *stdlib_dir;
    const char               *version;     /* srdc's */
    int                       n_files;
    const srd_built_file     *files;
    int                       n_params;
    const srd_built_param    *params;
    int                       n_sets;
    const srd_built_set      *sets;
    srd_kernel_table          kernels;     /* as the driver runs them */
    int                       n_nodes, n_dofs, n_actuations;
} srd_built_model;

extern const srd_built_model srd_built;

/* Whether model m, elaborated again from the built files with new params, still fits the
 * kernels of simulator b: the same structure, and every value compiled in as a constant
 * unchanged. When not, says why on `out`, messages starting with `program`. */
bool srd_built_matches(const srd_built_model *b, const srd_model *m, FILE *out, const char *program);

#endif
