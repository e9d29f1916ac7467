/* render_viewer.c — the render command of a simulator linked with the viewer (render_hook.h). */
#include "render_hook.h"
#include "cli.h"
#include "render_cli.h"

int srd_sim_render(const char *program, int argc, char **argv)
{
    srd_cli_set_program(program); /* its hints still point to `srdc help render`: the same options */
    return srd_render_command(argc, argv);
}
