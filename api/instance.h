/* instance.h — what an srd_instance holds (the C API's handle) and the helpers the API's files
 * share: the model and its kernels, the simulation, the node views, and error reporting. */
#ifndef SRD_API_INSTANCE_H
#define SRD_API_INSTANCE_H
#include <stdbool.h>
#include <stdio.h>
#include "arena.h"
#include "ast.h"
#include "kernels.h"
#include "sim.h"
#include "srd.h"
#include "srd_built.h"

struct srd_instance {
    char                  *path;
    char                 **overrides;   /* "name=value" given at open and by srd_set_param */
    int                    n_overrides;
    void                  *library;     /* a built simulator (dlopen), or NULL for a .srd file */
    const srd_built_model *built;
    Arena                  arena;       /* the program and the run-time expressions */
    Program                prog;
    srd_model             *m;
    ModelKernels           mk;          /* a .srd file's kernels (JIT) */
    bool                   have_kernels;
    KernelTable            kt;
    const srd_kernel_table *table;     /* &kt.table, or the built simulator's */
    srd_sim                s;
    srd_method             method;
    double                 dt;          /* the step srd_set_dt chose, or the model's */
    srd_start_state        start;       /* the static equilibrium a simulation starts from (q NULL: none) */
    double                *x, *xdot;    /* n_nodes x 3: the node views of q and v */
    double                *x_synced, *xdot_synced; /* the views as last filled from q and v */
    bool                   failed;      /* a step failed: stepping is refused until a reset */
    char                  *message;     /* the latest failure's message, or NULL */
};

/* Records a failure of inst (may be NULL) with a printf-style message; returns status. */
srd_status api_fail(srd_instance *inst, srd_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Takes ownership of a message already formatted (malloc'd) and records it. */
srd_status api_fail_text(srd_instance *inst, srd_status status, char *text);
/* A memory stream for messages written by reporting functions; api_stream_text ends it and
 * returns the text (malloc'd). */
FILE *api_stream_open(char **buf, size_t *len);
char *api_stream_text(FILE *f, char **buf, size_t *len);

/* The front end (parser, elaborator, diagnostics, kernel compiler) keeps global state: whatever
 * uses it holds this lock (open.c). */
void api_lock_front_end(void);
void api_unlock_front_end(void);

/* A sensitivity call of the API (gradient.c): checks the arguments, fills o's model fields, runs
 * derive(&o, out) under the front end's lock with its messages collected, and returns its status
 * (the messages as the last error on failure). */
struct GradOptions;
typedef srd_status (*api_derive_fn)(struct GradOptions *o, void *out);
srd_status api_derive(const char *fn, const char *path, const char *const *params, int n_params, struct GradOptions o,
                      api_derive_fn derive, void *out);

/* Opens point pt for a sensitivity call and checks that the model has the analysis block
 * (`static`, `simulate` or `modes`) to differentiate; 0, or an exit status with the message in
 * o's stream. Close the point whatever it returns. api_status_of turns an exit status into the
 * API's. */
struct StaticPoint;
int        api_point_open(struct StaticPoint *pt, struct GradOptions *o, const char *block);
srd_status api_status_of(int exit_status);

/* Refuses a NULL instance or a NULL array. */
#define API_CHECK(inst)                                                                             \
    do {                                                                                            \
        if (!(inst))                                                                                \
            return api_fail(NULL, SRD_ERR_ARGUMENT, "the instance is NULL");                        \
    } while (0)

/* The model elaborated, its kernels and a simulation at its start (open.c). */
srd_status api_build(srd_instance *inst);
/* Frees what api_build made (not the path or overrides). */
void       api_unbuild(srd_instance *inst);
/* Puts the simulation at its start: initial state, t = 0, inputs at their defaults (open.c). */
srd_status api_start(srd_instance *inst);

/* The node views: copied from q and v (after steps), and, before steps and reads, what the
 * caller changed in them written into q and v (state.c). */
void api_views_from_state(srd_instance *inst);
void api_views_to_state(srd_instance *inst);

#endif
