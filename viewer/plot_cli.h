/* plot_cli.h — the `srdc plot` command. */
#ifndef SRD_PLOT_CLI_H
#define SRD_PLOT_CLI_H

/* srdc plot DIR (argv starts after "plot"); returns the exit status. */
int srd_plot_command(int argc, char **argv);

#endif
