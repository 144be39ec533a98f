/* ktrt_log.c: the handle's stderr lines (ktrt.h, KT_LOG), each written once per key so a serving
 * loop that falls back a million times says so once. The set is a plain list: it holds one entry
 * per distinct fallback key, a few hundred at most, and is only consulted when a choice is made
 * (choices are cached), never per launch. */
#include "ktrt_select.h"

#include <stdlib.h>
#include <string.h>

int ktrt_log_level(const char *kt_log_env)
{
    if (!kt_log_env) return 1;
    return strcmp(kt_log_env, "0") == 0 ? 0 : 2;
}

int ktrt_log_first(ktrt_log *log, const char *key)
{
    for (int i = 0; i < log->nseen; i++)
        if (strcmp(log->seen[i], key) == 0) return 0;
    if (log->nseen == log->capseen) {
        int cap = log->capseen ? 2 * log->capseen : 32;
        void *p = realloc(log->seen, (size_t)cap * sizeof *log->seen);
        if (!p) return 0;
        log->seen = p;
        log->capseen = cap;
    }
    snprintf(log->seen[log->nseen++], sizeof log->seen[0], "%s", key);
    return 1;
}

void ktrt_log_pick(ktrt_log *log, FILE *f, const ktrt_device *dev, const ktrt_pick *p)
{
    char key[KTRT_NAME_LEN];
    if (p->other_device[0] && log->level >= 1) {
        snprintf(key, sizeof key, "notice %s", p->other_device);
        if (ktrt_log_first(log, key))
            fprintf(f, "ktrt: notice: %s: selections tuned on %s serve this device %s (same target %s) "
                       "through the bucket path; tune on this device for exact picks\n",
                    p->choice.db_path, p->other_device, dev->key, dev->target ? dev->target->name : "?");
    }
    if (log->level >= 2 && strcmp(p->choice.path, "exact") != 0) {
        snprintf(key, sizeof key, "%s %s", p->choice.path, p->choice.problem_key);
        if (ktrt_log_first(log, key))
            fprintf(f, "ktrt: %s: path=%s: %s\n", p->choice.problem_key, p->choice.path, p->choice.reason);
    }
}

void ktrt_log_free(ktrt_log *log)
{
    if (!log) return;
    free(log->seen);
    log->seen = NULL;
    log->nseen = log->capseen = 0;
}
