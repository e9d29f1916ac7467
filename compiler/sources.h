/* sources.h — the files the front end reads (the model, its modules, meshes, tables). A
 * simulator built by `srdc build` supplies them from its own image; `srdc build` records which
 * ones a model read so that it can embed them. */
#ifndef SRD_SOURCES_H
#define SRD_SOURCES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The largest file the front end reads (model, module, mesh, table): 256 MiB, far above any
 * real model, far below what would exhaust memory. */
#define SOURCES_MAX_BYTES (256L * 1024 * 1024)
#define SOURCES_MAX_TEXT "256 MiB"

/* From now on, keep a copy of every file read from disk. */
void  sources_record(bool on);
/* Makes `path` read as `text` (len bytes) instead of the file on disk. */
void  sources_provide(const char *path, const char *text, size_t len);
/* The files kept (recorded or provided), in the order first read. */
int   sources_count(void);
const char *sources_path(int i);
const char *sources_text(int i, size_t *len);
/* The contents of `path`, NUL-terminated, in memory the caller frees; NULL when unreadable. */
char *sources_read(const char *path, size_t *len);
/* `path` open for reading (a stream over the kept copy when there is one); NULL when unreadable. */
FILE *sources_open(const char *path);
/* `path` open for reading if it is a regular file within SOURCES_MAX_BYTES, bypassing the
 * kept copies; NULL otherwise. */
FILE *sources_fopen(const char *path);
/* Why the last sources_read, sources_open or sources_fopen returned NULL ("it is a directory",
 * "Permission denied", ...). */
const char *sources_error(void);
/* Forgets every kept file and stops recording. */
void  sources_reset(void);

#endif
