/* ktrt_layers.c: which database files a handle reads, in ktrt.h's order: the caller's path (or
 * $KT_DB), the user database, the shipped database. A given path must load; an optional layer is
 * skipped only when its file does not exist: one that exists and is refused fails the open,
 * because silently skipping a bad user database would serve the shipped picks without a word. */
#include "ktrt_select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define KTRT_SHIPPED_DEFAULT "/usr/local/share/ktune/ktune.ktdb"

static const char *env(const char *name)
{
    const char *v = kt_env_get(name);
    return v && v[0] ? v : NULL;
}

/* The same file as a layer already read (the user database given again as KT_DB, a symlink)? */
static int already_read(const ktrt_catalog *c, const char *path)
{
    struct stat a, b;
    if (stat(path, &a) != 0) return 0;
    for (int i = 0; i < c->nlayers; i++)
        if (stat(c->layers[i].path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) return 1;
    return 0;
}

/* Adds one layer; where names the setting it came from, for the message. */
static int add(ktrt_catalog *c, const char *path, const char *role, const char *where, int required,
               char *err, size_t errlen)
{
    struct stat st;
    if (!required && stat(path, &st) != 0) return KT_OK;
    if (already_read(c, path)) return KT_OK;
    int rc = ktrt_catalog_add(c, path, role, err, errlen);
    if (rc != KT_OK && err) {
        size_t u = strlen(err);
        if (u < errlen) snprintf(err + u, errlen - u, " (the %s database, from %s)", role, where);
    }
    return rc;
}

int ktrt_layers_open(ktrt_catalog *c, const ktrt_options *o, char *err, size_t errlen)
{
    int rc;
    int given = o->db_path && o->db_path[0];   /* "" reads as not given, as an empty variable does */
    const char *caller = given ? o->db_path : env("KT_DB");
    if (caller && (rc = add(c, caller, "caller", given ? "ktrt_options.db_path" : "$KT_DB", 1, err, errlen)))
        return rc;
    if (o->no_default_layers) {
        if (c->nlayers == 0)
            return snprintf(err, errlen, "ktrt_open: no database: no_default_layers is set and neither "
                                         "ktrt_options.db_path nor $KT_DB names one"), KT_ENODB;
        return KT_OK;
    }
    char user[1024] = "";
    const char *where = "$KT_USER_DB";
    if (env("KT_USER_DB")) snprintf(user, sizeof user, "%s", env("KT_USER_DB"));
    else if (env("XDG_DATA_HOME")) where = "$XDG_DATA_HOME", snprintf(user, sizeof user, "%s/ktune/ktune.ktdb", env("XDG_DATA_HOME"));
    else if (env("HOME")) where = "$HOME", snprintf(user, sizeof user, "%s/.local/share/ktune/ktune.ktdb", env("HOME"));
    if (user[0] && (rc = add(c, user, "user", where, 0, err, errlen))) return rc;
    const char *shipped = env("KT_SHIPPED_DB") ? env("KT_SHIPPED_DB") : KTRT_SHIPPED_DEFAULT;
    if ((rc = add(c, shipped, "shipped", env("KT_SHIPPED_DB") ? "$KT_SHIPPED_DB" : "the default path", 0, err, errlen)))
        return rc;
    if (c->nlayers == 0)
        return snprintf(err, errlen, "ktrt_open: no database: pass ktrt_options.db_path or set $KT_DB, or install "
                                     "one as %s or %s", user[0] ? user : "$KT_USER_DB", shipped), KT_ENODB;
    return KT_OK;
}
