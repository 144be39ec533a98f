/* kt_elf_fixture.h: helpers the ELF reader tests share: load a fixture, copy it to an exact-size
 * heap block (so an overread is a sanitizer error), patch little-endian fields, find a section
 * header's file offset with the library itself (already exercised on the pristine file). */
#ifndef KT_ELF_FIXTURE_H
#define KT_ELF_FIXTURE_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "elf.h"

static void put_le(unsigned char *p, uint64_t x, int bytes)
{
    for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(x >> (8 * i));
}

static const char *data_dir(void)
{
    const char *dir = getenv("KT_TEST_DATA");
    return dir && *dir ? dir : "tests/data";
}

static unsigned char *load(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", data_dir(), name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open fixture %s (run from the repository root or set KT_TEST_DATA)\n", path);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) { fclose(f); free(buf); return NULL; }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static unsigned char *copy_of(const unsigned char *p, size_t n)
{
    unsigned char *c = malloc(n ? n : 1);
    if (!c) exit(2);
    if (n) memcpy(c, p, n);
    return c;
}

/* Read through an exact-size heap copy with reader fn. */
typedef int (*kt_read_resources_fn)(const void *, size_t, const char *, kt_resources *, char *, size_t);
static int read_with(kt_read_resources_fn fn, const unsigned char *p, size_t n, const char *kernel,
                     kt_resources *r, char *err, size_t errlen)
{
    unsigned char *c = copy_of(p, n);
    err[0] = 0;
    int rc = fn(c, n, kernel, r, err, errlen);
    free(c);
    return rc;
}

/* File offset of the header of section name. */
static size_t shdr_of(const unsigned char *p, size_t n, const char *name, elf_section *s)
{
    elf_file f;
    char err[256];
    if (elf_open(&f, p, n, err, sizeof err) || elf_section_find(&f, name, s, err, sizeof err) != 1) {
        fprintf(stderr, "fixture has no section %s\n", name);
        exit(2);
    }
    return (size_t)(f.shoff + (uint64_t)s->index * 64);
}

#endif
