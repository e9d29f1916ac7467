/* probe.h — the value of a probe now: what probes.csv records, what a controller reads and what
 * the C API returns. */
#ifndef SRD_PROBE_H
#define SRD_PROBE_H
#include "sim.h"

/* How many values probe p gives: 1 (a component, a motor), 3 (a position, a force, a body or
 * joint vector) or 6 (a reaction's force and moment). */
int srd_probe_size_of(const srd_probe *p);

/* Writes probe p's values into out (srd_probe_size_of of them, at most 6) and returns their count.
 * Positions are read from q (the sim's, or a mode shape's); forces from the sim's state, a
 * reaction from `reactions` (srd_sim_reactions, n_dofs values) or, when that is NULL, from
 * reactions computed here. */
int srd_probe_value(srd_sim *s, const srd_probe *p, const double *q, const double *reactions, double *out);

#endif
