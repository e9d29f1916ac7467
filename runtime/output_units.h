/* output_units.h — units.csv: the unit of every column of the CSV files a run writes (probes,
 * energies, frequencies), so that plots label their axes without guessing from names. */
#ifndef SRD_OUTPUT_UNITS_H
#define SRD_OUTPUT_UNITS_H
#include <stdbool.h>
#include "files.h"
#include "srd_model.h"

/* Writes DIR/units.csv (file,column,unit) for the probe files of the analyses marked in
 * `runs` (statics, modes, simulate), energy.csv when the simulation runs and modes.csv when
 * the modes do. 0, or -1 (o then says why). */
int srd_units_write(srd_outfile *o, const char *dir, const srd_model *m, const bool runs[3]);

#endif
