/* probe.h — the current value of a probe (a position, a reaction, a contact force, a body's or
 * a joint's vector): what probes.csv records and what a `control` block and the C API read. */
#ifndef SRD_PROBE_H
#define SRD_PROBE_H
#include "sim.h"

/* Probe p's value at the sim's state into out; returns its count: 1 (a DOF, a motor), 3 (a
 * node, a contact force, a body or joint vector) or 6 (a reaction: force, then moment about the
 * probe's first node). */
int srd_probe_value(srd_sim *s, const srd_probe *p, double out[6]);

/* The same with positions read from q (a mode shape) and, when not NULL, the reactions
 * srd_sim_reactions gave (n_dofs values: shared by the probes of one row). */
int srd_probe_value_at(srd_sim *s, const srd_probe *p, const double *q, const double *reactions, double out[6]);
/* The change of a reaction probe's force and moment (its 6 values) when the configuration q
 * moves along dq and the reactions r (srd_sim_reactions) along dr. */
void srd_probe_reaction_tangent(const srd_model *m, const srd_probe *p, const double *q, const double *r,
                                const double *dq, const double *dr, double dfm[6]);
/* Its transpose: given weights w on the six values, adds w . dfm's gradient with respect to dq
 * into lq and with respect to dr into lr (n_dofs each). */
void srd_probe_reaction_adjoint(const srd_model *m, const srd_probe *p, const double *q, const double *r,
                                const double w[6], double *lq, double *lr);

/* The count srd_probe_value gives for p, without computing it. */
int srd_probe_width(const srd_probe *p);

#endif
