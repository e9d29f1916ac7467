/* render_cli.h — the `srdc render` command. */
#ifndef SRD_RENDER_CLI_H
#define SRD_RENDER_CLI_H

/* srdc render DIR [options] (argv starts after "render"); returns the exit status. */
int srd_render_command(int argc, char **argv);

#endif
