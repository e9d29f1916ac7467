/* files.h — small file-system helpers shared by the runtime's outputs and the compiler's cache. */
#ifndef SRD_FILES_H
#define SRD_FILES_H
#include <stdarg.h>
#include <stdio.h>

/* Creates dir and its missing parents (mkdir -p); 0, or -1 with errno set. */
int srd_make_dirs(const char *dir);

/* A text output (probes, energies, frequencies) whose every write is checked: on a full disk
 * the run stops with the file's name and the reason instead of leaving it cut mid-row. */
typedef struct srd_outfile {
    FILE *f;
    char  path[4096];
    int   failed_errno; /* 0 until a write fails */
} srd_outfile;

/* Creates DIR/NAME; 0, or -1 (then srd_outfile_error says why). */
int  srd_outfile_open(srd_outfile *o, const char *dir, const char *name);
/* printf to the file; the error, if any, shows at the next srd_outfile_flush. */
void srd_outfile_printf(srd_outfile *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Pushes what was written to the system; 0, or -1 when any write so far failed. */
int  srd_outfile_flush(srd_outfile *o);
/* Flushes and closes (a no-op on a file never opened); 0, or -1 when a write failed. */
int  srd_outfile_close(srd_outfile *o);
/* Reopens DIR/NAME, written by an earlier run, to continue it: what lies beyond its first
 * `bytes` bytes (rows written after the checkpoint the run resumes from) is cut off. 0, or -1. */
int  srd_outfile_resume(srd_outfile *o, const char *dir, const char *name, long long bytes);
/* How many bytes the file holds, after a flush; -1 on an error or a file not open. */
long long srd_outfile_size(srd_outfile *o);
/* "cannot write PATH: REASON" */
void srd_outfile_error(const srd_outfile *o, char *buf, size_t n);

#endif
