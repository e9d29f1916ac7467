/* elab_internal.h — what the elaboration files share: property reading, object builders,
 * and the final assembly of the model. */
#ifndef SRD_ELAB_INTERNAL_H
#define SRD_ELAB_INTERNAL_H
#include "elab.h"
#include "props.h"

enum { MAX_PROPS = 48 };

/* The properties of one block after checking. */
typedef struct PropValues {
    const PropSpec *specs[MAX_PROPS];
    int             n_specs;
    Value           val[MAX_PROPS];
    bool            set[MAX_PROPS], bad[MAX_PROPS];
    Stmt           *where[MAX_PROPS];
    Stmt           *extra[MAX_PROPS]; /* output and probe lines */
    int             n_extra;
    int             n_unknown;        /* unknown properties reported */
} PropValues;

void         props_read(Elab *e, const Stmt *blk, PropValues *pv, const char *owner);
const Value *prop_get(const PropValues *pv, const char *name);
bool         prop_given(const PropValues *pv, const char *name);
double       prop_num(const PropValues *pv, const char *name, double dflt);
bool         props_complete(const Stmt *blk, const PropValues *pv, const char *owner);
/* Where a property's value was written, or `fallback` when it was not. */
SrcLoc       prop_loc(const PropValues *pv, const char *name, SrcLoc fallback);

/* objects.c */
void elab_material(Elab *e, Stmt *s, const char *name);
void elab_rod(Elab *e, Stmt *s, const char *name);
void elab_shell(Elab *e, Stmt *s, const char *name);
void elab_body(Elab *e, Stmt *s, const char *name);
/* analysis.c */
void elab_environment(Elab *e, Stmt *s);
void elab_analysis(Elab *e, Stmt *s);

/* finalize.c: merge joins, build elements, DOFs, masses, ordering. */
void elab_finalize(Elab *e);

#endif
