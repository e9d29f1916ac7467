/* view.h — the page of `srdc view`: one self-contained HTML file that plays a run's frames in
 * 3D in a browser (three.js and the frames inside it; see viewer/view.js). */
#ifndef SRD_VIEW_H
#define SRD_VIEW_H
#include <stddef.h>
#include "frames.h"

typedef struct srd_view_run {
    const char      *title;      /* the series' name */
    int              n;          /* frames shown */
    const srd_frame *frames;     /* n frames, one mesh */
    const double    *times;      /* their times (s) */
    const int       *index;      /* their numbers in the series */
} srd_view_run;

/* Writes the page to path; 0, or -1 with a message in err (frames whose mesh changes, a file
 * that cannot be written). */
int srd_view_write(const char *path, const srd_view_run *run, char *err, size_t err_n);
/* srdc view DIR [options] (argv starts after "view"); returns the exit status. */
int srd_view_command(int argc, char **argv);

#endif
