/* output_csv.c — node positions per frame as CSV (see output_csv.h). */
#include "output_csv.h"
#include <stdio.h>

int srd_csv_frames_open(srd_outfile *o, const char *dir, const char *name, const srd_model *m,
                        const char *first_column)
{
    char file[4096];
    snprintf(file, sizeof file, "%s.csv", name);
    if (srd_make_dirs(dir) != 0 || srd_outfile_open(o, dir, file) != 0)
        return -1;
    srd_outfile_printf(o, "%s", first_column);
    for (int i = 0; i < m->n_nodes; i++)
        srd_outfile_printf(o, ",x%d,y%d,z%d", i, i, i);
    srd_outfile_printf(o, "\n");
    return srd_outfile_flush(o);
}

int srd_csv_frames_write(srd_outfile *o, const srd_model *m, const double *q, double t)
{
    srd_outfile_printf(o, "%.9g", t);
    for (int i = 0; i < m->n_nodes; i++) {
        const double *x = &q[m->node_dof[i]];
        srd_outfile_printf(o, ",%.12g,%.12g,%.12g", x[0], x[1], x[2]);
    }
    srd_outfile_printf(o, "\n");
    return srd_outfile_flush(o);
}
