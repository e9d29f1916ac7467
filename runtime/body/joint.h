/* joint.h — values of body and joint probes (SRD_PROBE_BODY, SRD_PROBE_JOINT). */
#ifndef SRD_JOINT_H
#define SRD_JOINT_H
#include "sim.h"

/* Writes the probe's values into out (3, or 1 for a motor's effort); returns how many. */
int srd_probe_values(srd_sim *s, const srd_probe *p, double *out);

#endif
