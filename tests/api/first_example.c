/* first_example.c — the first example of docs/api.md: steer the snake of
 * examples/snake_goal.srd with its input `turn` and read where its head went. */
#include <stdio.h>
#include "srd.h"

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "examples/snake_goal.srd";
    const char *params[] = { "amplitude=12/m" };
    srd_instance *snake;
    if (srd_open(path, params, 1, &snake) != SRD_OK) {
        fprintf(stderr, "%s\n", srd_last_error()); /* file:line:col, caret and hint */
        return 1;
    }
    double head[3];
    for (int k = 0; k < 20; k++) {             /* 20 control periods of 0.5 s */
        double turn = k < 10 ? 0 : -6;          /* straight ahead, then anticlockwise */
        if (srd_set_input(snake, "turn", turn) != SRD_OK || srd_run_until(snake, 0.5 * (k + 1)) != SRD_OK) {
            fprintf(stderr, "%s\n", srd_last_error());
            srd_close(snake);
            return 1;
        }
    }
    srd_read_probe(snake, "head", head, 3);
    printf("t = %.2f s: head at (%.4f, %.4f) m\n", srd_time(snake), head[0], head[1]);
    srd_close(snake);
    return head[1] > 0 ? 0 : 1; /* it turned toward +y */
}
