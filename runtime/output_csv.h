/* output_csv.h — `output csv "name"`: node positions per frame as one CSV table, NAME.csv. The
 * header is `t,x0,y0,z0,x1,y1,z1,...` (`mode` instead of `t` for mode shapes), node i being
 * node i of `srdc dump` and point i of the VTK frames; then one row per frame. */
#ifndef SRD_OUTPUT_CSV_H
#define SRD_OUTPUT_CSV_H
#include "files.h"
#include "srd_model.h"

/* Creates DIR/NAME.csv with its header; 0, or -1 (srd_outfile_error says why). */
int srd_csv_frames_open(srd_outfile *o, const char *dir, const char *name, const srd_model *m,
                        const char *first_column);
/* One row: `t` (or the mode number), then every node's position from the DOF vector q; 0, or -1
 * when the file cannot be written. */
int srd_csv_frames_write(srd_outfile *o, const srd_model *m, const double *q, double t);

#endif
