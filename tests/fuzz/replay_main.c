/* replay_main.c — runs every file of the given directories through the fuzz entry point, so
 * the corpus is exercised by any compiler (and under the sanitizers) without libFuzzer. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    static uint8_t buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    return 1;
}

int main(int argc, char **argv)
{
    int count = 0;
    for (int i = 1; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        if (!d) {
            count += replay_file(argv[i]);
            continue;
        }
        struct dirent *ent;
        while ((ent = readdir(d))) {
            if (ent->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], ent->d_name);
            count += replay_file(path);
        }
        closedir(d);
    }
    printf("replayed %d inputs through the front end\n", count);
    return count > 0 ? 0 : 1;
}
