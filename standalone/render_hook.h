/* render_hook.h — `NAME render DIR ...` in a built simulator: pictures of its own output, as
 * `srdc render` draws them. A simulator linked with the system's shared libraries carries the
 * viewer (render_viewer.c); a static one does not (render_none.c says so). */
#ifndef SRD_RENDER_HOOK_H
#define SRD_RENDER_HOOK_H

/* argv starts after "render"; returns the exit status. */
int srd_sim_render(const char *program, int argc, char **argv);

#endif
