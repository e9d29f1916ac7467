/* schedule_program.h — internal to compiler/sens: one schedule-like kernel's tangent program (the
 * kernel's values, their derivative along chosen inputs, and its switches), shared by the
 * schedules' tangents (schedule_tangent.c) and the control block's (control_tangent.c). */
#ifndef SRD_SENS_SCHEDULE_PROGRAM_H
#define SRD_SENS_SCHEDULE_PROGRAM_H
#include <stdbool.h>
#include "kernels.h"
#include "kernel/interp.h"

/* How a switch's function g becomes a distance to the switch: as it is; to the nearest integer
 * (floor jumps at integers); as it is but only while the guard is negative (atan2(y, x) jumps
 * at y = 0 for x < 0). */
enum { SW_PLAIN, SW_FLOOR, SW_CUT };

typedef struct ScheduleTangent {
    int            actuation, expr;  /* the kernel's (as srd_schedule has them) */
    int            nd;               /* the kernel's rows (3 n_out for a motion: value and rates) */
    int            n_slots;          /* inputs differentiated */
    int           *slot_param;       /* schedules: their params */
    int            n_switch;
    unsigned char *kind;             /* SW_* per switch */
    int            n_rows;           /* 2 nd + 3 n_switch */
    InterpProgram *prog;             /* reads w_j (slot j's tangent) as data column w_base + j */
} ScheduleTangent;

/* st's program over le: rows value (nd), its derivative sum_j d(value)/d(input slots[j]) w_j (nd),
 * then per switch g, dg and its guard. st->n_slots is the count of slots. Adds nodes to le's DAG. */
bool schedule_program_build(LoweredElement *le, ScheduleTangent *st, const int *slots, int w_base);

/* Frees what st holds (its program, switch kinds and slot params). */
void schedule_program_free(ScheduleTangent *st);

/* Whether a switch of the rows (of n instances, st->n_rows each) lies within 2 hk |dg| of g. */
bool schedule_program_switch(const ScheduleTangent *st, const double *rows, int n, double hk);

#endif
