/* kt worker: the sweep's GPU process (tuner/worker.h). Started by the sweep, not by people, except
 * `kt worker --check-reference`, the device test of the GPU reference kernel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "worker.h"

int kt_cmd_worker(int argc, char **argv)
{
    const char *db = NULL, *target = "sm_90a";
    int device = 0, check = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--check-reference") == 0) check = 1;
        else if (strcmp(argv[i], "--db") == 0 && i + 1 < argc) db = argv[++i];
        else if (strcmp(argv[i], "--target") == 0 && i + 1 < argc) target = argv[++i];
        else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: kt worker --db FILE [--target T] [--device N] [--check-reference]\n"
                            "  (the sweep starts workers itself; see tuner/worker.h for the protocol)\n");
            return 2;
        }
    }
    if (!db) { fprintf(stderr, "kt worker: --db is required\n"); return 2; }
    return check ? wk_check_reference(db, target, device) : wk_main(db, target, device);
}
