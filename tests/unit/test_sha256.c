/* test_sha256: FIPS 180-4 example vectors, and that chunked updates equal one-shot. */
#include <stdlib.h>
#include "kt_test.h"
#include "build/sha256.h"

int main(void)
{
    char hex[65];
    sha256_hex("", 0, hex);
    KT_CHECK(strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0);
    sha256_hex("abc", 3, hex);
    KT_CHECK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0);
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha256_hex(two, strlen(two), hex);
    KT_CHECK(strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0);

    /* one million 'a': exercises many blocks and the length encoding */
    char *mil = malloc(1000000);
    memset(mil, 'a', 1000000);
    sha256_hex(mil, 1000000, hex);
    KT_CHECK(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0);
    sha256_ctx c;
    char hex2[65];
    sha256_init(&c);
    for (size_t off = 0, step = 1; off < 1000000; off += step, step = step * 3 % 1000 + 1)
        sha256_update(&c, mil + off, off + step > 1000000 ? 1000000 - off : step);
    sha256_final_hex(&c, hex2);
    KT_CHECK(strcmp(hex, hex2) == 0);
    free(mil);
    KT_TEST_END();
}
