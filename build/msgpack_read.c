/* msgpack_read.c: the MessagePack reader; see msgpack_read.h and the format at
 * https://github.com/msgpack/msgpack/blob/master/spec.md. Multi-byte fields are big-endian. */
#include "msgpack_read.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void mp_init(mp_reader *r, const void *buf, size_t len, size_t base, char *err, size_t errlen)
{
    r->buf = buf;
    r->len = buf ? len : 0;
    r->pos = 0;
    r->base = base;
    r->err = err;
    r->errlen = errlen;
    r->failed = 0;
    if (err && errlen) err[0] = 0;
}

int mp_fail(mp_reader *r, size_t pos, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (r->failed) return -1;       /* keep the first fault: later ones are consequences */
    r->failed = 1;
    if (!r->err || !r->errlen) return -1;
    n = snprintf(r->err, r->errlen, "msgpack at offset 0x%zx: ", r->base + pos);
    if (n < 0 || (size_t)n >= r->errlen) return -1;
    va_start(ap, fmt);
    vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

const char *mp_type_name(mp_type t)
{
    static const char *const names[] = {
        "nil", "bool", "int", "uint", "float", "str", "bin", "array", "map", "ext"
    };
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

/* Make sure n more bytes are there; at is where the value being decoded started. */
static int mp_need(mp_reader *r, size_t at, uint64_t n)
{
    if (n > r->len - r->pos)
        return mp_fail(r, at, "truncated: value needs %llu more bytes at offset 0x%zx, %zu left",
                       (unsigned long long)n, r->base + r->pos, r->len - r->pos);
    return 0;
}

/* Big-endian unsigned field of n bytes (1, 2, 4 or 8) at the cursor; caller did mp_need. */
static uint64_t mp_take_be(mp_reader *r, int n)
{
    uint64_t x = 0;
    int i;
    for (i = 0; i < n; i++) x = x << 8 | r->buf[r->pos + i];
    r->pos += (size_t)n;
    return x;
}

/* Read an n-byte length/count field. */
static int mp_take_len(mp_reader *r, size_t at, int n, uint32_t *out)
{
    if (mp_need(r, at, (uint64_t)n)) return -1;
    *out = (uint32_t)mp_take_be(r, n);
    return 0;
}

/* Two's complement of an n-byte field as int64, without implementation-defined casts. */
static int64_t mp_signed(uint64_t x, int n)
{
    uint64_t sign = (uint64_t)1 << (8 * n - 1);
    if (!(x & sign)) return (int64_t)x;
    /* x - 2^(8n): computed as -(2^(8n) - x), where 0 < 2^(8n) - x <= 2^(8n-1). */
    {
        uint64_t mag = (n == 8) ? (~x + 1) : (((uint64_t)1 << (8 * n)) - x);
        if (mag == ((uint64_t)1 << 63)) return INT64_MIN;
        return -(int64_t)mag;
    }
}

/* Payload of len bytes (str, bin, ext) at the cursor. */
static int mp_take_bytes(mp_reader *r, mp_value *v, uint32_t len)
{
    if (mp_need(r, v->offset, len)) return -1;
    v->v.bytes.p = (const char *)r->buf + r->pos;
    v->v.bytes.len = len;
    r->pos += len;
    return 0;
}

static int mp_read_float(mp_reader *r, mp_value *v, int n)
{
    v->type = MP_FLOAT;
    if (mp_need(r, v->offset, (uint64_t)n)) return -1;
    if (n == 4) {
        uint32_t bits = (uint32_t)mp_take_be(r, 4);
        float f;
        memcpy(&f, &bits, sizeof f);    /* IEEE-754 binary32 on every host we build for */
        v->v.f = f;
    } else {
        uint64_t bits = mp_take_be(r, 8);
        memcpy(&v->v.f, &bits, sizeof v->v.f);
    }
    return 0;
}

static int mp_read_int(mp_reader *r, mp_value *v, int n, int is_signed)
{
    uint64_t x;
    if (mp_need(r, v->offset, (uint64_t)n)) return -1;
    x = mp_take_be(r, n);
    if (is_signed) {
        v->type = MP_INT;
        v->v.i = mp_signed(x, n);
    } else {
        v->type = MP_UINT;
        v->v.u = x;
    }
    return 0;
}

/* ext8/16/32 (lenbytes > 0: explicit length) and fixext (lenbytes == 0: length given). */
static int mp_read_ext(mp_reader *r, mp_value *v, int lenbytes, uint32_t len)
{
    v->type = MP_EXT;
    if (lenbytes && mp_take_len(r, v->offset, lenbytes, &len)) return -1;
    if (mp_need(r, v->offset, 1)) return -1;
    v->v.bytes.ext_type = (int8_t)mp_signed(r->buf[r->pos++], 1);
    return mp_take_bytes(r, v, len);
}

static int mp_read_sized(mp_reader *r, mp_value *v, mp_type t, int lenbytes)
{
    uint32_t n;
    v->type = t;
    if (mp_take_len(r, v->offset, lenbytes, &n)) return -1;
    if (t == MP_ARRAY || t == MP_MAP) {
        v->v.count = n;
        return 0;
    }
    return mp_take_bytes(r, v, n);
}

/* The formats whose first byte holds the value or length (fixint, fixmap, fixarray, fixstr). */
static int mp_read_fixed(mp_reader *r, mp_value *v, unsigned c)
{
    if (c <= 0x7f) {
        v->type = MP_UINT;
        v->v.u = c;
    } else if (c >= 0xe0) {
        v->type = MP_INT;
        v->v.i = (int64_t)c - 256;
    } else if (c <= 0x8f) {
        v->type = MP_MAP;
        v->v.count = c & 0x0f;
    } else if (c <= 0x9f) {
        v->type = MP_ARRAY;
        v->v.count = c & 0x0f;
    } else {
        v->type = MP_STR;
        return mp_take_bytes(r, v, c & 0x1f);
    }
    return 0;
}

int mp_read(mp_reader *r, mp_value *v)
{
    unsigned c;
    if (r->failed) return -1;
    v->offset = r->pos;
    if (r->pos >= r->len) return mp_fail(r, r->pos, "truncated: expected a value, found the end");
    c = r->buf[r->pos++];
    if (c <= 0xbf || c >= 0xe0) return mp_read_fixed(r, v, c);
    switch (c) {
    case 0xc0: v->type = MP_NIL; return 0;
    case 0xc2: case 0xc3: v->type = MP_BOOL; v->v.boolean = c == 0xc3; return 0;
    case 0xc4: return mp_read_sized(r, v, MP_BIN, 1);
    case 0xc5: return mp_read_sized(r, v, MP_BIN, 2);
    case 0xc6: return mp_read_sized(r, v, MP_BIN, 4);
    case 0xc7: return mp_read_ext(r, v, 1, 0);
    case 0xc8: return mp_read_ext(r, v, 2, 0);
    case 0xc9: return mp_read_ext(r, v, 4, 0);
    case 0xca: return mp_read_float(r, v, 4);
    case 0xcb: return mp_read_float(r, v, 8);
    case 0xcc: return mp_read_int(r, v, 1, 0);
    case 0xcd: return mp_read_int(r, v, 2, 0);
    case 0xce: return mp_read_int(r, v, 4, 0);
    case 0xcf: return mp_read_int(r, v, 8, 0);
    case 0xd0: return mp_read_int(r, v, 1, 1);
    case 0xd1: return mp_read_int(r, v, 2, 1);
    case 0xd2: return mp_read_int(r, v, 4, 1);
    case 0xd3: return mp_read_int(r, v, 8, 1);
    case 0xd4: return mp_read_ext(r, v, 0, 1);
    case 0xd5: return mp_read_ext(r, v, 0, 2);
    case 0xd6: return mp_read_ext(r, v, 0, 4);
    case 0xd7: return mp_read_ext(r, v, 0, 8);
    case 0xd8: return mp_read_ext(r, v, 0, 16);
    case 0xd9: return mp_read_sized(r, v, MP_STR, 1);
    case 0xda: return mp_read_sized(r, v, MP_STR, 2);
    case 0xdb: return mp_read_sized(r, v, MP_STR, 4);
    case 0xdc: return mp_read_sized(r, v, MP_ARRAY, 2);
    case 0xdd: return mp_read_sized(r, v, MP_ARRAY, 4);
    case 0xde: return mp_read_sized(r, v, MP_MAP, 2);
    case 0xdf: return mp_read_sized(r, v, MP_MAP, 4);
    default:   return mp_fail(r, v->offset, "invalid type byte 0x%02x", c);   /* 0xc1 */
    }
}

/* Skip one value at nesting depth depth. Each element takes at least one byte, so a count
 * larger than the bytes left is rejected before looping over it. */
static int mp_skip_at(mp_reader *r, int depth)
{
    mp_value v;
    uint64_t items, i;
    if (mp_read(r, &v)) return -1;
    if (v.type != MP_ARRAY && v.type != MP_MAP) return 0;
    if (depth >= MP_MAX_DEPTH)
        return mp_fail(r, v.offset, "containers nested deeper than %d", MP_MAX_DEPTH);
    items = v.type == MP_MAP ? 2 * (uint64_t)v.v.count : v.v.count;
    if (items > r->len - r->pos)
        return mp_fail(r, v.offset, "truncated: %s of %u entries cannot fit in the %zu bytes left",
                       mp_type_name(v.type), v.v.count, r->len - r->pos);
    for (i = 0; i < items; i++)
        if (mp_skip_at(r, depth + 1)) return -1;
    return 0;
}

int mp_skip(mp_reader *r)
{
    return mp_skip_at(r, 0);
}

int mp_str_eq(const mp_value *v, const char *s)
{
    size_t n = strlen(s);
    return v->type == MP_STR && v->v.bytes.len == n && memcmp(v->v.bytes.p, s, n) == 0;
}

int mp_to_int64(const mp_value *v, int64_t *out)
{
    if (v->type == MP_INT) {
        *out = v->v.i;
        return 0;
    }
    if (v->type == MP_UINT && v->v.u <= (uint64_t)INT64_MAX) {
        *out = (int64_t)v->v.u;
        return 0;
    }
    return -1;
}
