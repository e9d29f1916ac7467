/* render_none.c — the render command of a statically linked simulator (render_hook.h): Cairo and
 * its font libraries are not linked in, so it points to the tools that can draw. */
#include "render_hook.h"
#include <stdio.h>

int srd_sim_render(const char *program, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "%s: error: this simulator was linked statically, without the picture libraries\n"
                    "hint: draw its output with `srdc render DIR`, or build it without --static\n",
            program);
    return 1;
}
