/* elf.c: bounds-checked ELF64 little-endian reading; see elf.h.
 *
 * Every offset taken from the file is compared with the buffer length using subtraction on
 * the trusted side (x <= len && n <= len - x), so no sum can wrap around. */
#include "elf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define ELF_EHDR_SIZE 64
#define ELF_SHDR_SIZE 64
#define ELF_SYM_SIZE  24
#define ELF_SHN_XINDEX 0xffffu

uint16_t elf_u16(const unsigned char *p)
{
    return (uint16_t)(p[0] | (unsigned)p[1] << 8);
}

uint32_t elf_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t elf_u64(const unsigned char *p)
{
    return (uint64_t)elf_u32(p) | (uint64_t)elf_u32(p + 4) << 32;
}

void elf_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (!err || !errlen) return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Length of the string already in err, never looking past errlen. */
static size_t elf_err_used(const char *err, size_t errlen)
{
    const char *nul = memchr(err, 0, errlen);
    return nul ? (size_t)(nul - err) : errlen - 1;
}

void elf_err_append(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    size_t used;
    if (!err || !errlen) return;
    used = elf_err_used(err, errlen);
    va_start(ap, fmt);
    vsnprintf(err + used, errlen - used, fmt, ap);
    va_end(ap);
}

void elf_err_append_name(char *err, size_t errlen, const char *name, size_t n)
{
    size_t used, i;
    if (!err || !errlen) return;
    used = elf_err_used(err, errlen);
    for (i = 0; i < n && used + 1 < errlen; i++) {
        unsigned char c = (unsigned char)name[i];
        err[used++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    err[used] = 0;
}

/* True when [off, off+n) lies inside a buffer of len bytes. */
static int elf_in_bounds(uint64_t off, uint64_t n, size_t len)
{
    return off <= len && n <= len - off;
}

/* The raw fields of one section header, before its name is resolved. */
typedef struct elf_shdr_raw {
    uint32_t name, type, link, info;
    uint64_t flags, offset, size, addralign, entsize;
} elf_shdr_raw;

/* Decode header i; the table's bounds were checked by elf_open. */
static void elf_shdr_read(const elf_file *f, uint32_t i, elf_shdr_raw *r)
{
    const unsigned char *p = f->buf + f->shoff + (uint64_t)i * ELF_SHDR_SIZE;
    r->name = elf_u32(p);
    r->type = elf_u32(p + 4);
    r->flags = elf_u64(p + 8);
    r->offset = elf_u64(p + 24);
    r->size = elf_u64(p + 32);
    r->link = elf_u32(p + 40);
    r->info = elf_u32(p + 44);
    r->addralign = elf_u64(p + 48);
    r->entsize = elf_u64(p + 56);
}

/* String at offset off of string-table section strndx, checked to be NUL-terminated inside
 * that section, which must itself lie inside the file. what names the user in messages. */
static int elf_string(const elf_file *f, uint32_t strndx, uint32_t off, const char **out,
                      const char *what, char *err, size_t errlen)
{
    elf_shdr_raw st;
    const unsigned char *start;
    if (strndx >= f->shnum) {
        elf_err(err, errlen, "%s: string table section %u out of range (%u sections)",
                what, strndx, f->shnum);
        return -1;
    }
    elf_shdr_read(f, strndx, &st);
    if (st.type == ELF_SHT_NOBITS || !elf_in_bounds(st.offset, st.size, f->len)) {
        elf_err(err, errlen, "%s: string table section %u at offset 0x%llx size 0x%llx "
                "lies outside the file (%zu bytes)", what, strndx,
                (unsigned long long)st.offset, (unsigned long long)st.size, f->len);
        return -1;
    }
    if (off >= st.size) {
        elf_err(err, errlen, "%s: name offset %u outside its string table (section %u, %llu bytes)",
                what, off, strndx, (unsigned long long)st.size);
        return -1;
    }
    start = f->buf + st.offset + off;
    if (!memchr(start, 0, (size_t)(st.size - off))) {
        elf_err(err, errlen, "%s: name at offset 0x%llx is not NUL-terminated inside its string table",
                what, (unsigned long long)(st.offset + off));
        return -1;
    }
    *out = (const char *)start;
    return 0;
}

/* Section count and name-table index, following the ELF escape for files with 0xff00 or
 * more sections (the real values then live in section header 0). */
static int elf_read_section_counts(elf_file *f, const unsigned char *h, char *err, size_t errlen)
{
    uint16_t shentsize = elf_u16(h + 0x3a);
    uint64_t shnum = elf_u16(h + 0x3c);
    uint32_t shstrndx = elf_u16(h + 0x3e);
    f->shoff = elf_u64(h + 0x28);
    if (f->shoff == 0) {            /* no section header table at all */
        f->shnum = f->shstrndx = 0;
        return 0;
    }
    if (shentsize != ELF_SHDR_SIZE) {
        elf_err(err, errlen, "section header entry size %u at offset 0x3a, expected %d",
                shentsize, ELF_SHDR_SIZE);
        return -1;
    }
    if (!elf_in_bounds(f->shoff, ELF_SHDR_SIZE, f->len)) {
        elf_err(err, errlen, "truncated: section header table at offset 0x%llx lies past the end "
                "of the file (%zu bytes)", (unsigned long long)f->shoff, f->len);
        return -1;
    }
    if (shnum == 0) shnum = elf_u64(f->buf + f->shoff + 32);
    if (shstrndx == ELF_SHN_XINDEX) shstrndx = elf_u32(f->buf + f->shoff + 40);
    if (shnum > UINT32_MAX || shnum > (f->len - f->shoff) / ELF_SHDR_SIZE) {
        elf_err(err, errlen, "truncated: section header table at offset 0x%llx holds %llu entries of "
                "%d bytes, past the end of the file (%zu bytes)", (unsigned long long)f->shoff,
                (unsigned long long)shnum, ELF_SHDR_SIZE, f->len);
        return -1;
    }
    if (shnum && shstrndx >= shnum) {
        elf_err(err, errlen, "section name table index %u out of range (%llu sections)", shstrndx,
                (unsigned long long)shnum);
        return -1;
    }
    f->shnum = (uint32_t)shnum;     /* fits: checked against UINT32_MAX above */
    f->shstrndx = shstrndx;
    return 0;
}

int elf_open(elf_file *f, const void *buf, size_t len, char *err, size_t errlen)
{
    const unsigned char *h = buf;
    memset(f, 0, sizeof *f);
    if (!buf || len < 4 || memcmp(h, "\177ELF", 4) != 0) {
        elf_err(err, errlen, "not an ELF file (bad magic at offset 0)");
        return -1;
    }
    if (len < ELF_EHDR_SIZE) {
        elf_err(err, errlen, "truncated ELF header: file is %zu bytes, an ELF64 header needs %d",
                len, ELF_EHDR_SIZE);
        return -1;
    }
    if (h[4] != 2) {
        elf_err(err, errlen, "not ELF64 (EI_CLASS %u at offset 4)", h[4]);
        return -1;
    }
    if (h[5] != 1) {
        elf_err(err, errlen, "not little-endian (EI_DATA %u at offset 5)", h[5]);
        return -1;
    }
    f->buf = h;
    f->len = len;
    f->osabi = h[7];
    f->abiversion = h[8];
    f->type = elf_u16(h + 0x10);
    f->machine = elf_u16(h + 0x12);
    f->flags = elf_u32(h + 0x30);
    return elf_read_section_counts(f, h, err, errlen);
}

int elf_open_machine(elf_file *f, const void *buf, size_t len, uint16_t machine,
                     const char *what, char *err, size_t errlen)
{
    if (elf_open(f, buf, len, err, errlen)) return -1;
    if (f->machine != machine) {
        elf_err(err, errlen, "wrong machine: e_machine %u at offset 0x12, expected %u (%s)",
                f->machine, machine, what);
        return -1;
    }
    return 0;
}

int elf_section_at(const elf_file *f, uint32_t i, elf_section *s, char *err, size_t errlen)
{
    elf_shdr_raw r;
    char what[48];
    if (i >= f->shnum) {
        elf_err(err, errlen, "section %u out of range (%u sections)", i, f->shnum);
        return -1;
    }
    elf_shdr_read(f, i, &r);
    s->index = i;
    s->type = r.type;
    s->flags = r.flags;
    s->offset = r.offset;
    s->size = r.size;
    s->link = r.link;
    s->info = r.info;
    s->addralign = r.addralign;
    s->entsize = r.entsize;
    s->name = "";
    if (f->shstrndx == 0 || r.name == 0) return 0;
    snprintf(what, sizeof what, "section %u", i);
    return elf_string(f, f->shstrndx, r.name, &s->name, what, err, errlen);
}

int elf_section_find(const elf_file *f, const char *name, elf_section *s, char *err, size_t errlen)
{
    uint32_t i;
    for (i = 1; i < f->shnum; i++) {
        if (elf_section_at(f, i, s, err, errlen)) return -1;
        if (strcmp(s->name, name) == 0) return 1;
    }
    return 0;
}

int elf_section_data(const elf_file *f, const elf_section *s, const unsigned char **data,
                     char *err, size_t errlen)
{
    *data = NULL;
    if (s->type == ELF_SHT_NOBITS) return 0;
    if (!elf_in_bounds(s->offset, s->size, f->len)) {
        elf_err(err, errlen, "truncated: section %u (%s) data at offset 0x%llx size 0x%llx extends "
                "past the end of the file (%zu bytes)", s->index, s->name,
                (unsigned long long)s->offset, (unsigned long long)s->size, f->len);
        return -1;
    }
    *data = f->buf + s->offset;
    return 0;
}

int elf_note_begin(const elf_file *f, const elf_section *s, elf_note_iter *it, char *err, size_t errlen)
{
    const unsigned char *data;
    if (elf_section_data(f, s, &data, err, errlen)) return -1;
    it->base = f->buf;
    it->pos = s->offset;
    it->end = data ? s->offset + s->size : s->offset;
    /* Notes are 4-byte aligned except in sections that ask for 8 (GNU property notes). */
    it->align = s->addralign == 8 ? 8 : 4;
    return 0;
}

/* x rounded up to a multiple of a (a power of two); x is at most 2^33 here, so no wrap. */
static uint64_t elf_align_up(uint64_t x, uint64_t a)
{
    return (x + a - 1) & ~(a - 1);
}

int elf_note_next(elf_note_iter *it, elf_note *n, char *err, size_t errlen)
{
    uint64_t left, desc_rel, next_rel;
    const unsigned char *p;
    if (it->pos >= it->end) return 0;
    left = it->end - it->pos;
    if (left < 12) {
        elf_err(err, errlen, "truncated note header at offset 0x%llx (%llu bytes left, need 12)",
                (unsigned long long)it->pos, (unsigned long long)left);
        return -1;
    }
    p = it->base + it->pos;
    n->namesz = elf_u32(p);
    n->descsz = elf_u32(p + 4);
    n->type = elf_u32(p + 8);
    n->offset = it->pos;
    /* Offsets relative to this note: name at 12, descriptor after the padded name. */
    desc_rel = elf_align_up(12 + (uint64_t)n->namesz, it->align);
    if (12 + (uint64_t)n->namesz > left || desc_rel + n->descsz > left) {
        elf_err(err, errlen, "note at offset 0x%llx: name size %u and descriptor size %u run past "
                "the end of the note section (%llu bytes left)", (unsigned long long)it->pos,
                n->namesz, n->descsz, (unsigned long long)left);
        return -1;
    }
    n->name = (const char *)p + 12;
    n->desc = p + desc_rel;
    next_rel = elf_align_up(desc_rel + n->descsz, it->align);
    it->pos += next_rel;        /* padding past the section end simply ends the walk */
    return 1;
}

int elf_note_owner_is(const elf_note *n, const char *owner)
{
    size_t k = strlen(owner);
    return n->namesz == k + 1 && memcmp(n->name, owner, k + 1) == 0;
}

int elf_symbol_count(const elf_file *f, const elf_section *symtab, uint32_t *count,
                     char *err, size_t errlen)
{
    const unsigned char *data;
    uint64_t n;
    if (symtab->entsize != ELF_SYM_SIZE) {
        elf_err(err, errlen, "symbol table (section %u) has entry size %llu, expected %d",
                symtab->index, (unsigned long long)symtab->entsize, ELF_SYM_SIZE);
        return -1;
    }
    if (elf_section_data(f, symtab, &data, err, errlen)) return -1;
    n = data ? symtab->size / ELF_SYM_SIZE : 0;
    *count = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
    return 0;
}

int elf_symbol_at(const elf_file *f, const elf_section *symtab, uint32_t i, elf_symbol *sym,
                  char *err, size_t errlen)
{
    const unsigned char *p;
    uint32_t count, name;
    char what[48];
    if (elf_symbol_count(f, symtab, &count, err, errlen)) return -1;
    if (i >= count) {
        elf_err(err, errlen, "symbol %u out of range (symbol table section %u has %u entries)",
                i, symtab->index, count);
        return -1;
    }
    p = f->buf + symtab->offset + (uint64_t)i * ELF_SYM_SIZE;
    name = elf_u32(p);
    sym->index = i;
    sym->info = p[4];
    sym->other = p[5];
    sym->shndx = elf_u16(p + 6);
    sym->value = elf_u64(p + 8);
    sym->size = elf_u64(p + 16);
    sym->name = "";
    if (name == 0) return 0;
    snprintf(what, sizeof what, "symbol %u", i);
    return elf_string(f, symtab->link, name, &sym->name, what, err, errlen);
}

typedef struct elf_names_ctx {
    char *err;
    size_t errlen;
    int n;
} elf_names_ctx;

/* Appends " a, b, c" to the not-found message. */
static int elf_name_list_cb(void *ctx, const char *name, size_t len)
{
    elf_names_ctx *c = ctx;
    elf_err_append(c->err, c->errlen, c->n++ ? ", " : " ");
    elf_err_append_name(c->err, c->errlen, name, len);
    return 0;
}

void elf_err_kernel_not_found(const void *buf, size_t len, const char *want, const char *what,
                              elf_list_kernels_fn list, char *err, size_t errlen)
{
    elf_names_ctx c = { err, errlen, 0 };
    int n = list(buf, len, NULL, NULL, err, errlen);
    if (n < 0) return;
    elf_err(err, errlen, "%s", "");
    if (want) {
        elf_err_append(err, errlen, "kernel '");
        elf_err_append_name(err, errlen, want, strlen(want));
        elf_err_append(err, errlen, "' not found; ");
    }
    if (n == 0) {
        elf_err_append(err, errlen, "the %s has no kernels", what);
        return;
    }
    elf_err_append(err, errlen, "the %s has %d kernel%s:", what, n, n == 1 ? "" : "s");
    list(buf, len, elf_name_list_cb, &c, NULL, 0);
}
