/* file_read.h: read a whole file into memory, NUL-terminated (so text parsers can take it as a
 * string; binary users take the length). One reader for every stage that loads a file whole. */
#ifndef KT_FILE_READ_H
#define KT_FILE_READ_H
#include <stddef.h>

/* The bytes of path (NUL-terminated, *len excludes the NUL), or NULL with errno set; files over
 * max_bytes (0: no limit) fail with EFBIG. The caller frees. */
char *file_read_all(const char *path, size_t max_bytes, size_t *len);

#endif
