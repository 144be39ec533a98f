/* closure.h: the source closure of a template: every file reachable through #include "..." from
 * the given roots, resolved against the templates root and then the including file's folder.
 * Its hash is part of every cache key, so editing a prelude or an ABI header recompiles exactly
 * the variants that include it. System includes (<...>) are the compiler's and are covered by
 * the toolchain fingerprint instead. */
#ifndef KT_CLOSURE_H
#define KT_CLOSURE_H
#include <stddef.h>

/* roots are paths relative to templates_root. On success writes the sha256 hex of the sorted
 * (path, content) list and the number of files; a missing include is an error naming the
 * including file and line. */
int closure_hash(const char *templates_root, const char *const *roots, int nroots,
                 char hex[65], int *nfiles, char *err, size_t errlen);

#endif
