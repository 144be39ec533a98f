/* file_io.c: whole-file reads (no ftell sizing, so pipes work too) and atomic writes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "file_io.h"

char *file_read_all(const char *path, size_t max_bytes, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 0, n = 0;
    char *buf = NULL;
    int fault = 0;
    for (;;) {
        if (n + 1 >= cap) {
            if (max_bytes && cap > max_bytes) { fault = EFBIG; break; }
            char *bigger = realloc(buf, cap ? cap * 2 : 8192);
            if (!bigger) { fault = ENOMEM; break; }
            buf = bigger;
            cap = cap ? cap * 2 : 8192;
        }
        n += fread(buf + n, 1, cap - 1 - n, f);
        if (ferror(f)) { fault = errno ? errno : EIO; break; }
        if (feof(f)) break;
    }
    fclose(f);
    if (!fault && max_bytes && n > max_bytes) fault = EFBIG;
    if (fault) { free(buf); errno = fault; return NULL; }
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

int file_write_atomic(const char *path, const char *text)
{
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (!tmp) { errno = ENOMEM; return -1; }
    snprintf(tmp, n, "%s.%d.tmp", path, (int)getpid());
    FILE *f = fopen(tmp, "wb");
    int rc = -1;
    if (f) {
        int wrote = fputs(text, f) >= 0;
        if (fclose(f) == 0 && wrote && rename(tmp, path) == 0) rc = 0;
        else { int e = errno; unlink(tmp); errno = e; }
    }
    free(tmp);
    return rc;
}
