/* elf.h: the few ELF64 little-endian reading helpers the code-object readers share.
 *
 * Nothing here trusts the file: every offset and size read from it is checked against the
 * buffer before a byte is touched, and fields are assembled byte by byte, so unaligned or
 * truncated input is an error message, never a crash. Only what the AMDGPU and cubin
 * readers need is here: the file header, section headers, section data, notes, symbols.
 *
 * Errors: functions that can fail take (err, errlen) and write one line naming the fault
 * and the file offset involved; the caller prefixes the file path. err may be NULL.
 *
 * Note for includers: this is build/elf.h, not the system <elf.h>; it defines no Elf64_*
 * types, only the elf_ prefix. */
#ifndef KT_ELF_H
#define KT_ELF_H

#include <stddef.h>
#include <stdint.h>

#define ELF_EM_CUDA   190
#define ELF_EM_AMDGPU 224

#define ELF_SHT_SYMTAB  2
#define ELF_SHT_NOTE    7
#define ELF_SHT_NOBITS  8

typedef struct elf_file {
    const unsigned char *buf;
    size_t len;
    uint16_t type;          /* e_type */
    uint16_t machine;       /* e_machine */
    uint32_t flags;         /* e_flags */
    uint8_t osabi;          /* e_ident[EI_OSABI] */
    uint8_t abiversion;     /* e_ident[EI_ABIVERSION] */
    uint64_t shoff;         /* section header table offset, checked to lie inside buf */
    uint32_t shnum;         /* number of section headers (0 when there is no table) */
    uint32_t shstrndx;      /* index of the section name string table */
} elf_file;

typedef struct elf_section {
    uint32_t index;
    const char *name;       /* NUL-terminated inside buf; "" when the section has no name */
    uint32_t type;
    uint64_t flags;
    uint64_t offset;
    uint64_t size;
    uint32_t link;
    uint32_t info;
    uint64_t addralign;
    uint64_t entsize;
} elf_section;

typedef struct elf_note {
    const char *name;       /* owner name bytes, namesz long (includes the NUL when present) */
    uint32_t namesz;
    uint32_t type;
    const unsigned char *desc;
    uint32_t descsz;
    uint64_t offset;        /* file offset of the note header, for messages */
} elf_note;

typedef struct elf_note_iter {
    const unsigned char *base;  /* file buffer */
    uint64_t pos;               /* file offset of the next note */
    uint64_t end;               /* file offset just past the note section */
    uint64_t align;             /* 4 or 8: note fields are padded to this */
} elf_note_iter;

typedef struct elf_symbol {
    uint32_t index;
    const char *name;       /* NUL-terminated inside buf */
    uint8_t info;           /* st_info: binding << 4 | type */
    uint8_t other;          /* st_other (CUDA marks kernel entries here) */
    uint16_t shndx;
    uint64_t value;
    uint64_t size;
} elf_symbol;

/* Callback the readers use to list kernel names: name is len bytes, not necessarily
 * NUL-terminated. Return nonzero to stop the listing early. */
typedef int (*elf_kernel_fn)(void *ctx, const char *name, size_t len);

/* Little-endian loads from a byte pointer; the caller has already bounds-checked p. */
uint16_t elf_u16(const unsigned char *p);
uint32_t elf_u32(const unsigned char *p);
uint64_t elf_u64(const unsigned char *p);

/* printf into err (when non-NULL), and append to what is already there. */
void elf_err(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void elf_err_append(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Append n bytes of an untrusted name, replacing anything unprintable with '?'. */
void elf_err_append_name(char *err, size_t errlen, const char *name, size_t n);

/* A reader's kernel lister (elf_amdgpu_list_kernels, elf_cubin_list_kernels). */
typedef int (*elf_list_kernels_fn)(const void *buf, size_t len, elf_kernel_fn fn, void *ctx,
                                   char *err, size_t errlen);

/* The message for a lookup that found nothing: names the kernel `want` and lists what `what`
 * ("code object", "cubin") holds. Only called after a clean walk, so listing cannot fault. */
void elf_err_kernel_not_found(const void *buf, size_t len, const char *want, const char *what,
                              elf_list_kernels_fn list, char *err, size_t errlen);

/* Check the ELF64 little-endian header and the section header table's bounds; fill f. */
int elf_open(elf_file *f, const void *buf, size_t len, char *err, size_t errlen);
/* Same, and also require e_machine == machine; what names the expected kind in messages. */
int elf_open_machine(elf_file *f, const void *buf, size_t len, uint16_t machine,
                     const char *what, char *err, size_t errlen);

/* Read section header i (0 <= i < f->shnum), resolving its name. */
int elf_section_at(const elf_file *f, uint32_t i, elf_section *s, char *err, size_t errlen);
/* Find the first section called name: 1 found, 0 absent, -1 error. */
int elf_section_find(const elf_file *f, const char *name, elf_section *s, char *err, size_t errlen);
/* Point *data at the section's bytes after checking they lie inside the file.
 * NOBITS sections have no bytes in the file: *data is set to NULL and 0 returned. */
int elf_section_data(const elf_file *f, const elf_section *s, const unsigned char **data,
                     char *err, size_t errlen);

/* Iterate the notes of one SHT_NOTE section: elf_note_begin, then elf_note_next until it
 * returns 0 (end) or -1 (malformed note; err says where). */
int elf_note_begin(const elf_file *f, const elf_section *s, elf_note_iter *it, char *err, size_t errlen);
int elf_note_next(elf_note_iter *it, elf_note *n, char *err, size_t errlen);
/* True when the note's owner name is exactly owner (with its terminating NUL). */
int elf_note_owner_is(const elf_note *n, const char *owner);

/* Symbol i of symbol table section symtab (names from its sh_link string table). */
int elf_symbol_at(const elf_file *f, const elf_section *symtab, uint32_t i, elf_symbol *sym,
                  char *err, size_t errlen);
/* Number of entries in symbol table section symtab (after checking its entry size). */
int elf_symbol_count(const elf_file *f, const elf_section *symtab, uint32_t *count,
                     char *err, size_t errlen);

#endif
