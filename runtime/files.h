/* files.h — small file-system helpers shared by the runtime's outputs and the compiler's cache. */
#ifndef SRD_FILES_H
#define SRD_FILES_H

/* Creates dir and its missing parents (mkdir -p); 0, or -1 with errno set. */
int srd_make_dirs(const char *dir);

#endif
