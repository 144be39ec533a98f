/* sha256.h: SHA-256 (FIPS 180-4), used to key the compile cache by content and to name code objects. */
#ifndef KT_SHA256_H
#define KT_SHA256_H
#include <stddef.h>
#include <stdint.h>

typedef struct sha256_ctx {
    uint32_t h[8];
    uint64_t len;        /* bytes hashed so far */
    uint8_t block[64];
    size_t fill;         /* bytes waiting in block */
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t n);
void sha256_final(sha256_ctx *c, uint8_t digest[32]);
/* One-shot digest as 64 lowercase hex characters plus NUL. */
void sha256_hex(const void *data, size_t n, char hex[65]);
/* Finish c into hex. */
void sha256_final_hex(sha256_ctx *c, char hex[65]);

#endif
