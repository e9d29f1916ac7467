/* report.h — what the runtime says when a step fails or a method cannot run a model: written to
 * any stream, so that the programs print it and the C API returns it as an error message. */
#ifndef SRD_REPORT_H
#define SRD_REPORT_H
#include <stdbool.h>
#include <stdio.h>
#include "sim.h"

/* A failed step (or static load step) of `method` (-1: static) with srd_step's code: when and
 * where, and what to try. Messages start with `program`. */
void srd_report_step_failure(FILE *out, const char *program, const srd_sim *s, int method, int code);

/* Whether the simulate block's method cannot run this model, saying why on out: contact
 * between parts needs an implicit method, and so do friction and drag elements that keep
 * step-start state. infos NULL: contact only. */
bool srd_report_unsupported_method(FILE *out, const char *program, const srd_model *m, const srd_kernel_info *infos);

#endif
