/* plot_cli.c — `srdc plot DIR`: PNG plots of a run's probes, energies and frequencies, drawn
 * by matplotlib (scripts/plot_run.py) with the units of units.csv on the axes. This finds a
 * Python that has matplotlib and runs the script. */
#include "plot_cli.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"

#ifndef SRD_PLOT_SCRIPT
#define SRD_PLOT_SCRIPT "scripts/plot_run.py"
#endif

/* SRD_PYTHON when set; else the first of python3 on PATH and Debian's own that imports
 * matplotlib (a Python of one's own, such as a virtual environment, may lack it). */
static const char *find_python(void)
{
    const char *own = getenv("SRD_PYTHON");
    if (own && *own)
        return own;
    static const char *candidates[] = { "python3", "/usr/bin/python3" };
    for (size_t k = 0; k < sizeof candidates / sizeof *candidates; k++) {
        char *argv[] = { (char *)candidates[k], "-c", "import matplotlib", NULL };
        char err[256];
        if (srd_cli_run(argv, "/dev/null", err, sizeof err) == 0)
            return candidates[k];
    }
    return NULL;
}

int srd_plot_command(int argc, char **argv)
{
    const char *dir = NULL;
    for (int i = 0; i < argc; i++)
        if (srd_cli_operand("plot", argv[i], &dir))
            return 1;
    struct stat st;
    if (!dir)
        return srd_cli_error("plot", "%s", "which run? write `srdc plot DIR` with the directory of a run's output");
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return srd_cli_error("plot", "`%s` is not a run directory", dir);
    const char *python = find_python();
    if (!python) {
        fprintf(stderr, "srdc: error: plots need Python 3 with matplotlib\nhint: Debian: apt-get install "
                        "python3-matplotlib (scripts/setup.sh installs it), or set SRD_PYTHON to a Python that has it\n");
        return 1;
    }
    char *run[] = { (char *)python, SRD_PLOT_SCRIPT, (char *)dir, NULL };
    char err[512];
    int status = srd_cli_run(run, NULL, err, sizeof err);
    if (status == 127)
        fprintf(stderr, "srdc: error: %s\n", err);
    return status == 0 ? 0 : 1;
}
