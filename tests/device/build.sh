#!/bin/sh
# build.sh: builds the device checks into out/device and runs their CPU-only parts. Run from the
# repository root.
#
#  - out/device/gemm_check (tests/device/gemm_check.c): the generator's GEMM variants against a
#    float64 reference. It needs only a C11 compiler: no CUDA toolkit (the driver is opened with
#    dlopen at run time) and no library beyond libc/libm/libdl, so the binary built here runs on
#    the GPU machine as it is (glibc is forward compatible: built on Debian 12, it runs on Ubuntu
#    24.04). Not static: a static glibc cannot reliably dlopen the machine's libcuda.so.1.
#  - out/device/ktrt_check (tests/device/ktrt_check.c): libktrt through its public API. Linked
#    with out/lib/libktrt.a and libsqlite3 only (the GPU machine has libsqlite3.so.0), which
#    proves the serving library works without the rest of ktune.
set -eu
CC=${CC:-cc}
mkdir -p out/device

# Fails when $1 needs a shared library outside the list of allowed sonames ($2, extended regex).
only_needs() {
    extra=$(ldd "$1" | awk '{print $1}' | grep -v -E "^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libdl\.so\.2|/lib64/ld-linux-x86-64\.so\.2|/lib/ld-linux-aarch64\.so\.1${2:+|$2})\$" || true)
    if [ -n "$extra" ]; then
        echo "build.sh: $1 needs libraries the GPU machine may lack:" $extra >&2
        exit 1
    fi
}

$CC -std=c11 -O2 -Wall -Wextra -I. -o out/device/gemm_check \
    tests/device/gemm_check.c runtime/cuda_driver.c -ldl -lm
only_needs out/device/gemm_check ""
# The CPU-only self-test: conversions, the reference against a long double Kahan sum, the checker.
if ! st=$(out/device/gemm_check --selftest); then
    printf '%s\n' "$st" >&2
    exit 1
fi
printf '%s\n' "$st" | tail -n 1
echo "built out/device/gemm_check"

make -s out/lib/libktrt.a
$CC -std=c11 -O2 -Wall -Wextra -I. -o out/device/ktrt_check \
    tests/device/ktrt_check.c out/lib/libktrt.a -lsqlite3 -ldl -lm -lpthread
only_needs out/device/ktrt_check 'libsqlite3\.so\.0|libpthread\.so\.0'
out/device/ktrt_check --help > /dev/null
echo "built out/device/ktrt_check"
