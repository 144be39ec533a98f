/* msgpack_read.h: a minimal, bounds-checked MessagePack reader (enough for the AMDGPU
 * code-object metadata note). It never allocates: a reader is a cursor over a caller's
 * buffer, mp_read decodes the header of the next value, mp_skip steps over a whole value.
 *
 * Containers are streamed, not built: after mp_read returns an MP_ARRAY of n elements, the
 * next n values in the stream are its elements (2n for an MP_MAP: key, value, key, ...).
 * Nesting is bounded by MP_MAX_DEPTH in mp_skip, so hostile input cannot exhaust the stack.
 *
 * Errors: the first fault is written to the reader's err buffer with the offset at which it
 * happened (base + position, so messages can name file offsets) and every call returns -1. */
#ifndef KT_MSGPACK_READ_H
#define KT_MSGPACK_READ_H

#include <stddef.h>
#include <stdint.h>

#define MP_MAX_DEPTH 32

typedef enum mp_type {
    MP_NIL, MP_BOOL, MP_INT, MP_UINT, MP_FLOAT, MP_STR, MP_BIN, MP_ARRAY, MP_MAP, MP_EXT
} mp_type;

typedef struct mp_value {
    mp_type type;
    size_t offset;              /* position of the value's first byte, relative to the buffer */
    union {
        int boolean;            /* MP_BOOL */
        int64_t i;              /* MP_INT: the signed encodings (int8..int64, negative fixint) */
        uint64_t u;             /* MP_UINT: the unsigned encodings (positive fixint, uint8..uint64) */
        double f;               /* MP_FLOAT: float32 is widened exactly */
        struct {
            const char *p;      /* payload inside the buffer, not NUL-terminated */
            uint32_t len;
            int8_t ext_type;    /* MP_EXT only */
        } bytes;                /* MP_STR, MP_BIN, MP_EXT */
        uint32_t count;         /* MP_ARRAY: elements; MP_MAP: key/value pairs */
    } v;
} mp_value;

typedef struct mp_reader {
    const unsigned char *buf;
    size_t len;
    size_t pos;
    size_t base;                /* added to positions in messages (e.g. the note's file offset) */
    char *err;
    size_t errlen;
    int failed;
} mp_reader;

void mp_init(mp_reader *r, const void *buf, size_t len, size_t base, char *err, size_t errlen);

/* Decode the next value's header into v. Scalars, strings, bin and ext are consumed whole;
 * for arrays and maps only the header is consumed. 0 on success, -1 on a fault. */
int mp_read(mp_reader *r, mp_value *v);

/* Step over the next complete value, containers included. 0 or -1. */
int mp_skip(mp_reader *r);

/* True when v is a string equal to s. */
int mp_str_eq(const mp_value *v, const char *s);

/* The value of an MP_INT or MP_UINT as int64; -1 when v is another type or does not fit. */
int mp_to_int64(const mp_value *v, int64_t *out);

/* Record a fault found by the caller (e.g. a wrong type) at position pos of the buffer,
 * in the same format and under the same first-fault rule as the reader's own. Returns -1. */
int mp_fail(mp_reader *r, size_t pos, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Name of a type, for messages. */
const char *mp_type_name(mp_type t);

#endif
