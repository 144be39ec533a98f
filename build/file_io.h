/* file_io.h: whole-file reads and atomic writes, the one place stages load or publish a file. */
#ifndef KT_FILE_IO_H
#define KT_FILE_IO_H
#include <stddef.h>

/* The bytes of path (NUL-terminated, *len excludes the NUL), or NULL with errno set; files over
 * max_bytes (0: no limit) fail with EFBIG. The caller frees. */
char *file_read_all(const char *path, size_t max_bytes, size_t *len);

/* Write text to path atomically: a temporary beside it, then rename, so a reader (or a run
 * interrupted half way) never sees a partial file. 0, or -1 with errno set. */
int file_write_atomic(const char *path, const char *text);

#endif
